/**
 * Fetching a FlinkSessionJob's jar (`spec.job.jarURI`) so that it can be uploaded to the session
 * cluster (FlinkRestClient.uploadJar), as the Apache operator's ArtifactManager and
 * HttpArtifactFetcher do, with the limits an operator fetching user-given URIs needs.
 *
 *   const { bytes, fileName } = await fetchSessionJobJar(spec.job.jarURI, { allowedSchemes, httpHeaders });
 *   const jarId = await flink.uploadJar(bytes, fileName);
 *
 * - No jarURI: an empty jar named `empty.jar` (a zip holding no entry), so the run's `entryClass` is
 *   loaded from the session cluster's classpath, as the Apache operator's `findJarURI` → EMPTY_JAR.
 *   Flink's JarUploadHandler only checks that the file name ends in `.jar`.
 * - `http`, `https`: one GET (redirects followed), `httpHeaders` sent to the jarURI's origin.
 * - `file`: read from the operator's own filesystem.
 * - Any other scheme (s3, gs, hdfs, ...): refused, with what to do instead. The Apache operator reads
 *   them through a Flink filesystem plugin in its image; this operator has none.
 * Every scheme must also be in `allowedSchemes` (default https only, as validation's
 * DEFAULT_SESSION_JOB_JAR_SCHEMES and the Apache `kubernetes.operator.user.artifacts.allowed-schemes`).
 *
 * Guarantees:
 * - Unless `allowRestrictedHosts`, no connection to a restricted address (loopback, link-local
 *   including the 169.254.169.254 metadata service, private, unspecified, multicast; IPv4-mapped
 *   IPv6 forms too): EVERY address the host resolves to is checked, the connection goes only to
 *   those checked addresses (no second DNS lookup whose answer could differ), and every redirect hop
 *   is checked the same way. The Apache operator's `kubernetes.operator.user.artifacts.
 *   disallow-restricted-hosts` (default true, since 1.15) checks only in validation, and only the
 *   first address.
 * - Settles within `timeoutMs` (DNS, redirects and body included) and never holds more than
 *   `maxBytes` of body (a larger Content-Length is refused before reading).
 * - Failures are SessionJobArtifactError: a `reason` for the caller, a message that names the jarURI
 *   (its password masked), what went wrong and what to do.
 * - https redirects never downgrade to http; a redirect to another origin drops `httpHeaders` (a
 *   credential for the artifact repository must not reach, e.g., the object store it redirects to).
 *
 * Assumptions: `httpHeaders` is the effective `kubernetes.operator.user.artifacts.http.header`
 * (the session job's flinkConfiguration over the operator's, as the Apache FlinkConfigManager
 * overlays them), read with parseArtifactHttpHeaders.
 *
 * Caveats:
 * - The whole jar is held in memory (hence `maxBytes`); nothing is cached: every call fetches again.
 * - Restricted ranges are recognised by address, not by route: NAT64/6to4 forms of a restricted IPv4
 *   address, and public addresses that route into the cluster, are not. HTTP(S) proxies
 *   (HTTPS_PROXY) are not used.
 * - Allowing `file` lets whoever writes session jobs upload any file the operator can read to their
 *   session cluster, where their job code can read it.
 */
import { promises as dns, type LookupAddress } from 'node:dns';
import { promises as fs } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { fileURLToPath } from 'node:url';
import { DEFAULT_SESSION_JOB_JAR_SCHEMES } from '../api/flink-session-job-validation.js';

/** The Apache operator's setting of the headers sent with an http(s) jar fetch (Flink map syntax). */
export const ARTIFACT_HTTP_HEADER_KEY = 'kubernetes.operator.user.artifacts.http.header';
/** The Apache operator's setting that refuses restricted hosts (default true): our `allowRestrictedHosts` is its negation. */
export const DISALLOW_RESTRICTED_HOSTS_KEY = 'kubernetes.operator.user.artifacts.disallow-restricted-hosts';
/** The Apache operator's setting of the jarURI schemes allowed (default https). */
export const ALLOWED_SCHEMES_KEY = 'kubernetes.operator.user.artifacts.allowed-schemes';

/** The file name of the jar uploaded for a session job without jarURI (the Apache operator's EMPTY_JAR_FILENAME). */
export const EMPTY_JAR_FILE_NAME = 'empty.jar';
export const DEFAULT_JAR_FETCH_TIMEOUT_MS = 120_000;
export const DEFAULT_MAX_JAR_BYTES = 200 * 1024 * 1024;
export const DEFAULT_MAX_JAR_REDIRECTS = 10;

const USER_AGENT = 'flink-operator-ts';
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

