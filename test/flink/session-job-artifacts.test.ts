/**
 * Fetching a session job's jar (src/flink/session-job-artifacts.ts) from local HTTP servers, files
 * and nothing, with the Apache operator's behaviour as reference: HttpArtifactFetcher (GET with the
 * `kubernetes.operator.user.artifacts.http.header` headers), AbstractFlinkService.findJarURI (no
 * jarURI → an empty jar named empty.jar) and DefaultValidator.validateJarURI (restricted hosts,
 * allowed schemes).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  EMPTY_JAR_FILE_NAME,
  fetchSessionJobJar,
  parseArtifactHttpHeaders,
  restrictedAddressKind,
  SessionJobArtifactError,
  type SessionJobJarFetchOptions,
} from '../../src/flink/session-job-artifacts.js';

const JAR = Buffer.concat([Buffer.from('PK\u0003\u0004'), Buffer.alloc(3000, 7)]);

interface Served {
  path: string;
  headers: http.IncomingHttpHeaders;
}

/** A loopback HTTP server: `/jobs/app.jar` serves JAR, `/big` 3 000 bytes chunked, `/moved` redirects, `/hang` never answers, else 404. */
async function startJarServer(other?: string): Promise<{ url: string; served: Served[]; stop: () => Promise<void> }> {
  const served: Served[] = [];
  const server = http.createServer((req, res) => {
    served.push({ path: req.url ?? '', headers: req.headers });
    if (req.url === '/jobs/app.jar') res.writeHead(200, { 'Content-Type': 'application/java-archive', 'Content-Length': JAR.length }).end(JAR);
    else if (req.url === '/big') {
      res.writeHead(200, { 'Content-Type': 'application/java-archive' }); // chunked: no length announced
      res.write(JAR.subarray(0, 1500));
      res.end(JAR.subarray(1500));
    } else if (req.url === '/moved') res.writeHead(302, { Location: '/jobs/app.jar' }).end();
    else if (req.url === '/elsewhere' && other) res.writeHead(307, { Location: `${other}/jobs/app.jar` }).end();
    else if (req.url === '/hang') return;
    else res.writeHead(404).end('not here');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    served,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

let jars: Awaited<ReturnType<typeof startJarServer>>;
before(async () => {
  jars = await startJarServer();
});
after(async () => {
  await jars.stop();
});

/** Loopback test servers: restricted hosts allowed, http allowed. */
const LOCAL: SessionJobJarFetchOptions = { allowedSchemes: ['http', 'https'], allowRestrictedHosts: true, timeoutMs: 5_000 };

async function failure(promise: Promise<unknown>): Promise<SessionJobArtifactError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof SessionJobArtifactError, `expected a SessionJobArtifactError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected the fetch to fail');
}

test('an http jarURI is fetched, and uploaded under its file name', async () => {
  const jar = await fetchSessionJobJar(`${jars.url}/jobs/app.jar`, LOCAL);
  assert.deepEqual(Buffer.from(jar.bytes), JAR);
  assert.equal(jar.fileName, 'app.jar');
});

test('the same loopback URI is refused when restricted hosts are not allowed, naming the address and the setting', async () => {
  const before = jars.served.length;
  const error = await failure(fetchSessionJobJar(`${jars.url}/jobs/app.jar`, { ...LOCAL, allowRestrictedHosts: false }));
  assert.equal(error.reason, 'restricted-address');
  assert.match(error.message, /^jarURI http:\/\/127\.0\.0\.1:\d+\/jobs\/app\.jar: host 127\.0\.0\.1 is a loopback address;/);
  assert.match(error.message, /kubernetes\.operator\.user\.artifacts\.disallow-restricted-hosts: false/);
  assert.equal(jars.served.length, before, 'nothing was requested');
});

test('a host name is checked on every address it resolves to, and the connection goes only to a checked address', async () => {
  // The cloud metadata service hidden behind an ordinary first address (the Apache validator checks only the first).
  const metadata: SessionJobJarFetchOptions['lookup'] = async () => [
    { address: '203.0.113.10', family: 4 },
    { address: '169.254.169.254', family: 4 },
  ];
  const refused = await failure(fetchSessionJobJar('https://jars.example.test/app.jar', { lookup: metadata }));
  assert.equal(refused.reason, 'restricted-address');
  assert.match(refused.message, /host jars\.example\.test resolves to 169\.254\.169\.254, a link-local address/);

  // A name no DNS knows, resolved (by the injected lookup) to the loopback server: the socket uses that answer.
  const { port } = new URL(jars.url);
  const pinned = await fetchSessionJobJar(`http://jars.example.test:${port}/jobs/app.jar`, {
    ...LOCAL,
    lookup: async () => [{ address: '127.0.0.1', family: 4 }],
  });
  assert.deepEqual(Buffer.from(pinned.bytes), JAR);
  assert.equal(jars.served.at(-1)?.headers.host, `jars.example.test:${port}`);
});