export interface SessionJobJarFetchOptions {
  /** jarURI schemes the operator allows (case-insensitive); default {@link DEFAULT_SESSION_JOB_JAR_SCHEMES} (https). */
  readonly allowedSchemes?: readonly string[];
  /** Fetch from restricted addresses too (default false; see the module comment). */
  readonly allowRestrictedHosts?: boolean;
  /** Deadline of the whole fetch, in ms (default {@link DEFAULT_JAR_FETCH_TIMEOUT_MS}). */
  readonly timeoutMs?: number;
  /** Largest jar accepted, in bytes (default {@link DEFAULT_MAX_JAR_BYTES}, 200 MiB). */
  readonly maxBytes?: number;
  /** Redirects followed at most (default {@link DEFAULT_MAX_JAR_REDIRECTS}). */
  readonly maxRedirects?: number;
  /** Headers of an http(s) fetch (parseArtifactHttpHeaders reads the Apache setting). */
  readonly httpHeaders?: Readonly<Record<string, string>>;
  /** Resolves a host name to all its addresses; default node:dns `lookup` with `all: true`. */
  readonly lookup?: (hostname: string) => Promise<readonly LookupAddress[]>;
}

export interface SessionJobJar {
  readonly bytes: Uint8Array;
  /** The name to upload the jar under: ends in `.jar`, letters, digits, `.`, `_` and `-` only. */
  readonly fileName: string;
}

export type SessionJobArtifactFailure =
  | 'invalid-uri'
  | 'scheme-not-allowed'
  | 'unsupported-scheme'
  | 'invalid-header'
  | 'unresolvable-host'
  | 'restricted-address'
  | 'connection'
  | 'timeout'
  | 'http-status'
  | 'too-large'
  | 'file';

/** A jar that could not be fetched; `uri` has its password masked. */
export class SessionJobArtifactError extends Error {
  constructor(
    message: string,
    readonly reason: SessionJobArtifactFailure,
    readonly uri: string,
    /** The HTTP status, for `http-status`. */
    readonly status?: number,
  ) {
    super(message);
    this.name = 'SessionJobArtifactError';
  }
}

/**
 * The jar of a session job: `jarURI`'s content, or the empty jar when there is none. Throws
 * SessionJobArtifactError.
 */
export async function fetchSessionJobJar(jarURI: string | undefined, options: SessionJobJarFetchOptions = {}): Promise<SessionJobJar> {
  if (jarURI === undefined) return { bytes: emptyJar(), fileName: EMPTY_JAR_FILE_NAME };
  const shown = maskPassword(jarURI);
  const fail = (reason: SessionJobArtifactFailure, what: string, status?: number) =>
    new SessionJobArtifactError(`jarURI ${shown}: ${what}`, reason, shown, status);
  let url: URL;
  try {
    url = new URL(jarURI);
  } catch {
    throw fail('invalid-uri', 'not an absolute URI; write e.g. https://repo.example.com/jobs/job.jar');
  }
  const scheme = url.protocol.slice(0, -1).toLowerCase();
  const allowed = (options.allowedSchemes ?? DEFAULT_SESSION_JOB_JAR_SCHEMES).map((s) => s.toLowerCase());
  if (!allowed.includes(scheme)) {
    throw fail(
      'scheme-not-allowed',
      `scheme ${scheme} is not allowed (allowed: ${allowed.join(', ')}); use one of those, or allow ${scheme} with flink-operator run --session-job-jar-scheme ${scheme} (the Apache operator's ${ALLOWED_SCHEMES_KEY})`,
    );
  }
  const settings = {
    allowed,
    allowRestrictedHosts: options.allowRestrictedHosts ?? false,
    deadline: Date.now() + (options.timeoutMs ?? DEFAULT_JAR_FETCH_TIMEOUT_MS),
    timeoutMs: options.timeoutMs ?? DEFAULT_JAR_FETCH_TIMEOUT_MS,
    maxBytes: options.maxBytes ?? DEFAULT_MAX_JAR_BYTES,
    maxRedirects: options.maxRedirects ?? DEFAULT_MAX_JAR_REDIRECTS,
    headers: options.httpHeaders ?? {},
    lookup: options.lookup ?? ((hostname: string) => dns.lookup(hostname, { all: true, verbatim: true })),
    fail,
  };
  if (scheme === 'http' || scheme === 'https') return { bytes: await fetchOverHttp(url, settings), fileName: jarFileName(url.pathname) };
  if (scheme === 'file') return readLocalFile(url, settings);
  throw fail(
    'unsupported-scheme',
    `this operator cannot fetch ${scheme}:// jars (the Apache operator reads them through a Flink filesystem plugin in its image); serve the jar over https (an artifact repository, or a presigned ${scheme} URL), or for a jar already on the session cluster's classpath omit jarURI and set entryClass`,
  );
}

/**
 * A zip with no entries: only the end of central directory record (PKWARE APPNOTE 4.3.16; 22 bytes,
 * signature 0x06054b50, all counts, sizes and offsets 0, no comment). Java's JarFile opens it
 * (no entries, no manifest); the Apache operator's EMPTY_JAR holds one empty manifest instead.
 */
export function emptyJar(): Uint8Array {
  const record = Buffer.alloc(22);
  record.writeUInt32LE(0x06054b50, 0);
  return record;
}

// ---- restricted addresses ----

export type RestrictedAddressKind = 'loopback' | 'link-local' | 'private' | 'unspecified' | 'multicast';

/** [kind, network, prefix length]; the private ranges include fec0::/10, which Java's isSiteLocalAddress (the Apache check) also counts. */
const RESTRICTED_RANGES: ReadonlyArray<readonly [RestrictedAddressKind, string, number]> = [
  ['loopback', '127.0.0.0', 8],
  ['loopback', '::1', 128],
  ['link-local', '169.254.0.0', 16],
  ['link-local', 'fe80::', 10],
  ['private', '10.0.0.0', 8],
  ['private', '172.16.0.0', 12],
  ['private', '192.168.0.0', 16],
  ['private', 'fc00::', 7],
  ['private', 'fec0::', 10],
  ['unspecified', '0.0.0.0', 8],
  ['unspecified', '::', 128],
  ['multicast', '224.0.0.0', 4],
  ['multicast', 'ff00::', 8],
];

const RESTRICTED_LISTS: ReadonlyArray<readonly [RestrictedAddressKind, BlockList]> = RESTRICTED_RANGES.map(([kind, network, prefix]) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, isIP(network) === 6 ? 'ipv6' : 'ipv4');
  return [kind, list] as const;
});

/** The kind of restricted address `address` (an IP literal) is, or undefined for an ordinary one. IPv4-mapped IPv6 counts as its IPv4 address. */
export function restrictedAddressKind(address: string): RestrictedAddressKind | undefined {
  const bare = address.replace(/%.*$/, ''); // an IPv6 zone (fe80::1%eth0)
  const version = isIP(bare);
  if (version === 0) return undefined;
  return RESTRICTED_LISTS.find(([, list]) => list.check(bare, version === 6 ? 'ipv6' : 'ipv4'))?.[0];
}

// ---- the header setting ----

/**
 * `kubernetes.operator.user.artifacts.http.header` as Flink reads a map option
 * (ConfigurationUtils.convertToProperties): `key1:value1,key2:value2`, entries split at `,`, then
 * key from value at `:`, each split honouring `'...'` / `"..."` quoting that starts a part (a quote
 * doubled inside is one quote; StructuredOptionsSplitter), unquoted parts trimmed. So a value with
 * `:` is quoted, `Authorization:'Basic a:b'`, and an entry with `,` is quoted whole, inner quotes
 * doubled: `'X-List:''a,b'''`. Throws on a malformed value.
 */
export function parseArtifactHttpHeaders(value: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  if (value === undefined) return headers;
  for (const entry of splitQuoted(value, ',')) {
    const pair = splitQuoted(entry, ':');
    if (pair.length !== 2 || pair[0] === '') {
      throw new Error(
        `${ARTIFACT_HTTP_HEADER_KEY}: "${entry}" is not a header:value pair; write name:value pairs separated by commas, quoting a value that holds ':' or ','`,
      );
    }
    headers[pair[0]] = pair[1];
  }
  return headers;
}

/** Flink's StructuredOptionsSplitter.splitEscaped. */
function splitQuoted(text: string, delimiter: string): string[] {
  const tokens: Array<{ kind: 'text' | 'quoted' | 'delimiter'; value: string; at: number }> = [];
  for (let i = 0; i < text.length;) {
    const c = text[i];
    if (c === "'" || c === '"') {
      let value = '';
      let j = i + 1;
      for (; ; j++) {
        if (j >= text.length) throw new Error(`${ARTIFACT_HTTP_HEADER_KEY}: a quote opened at position ${i} is not closed in "${text}"`);
        if (text[j] !== c) value += text[j];
        else if (text[j + 1] === c) value += text[++j];
        else break;
      }
      tokens.push({ kind: 'quoted', value, at: i });
      i = j + 1;
    } else if (c === delimiter) {
      tokens.push({ kind: 'delimiter', value: c, at: i++ });
    } else if (/\s/.test(c)) {
      i++;
    } else {
      const end = text.indexOf(delimiter, i);
      const stop = end < 0 ? text.length : end;
      tokens.push({ kind: 'text', value: text.slice(i, stop).trim(), at: i });
      i = stop;
    }
  }
  const parts: string[] = [];
  tokens.forEach((token, k) => {
    const next = tokens[k + 1];
    if (token.kind === 'quoted' && next && next.kind !== 'delimiter') {
      throw new Error(`${ARTIFACT_HTTP_HEADER_KEY}: only '${delimiter}' may follow a quoted part (position ${next.at} of "${text}")`);
    }
    if (token.kind !== 'delimiter') parts.push(token.value);
    else if (next?.kind === 'delimiter') parts.push('');
  });
  return parts;
}