test('restricted address kinds: loopback, link-local, private, unspecified, multicast, IPv4-mapped IPv6; public addresses pass', () => {
  const kinds = Object.fromEntries(
    [
      '127.0.0.1',
      '::1',
      '169.254.169.254',
      'fe80::1%eth0',
      '10.1.2.3',
      '172.31.255.255',
      '192.168.0.1',
      'fd00::1',
      '0.0.0.0',
      '::',
      '224.0.0.251',
      'ff02::1',
      '::ffff:127.0.0.1',
      '::ffff:a9fe:a9fe',
      '172.32.0.1',
      '8.8.8.8',
      '2001:db8::1',
    ].map((a) => [a, restrictedAddressKind(a) ?? 'public']),
  );
  assert.deepEqual(kinds, {
    '127.0.0.1': 'loopback',
    '::1': 'loopback',
    '169.254.169.254': 'link-local',
    'fe80::1%eth0': 'link-local',
    '10.1.2.3': 'private',
    '172.31.255.255': 'private',
    '192.168.0.1': 'private',
    'fd00::1': 'private',
    '0.0.0.0': 'unspecified',
    '::': 'unspecified',
    '224.0.0.251': 'multicast',
    'ff02::1': 'multicast',
    '::ffff:127.0.0.1': 'loopback',
    '::ffff:a9fe:a9fe': 'link-local',
    '172.32.0.1': 'public',
    '8.8.8.8': 'public',
    '2001:db8::1': 'public',
  });
});

test('a 404 is an error naming the jarURI and the status', async () => {
  const error = await failure(fetchSessionJobJar(`${jars.url}/jobs/missing.jar`, LOCAL));
  assert.equal(error.reason, 'http-status');
  assert.equal(error.status, 404);
  assert.match(error.message, /^jarURI http:\/\/127\.0\.0\.1:\d+\/jobs\/missing\.jar: GET answered 404 Not Found$/);
});

test('a jar larger than maxBytes is refused, whether its length is announced or not', async () => {
  const announced = await failure(fetchSessionJobJar(`${jars.url}/jobs/app.jar`, { ...LOCAL, maxBytes: 1024 }));
  assert.equal(announced.reason, 'too-large');
  assert.match(announced.message, new RegExp(`the jar is ${JAR.length} bytes, more than the 1024 allowed`));
  const chunked = await failure(fetchSessionJobJar(`${jars.url}/big`, { ...LOCAL, maxBytes: 1024 }));
  assert.equal(chunked.reason, 'too-large');
  assert.equal(Buffer.from((await fetchSessionJobJar(`${jars.url}/big`, { ...LOCAL, maxBytes: JAR.length })).bytes).length, JAR.length);
});

test('the header setting is parsed as Flink reads a map option, and the headers are sent', async () => {
  const headers = parseArtifactHttpHeaders("Authorization:'Bearer a:b', X-Team : flink ,'X-List:''a,b'''");
  assert.deepEqual(headers, { Authorization: 'Bearer a:b', 'X-Team': 'flink', 'X-List': 'a,b' });
  assert.deepEqual(parseArtifactHttpHeaders(undefined), {});
  assert.throws(
    () => parseArtifactHttpHeaders('Authorization'),
    /kubernetes\.operator\.user\.artifacts\.http\.header: "Authorization" is not a header:value pair/,
  );
  assert.throws(() => parseArtifactHttpHeaders("X:'open"), /not closed/);

  await fetchSessionJobJar(`${jars.url}/jobs/app.jar`, { ...LOCAL, httpHeaders: { Authorization: 'Bearer a:b', 'X-Team': 'flink' } });
  const seen = jars.served.at(-1)!.headers;
  assert.equal(seen.authorization, 'Bearer a:b');
  assert.equal(seen['x-team'], 'flink');
  const bad = await failure(fetchSessionJobJar(`${jars.url}/jobs/app.jar`, { ...LOCAL, httpHeaders: { 'X-Bad': 'a\nb' } }));
  assert.equal(bad.reason, 'invalid-header');
});