// ---- fetching ----

interface FetchSettings {
  readonly allowed: readonly string[];
  readonly allowRestrictedHosts: boolean;
  readonly deadline: number;
  readonly timeoutMs: number;
  readonly maxBytes: number;
  readonly maxRedirects: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly lookup: (hostname: string) => Promise<readonly LookupAddress[]>;
  readonly fail: (reason: SessionJobArtifactFailure, what: string, status?: number) => SessionJobArtifactError;
}

type HopAnswer = { readonly bytes: Uint8Array } | { readonly location: string };

async function fetchOverHttp(start: URL, settings: FetchSettings): Promise<Uint8Array> {
  const { fail } = settings;
  for (const [name, value] of Object.entries(settings.headers)) {
    try {
      http.validateHeaderName(name);
      http.validateHeaderValue(name, value);
    } catch (error) {
      throw fail('invalid-header', `header "${name}" of ${ARTIFACT_HTTP_HEADER_KEY} cannot be sent: ${(error as Error).message}`);
    }
  }
  let url = start;
  let headers = settings.headers;
  for (let redirects = 0; ; redirects++) {
    const where = url.href === start.href ? '' : ` (redirected to ${maskPassword(url.href)})`;
    const addresses = await checkedAddresses(url, settings, where);
    const answer = await getOnce(url, addresses, headers, settings, where);
    if ('bytes' in answer) return answer.bytes;
    if (redirects >= settings.maxRedirects) throw fail('http-status', `more than ${settings.maxRedirects} redirects${where}`);
    const next = new URL(answer.location, url);
    const scheme = next.protocol.slice(0, -1);
    if ((scheme !== 'http' && scheme !== 'https') || !settings.allowed.includes(scheme) || (url.protocol === 'https:' && scheme === 'http')) {
      throw fail(
        'scheme-not-allowed',
        `redirected${where} to ${maskPassword(next.href)}, which is not followed (allowed: ${settings.allowed.join(', ')}; https never redirects to http)`,
      );
    }
    if (next.origin !== url.origin) headers = {};
    url = next;
  }
}

/** The addresses to connect to for `url`'s host, each checked unless restricted hosts are allowed. */
async function checkedAddresses(url: URL, settings: FetchSettings, where: string): Promise<readonly LookupAddress[]> {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const literal = isIP(host);
  let addresses: readonly LookupAddress[];
  if (literal !== 0) {
    addresses = [{ address: host, family: literal }];
  } else {
    try {
      addresses = await beforeDeadline(settings.lookup(host), settings, where);
    } catch (error) {
      if (error instanceof SessionJobArtifactError) throw error;
      throw settings.fail('unresolvable-host', `host ${host} cannot be resolved${where}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
    if (addresses.length === 0) throw settings.fail('unresolvable-host', `host ${host} resolves to no address${where}`);
  }
  if (!settings.allowRestrictedHosts) {
    for (const { address } of addresses) {
      const kind = restrictedAddressKind(address);
      if (kind === undefined) continue;
      const resolved = literal !== 0 ? `host ${address} is` : `host ${host} resolves to ${address},`;
      throw settings.fail(
        'restricted-address',
        `${resolved} a ${kind} address${where}; the operator does not fetch jars from loopback, link-local (cloud metadata), private, unspecified or multicast addresses. Serve the jar from a public address, or allow it with flink-operator run --session-job-jar-restricted-hosts (the Apache operator's ${DISALLOW_RESTRICTED_HOSTS_KEY}: false)`,
      );
    }
  }
  return addresses;
}

async function beforeDeadline<T>(promise: Promise<T>, settings: FetchSettings, where: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(settings.fail('timeout', `not fetched within ${settings.timeoutMs} ms${where}`)),
      Math.max(0, settings.deadline - Date.now()),
    );
  });
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}

/** A lookup that answers with the already checked addresses: the socket connects to nothing else. */
function pinnedLookup(addresses: readonly LookupAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family;
    const fitting = addresses.filter((a) => !family || a.family === family);
    const chosen = fitting.length > 0 ? fitting : addresses;
    if (options.all) callback(null, [...chosen]);
    else callback(null, chosen[0].address, chosen[0].family);
  };
}

/** One GET: the body of a 2xx answer, or where a redirect points. */
function getOnce(
  url: URL,
  addresses: readonly LookupAddress[],
  headers: Readonly<Record<string, string>>,
  settings: FetchSettings,
  where: string,
): Promise<HopAnswer> {
  const { fail, maxBytes } = settings;
  return new Promise<HopAnswer>((resolve, reject) => {
    let settled = false;
    const finish = (error: SessionJobArtifactError | null, answer?: HopAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error) {
        request.destroy();
        reject(error);
      } else resolve(answer!);
    };
    const requestFn = url.protocol === 'https:' ? https.request : http.request;
    const request = requestFn(
      url,
      { method: 'GET', headers: { 'User-Agent': USER_AGENT, Accept: '*/*', ...headers }, lookup: pinnedLookup(addresses), agent: false },
      (response) => {
        const status = response.statusCode ?? 0;
        const location = response.headers.location;
        if (REDIRECT_STATUSES.has(status) && location) {
          response.resume();
          finish(null, { location });
          return;
        }
        if (status < 200 || status >= 300) {
          response.resume();
          finish(fail('http-status', `GET answered ${status}${http.STATUS_CODES[status] ? ` ${http.STATUS_CODES[status]}` : ''}${where}`, status));
          return;
        }
        const declared = Number(response.headers['content-length']);
        if (declared > maxBytes) {
          finish(fail('too-large', `the jar is ${declared} bytes, more than the ${maxBytes} allowed${where}`));
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes) finish(fail('too-large', `the jar is more than the ${maxBytes} bytes allowed${where}`));
          else chunks.push(chunk);
        });
        response.on('end', () => finish(null, { bytes: Buffer.concat(chunks) }));
        response.on('aborted', () => finish(fail('connection', `the connection closed before the whole jar arrived${where}`)));
        response.on('error', (error: NodeJS.ErrnoException) => finish(fail('connection', `${error.code ?? error.message}${where}`)));
      },
    );
    const timer = setTimeout(() => finish(fail('timeout', `not fetched within ${settings.timeoutMs} ms${where}`)), Math.max(0, settings.deadline - Date.now()));
    request.on('error', (error: NodeJS.ErrnoException) => finish(fail('connection', `GET failed: ${error.code ?? error.message}${where}`)));
    request.end();
  });
}

async function readLocalFile(url: URL, settings: FetchSettings): Promise<SessionJobJar> {
  let path: string;
  try {
    path = fileURLToPath(url);
  } catch (error) {
    throw settings.fail('invalid-uri', `${(error as Error).message}; write file:///<absolute path on the operator's filesystem>`);
  }
  try {
    const stat = await fs.stat(path);
    if (!stat.isFile()) throw settings.fail('file', `${path} is not a file on the operator's filesystem`);
    if (stat.size > settings.maxBytes) throw settings.fail('too-large', `the jar is ${stat.size} bytes, more than the ${settings.maxBytes} allowed`);
    return { bytes: await fs.readFile(path), fileName: jarFileName(path) };
  } catch (error) {
    if (error instanceof SessionJobArtifactError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    const what = code === 'ENOENT' ? `no file ${path} on the operator's filesystem` : `cannot read ${path}: ${code ?? (error as Error).message}`;
    throw settings.fail('file', what);
  }
}

/**
 * The upload name of a jar at `path` (a URL path or a file path): its last segment, decoded, with
 * every character but letters, digits, `.`, `_` and `-` replaced by `_` (the name becomes part of
 * Flink's jar id, a URL path segment), and `.jar` appended when missing (JarUploadHandler refuses
 * other names; the Apache operator keeps the raw name and fails there).
 */
function jarFileName(path: string): string {
  const last = path.split('/').pop() ?? '';
  let name: string;
  try {
    name = decodeURIComponent(last);
  } catch {
    name = last;
  }
  name = name.replace(/[^A-Za-z0-9._-]/g, '_');
  if (name === '' || name === '.' || name === '..') name = 'job';
  return name.endsWith('.jar') ? name : `${name}.jar`;
}

function maskPassword(uri: string): string {
  try {
    const url = new URL(uri);
    if (url.password === '') return uri;
    url.password = '***';
    return url.href;
  } catch {
    return uri;
  }
}