test('redirects are followed; the headers go to the jarURI origin only', async () => {
  const followed = await fetchSessionJobJar(`${jars.url}/moved`, { ...LOCAL, httpHeaders: { Authorization: 'Bearer t' } });
  assert.deepEqual(Buffer.from(followed.bytes), JAR);
  assert.equal(followed.fileName, 'moved.jar', 'named after the jarURI, with .jar added (Flink takes only .jar names)');
  assert.equal(jars.served.at(-1)?.headers.authorization, 'Bearer t', 'same origin: headers kept');

  const front = await startJarServer(jars.url);
  try {
    const crossed = await fetchSessionJobJar(`${front.url}/elsewhere`, { ...LOCAL, httpHeaders: { Authorization: 'Bearer t' } });
    assert.deepEqual(Buffer.from(crossed.bytes), JAR);
    assert.equal(front.served.at(-1)?.headers.authorization, 'Bearer t');
    assert.equal(jars.served.at(-1)?.headers.authorization, undefined, 'another origin: no headers');
  } finally {
    await front.stop();
  }
  const toFtp = await startJarServer('ftp://repo.example.com');
  try {
    const refused = await failure(fetchSessionJobJar(`${toFtp.url}/elsewhere`, LOCAL));
    assert.equal(refused.reason, 'scheme-not-allowed');
    assert.match(refused.message, /redirected to ftp:\/\/repo\.example\.com\/jobs\/app\.jar, which is not followed/);
  } finally {
    await toFtp.stop();
  }
});

test('a jar that does not arrive within timeoutMs fails with a timeout', async () => {
  const started = Date.now();
  const error = await failure(fetchSessionJobJar(`${jars.url}/hang`, { ...LOCAL, timeoutMs: 150 }));
  assert.equal(error.reason, 'timeout');
  assert.match(error.message, /not fetched within 150 ms/);
  assert.ok(Date.now() - started < 2_000);
});

// PKWARE APPNOTE.TXT 4.3.16: the end of central directory record, signature 0x06054b50, then disk
// numbers, entry counts, central directory size and offset, comment length. A zip reader finds it
// in the last 22 bytes; here every count is 0, so the zip is valid and holds nothing.
test('no jarURI: an empty but valid jar named empty.jar (as the Apache findJarURI / EMPTY_JAR)', async () => {
  const jar = await fetchSessionJobJar(undefined);
  assert.equal(jar.fileName, EMPTY_JAR_FILE_NAME);
  assert.equal(jar.fileName, 'empty.jar');
  const bytes = Buffer.from(jar.bytes);
  assert.equal(bytes.length, 22);
  assert.equal(bytes.readUInt32LE(0), 0x06054b50, 'end of central directory signature');
  assert.deepEqual(
    [
      bytes.readUInt16LE(4),
      bytes.readUInt16LE(6),
      bytes.readUInt16LE(8),
      bytes.readUInt16LE(10),
      bytes.readUInt32LE(12),
      bytes.readUInt32LE(16),
      bytes.readUInt16LE(20),
    ],
    [0, 0, 0, 0, 0, 0, 0],
    'disk 0, no entries, empty central directory at offset 0, no comment',
  );
});

test('schemes: not allowed ones name the allowed list; allowed but unfetchable ones say to serve the jar over https', async () => {
  const ftp = await failure(fetchSessionJobJar('ftp://repo.example.com/job.jar'));
  assert.equal(ftp.reason, 'scheme-not-allowed');
  assert.match(
    ftp.message,
    /^jarURI ftp:\/\/repo\.example\.com\/job\.jar: scheme ftp is not allowed \(allowed: https\);.*kubernetes\.operator\.user\.artifacts\.allowed-schemes/,
  );
  const plainHttp = await failure(fetchSessionJobJar(`${jars.url}/jobs/app.jar`));
  assert.equal(plainHttp.reason, 'scheme-not-allowed', 'https only by default');

  const s3 = await failure(fetchSessionJobJar('s3://bucket/jobs/job.jar', { allowedSchemes: ['https', 's3'] }));
  assert.equal(s3.reason, 'unsupported-scheme');
  assert.match(s3.message, /^jarURI s3:\/\/bucket\/jobs\/job\.jar: this operator cannot fetch s3:\/\/ jars .*serve the jar over https/);

  const bad = await failure(fetchSessionJobJar('not a uri'));
  assert.equal(bad.reason, 'invalid-uri');
  const secret = await failure(fetchSessionJobJar('ftp://user:hunter2@repo.example.com/job.jar'));
  assert.doesNotMatch(secret.message, /hunter2/);
});

test('file:// jars are read from the operator filesystem only when file is allowed', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'session-job-jar-'));
  try {
    const path = join(dir, 'local job.jar');
    await writeFile(path, JAR);
    const uri = pathToFileURL(path).href;
    const jar = await fetchSessionJobJar(uri, { allowedSchemes: ['https', 'file'] });
    assert.deepEqual(Buffer.from(jar.bytes), JAR);
    assert.equal(jar.fileName, 'local_job.jar');
    assert.equal((await failure(fetchSessionJobJar(uri))).reason, 'scheme-not-allowed');
    const missing = await failure(fetchSessionJobJar(pathToFileURL(join(dir, 'gone.jar')).href, { allowedSchemes: ['file'] }));
    assert.equal(missing.reason, 'file');
    assert.match(missing.message, /no file .*gone\.jar on the operator's filesystem/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
