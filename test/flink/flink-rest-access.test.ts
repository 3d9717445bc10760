import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';
import { flinkDeployment } from '../../src/api/flink-deployment-builder.js';
import { flinkRestClientFor, restPortOf } from '../../src/flink/flink-rest-access.js';
import { FlinkRestError } from '../../src/flink/flink-rest-error.js';
import { withScriptedServer } from './scripted-flink-rest-server.js';

const JOB = '0f1e2d3c4b5a69788796a5b4c3d2e1f0';
const PROXY = '/api/v1/namespaces/team-a/services/orders-rest:rest/proxy';
const tls = (file: string) => readFileSync(new URL(`./fixtures/tls/${file}`, import.meta.url), 'utf8');
const b64 = (text: string) => Buffer.from(text).toString('base64');

const deployment = flinkDeployment('orders').inNamespace('team-a').withUid('uid-1').build();

function kubeConfig(cluster: Record<string, unknown>, user: Record<string, unknown>): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', ...cluster }],
    users: [{ name: 'u', ...user }],
    contexts: [{ name: 'ctx', cluster: 'c', user: 'u' }],
    currentContext: 'ctx',
  });
  return kc;
}

const fastRetry = { getAttempts: 2, backoffMs: [1] };

test('direct mode talks to http://<name>-rest.<ns>.svc:<rest.port>', () => {
  assert.equal(flinkRestClientFor(deployment, { mode: 'direct' }).baseUrl, 'http://orders-rest.team-a.svc:8081');
  const custom = flinkDeployment('orders')
    .inNamespace('team-a')
    .withFlinkConfiguration({ rest: { port: 9091 } })
    .build();
  assert.equal(restPortOf(custom), 9091);
  assert.equal(flinkRestClientFor(custom, { mode: 'direct' }).baseUrl, 'http://orders-rest.team-a.svc:9091');
  assert.throws(() => restPortOf(flinkDeployment('x').withFlinkConfiguration({ 'rest.port': 'eighty' }).build()), /rest\.port: "eighty" is not a port number/);
  assert.equal(flinkRestClientFor(deployment, { mode: 'direct', directUrlOverride: 'http://127.0.0.1:18081/' }).baseUrl, 'http://127.0.0.1:18081');
});

test('a KubeConfig that client-node refuses to use is reported as such, before anything is sent', async () => {
  await withScriptedServer([], async (server) => {
    // client-node refuses plain http unless skipTLSVerify is set.
    const client = flinkRestClientFor(deployment, {
      mode: 'apiserver-proxy',
      kubeConfig: kubeConfig({ server: server.url }, { token: 't' }),
      retry: { getAttempts: 3 },
    });
    await assert.rejects(
      client.listJobs(),
      /^FlinkRestError: Flink REST API of team-a\/orders not called via http:\/\/127\.0\.0\.1:\d+\/api\/v1\/\S+: cannot apply Kubernetes credentials: HTTP protocol is not allowed when skipTLSVerify is not set or false; check the operator's kubeconfig$/,
    );
    assert.equal(server.received.length, 0);
  });
});

test('apiserver-proxy mode goes through the service proxy with the bearer token of the KubeConfig', async () => {
  await withScriptedServer(
    [
      { method: 'GET', path: `${PROXY}/jobs/overview`, headers: { authorization: 'Bearer s3cr3t-token' }, answer: { status: 200, json: { jobs: [] } } },
      { method: 'PATCH', path: `${PROXY}/jobs/${JOB}?mode=cancel`, headers: { authorization: 'Bearer s3cr3t-token' }, answer: { status: 202, json: {} } },
    ],
    async (server) => {
      const kc = kubeConfig({ server: server.url, skipTLSVerify: true }, { token: 's3cr3t-token' });
      const client = flinkRestClientFor(deployment, { mode: 'apiserver-proxy', kubeConfig: kc });
      assert.equal(client.baseUrl, `${server.url}${PROXY}`);
      assert.deepEqual(await client.listJobs(), []);
      assert.deepEqual(await client.cancelJob(JOB), { outcome: 'cancelling' });
    },
  );
});

test('apiserver-proxy mode over TLS verifies the server with the CA data and presents the client certificate', async () => {
  await withScriptedServer(
    [{ method: 'GET', path: `${PROXY}/config`, answer: { status: 200, json: { 'refresh-interval': 3000, 'flink-version': '1.20.1' } } }],
    async (server) => {
      const kc = kubeConfig({ server: server.url, caData: b64(tls('ca.crt')) }, { certData: b64(tls('client.crt')), keyData: b64(tls('client.key')) });
      const client = flinkRestClientFor(deployment, { mode: 'apiserver-proxy', kubeConfig: kc });
      assert.equal((await client.getConfig())['flink-version'], '1.20.1');
      assert.equal(server.received[0]?.clientCertificateSubject, 'flink-operator-test');
    },
    { tls: { key: tls('server.key'), cert: tls('server.crt'), ca: tls('ca.crt'), requestCert: true } },
  );
});

test('apiserver-proxy mode over TLS refuses an unknown server certificate unless skipTLSVerify is set', async () => {
  await withScriptedServer(
    [{ method: 'GET', path: `${PROXY}/config`, answer: { status: 200, json: { 'refresh-interval': 3000, 'flink-version': '2.2.0' } } }],
    async (server) => {
      const strict = flinkRestClientFor(deployment, {
        mode: 'apiserver-proxy',
        kubeConfig: kubeConfig({ server: server.url }, { token: 't' }),
        retry: { getAttempts: 1 },
      });
      const error = await strict.getConfig().then(
        () => assert.fail('expected a TLS failure'),
        (e: unknown) => e,
      );
      assert.ok(error instanceof FlinkRestError);
      assert.equal(error.source, 'transport');
      assert.match(
        error.message,
        /unreachable via https:\/\/127\.0\.0\.1:\d+\/api\/v1\/namespaces\/team-a\/services\/orders-rest:rest\/proxy\/config: (UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN|DEPTH_ZERO_SELF_SIGNED_CERT)/,
      );
      const lax = flinkRestClientFor(deployment, {
        mode: 'apiserver-proxy',
        kubeConfig: kubeConfig({ server: server.url, skipTLSVerify: true }, { token: 't' }),
      });
      assert.equal((await lax.getConfig())['flink-version'], '2.2.0');
    },
    { tls: { key: tls('server.key'), cert: tls('server.crt') } },
  );
});

const noEndpoints = {
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message: 'no endpoints available for service "orders-rest"',
  reason: 'ServiceUnavailable',
  code: 503,
};

test('a 503 from the API server proxy (no ready JobManager) is retried for GETs and reported as unreachable', async () => {
  await withScriptedServer(
    [
      { method: 'GET', path: `${PROXY}/jobs/overview`, answer: { status: 503, json: noEndpoints } },
      { method: 'GET', path: `${PROXY}/jobs/overview`, answer: { status: 503, json: noEndpoints } },
    ],
    async (server) => {
      const client = flinkRestClientFor(deployment, {
        mode: 'apiserver-proxy',
        kubeConfig: kubeConfig({ server: server.url, skipTLSVerify: true }, { token: 't' }),
        retry: fastRetry,
      });
      const error = await client.listJobs().then(
        () => assert.fail('expected failure'),
        (e: unknown) => e,
      );
      assert.ok(error instanceof FlinkRestError);
      assert.equal(error.source, 'apiserver');
      assert.ok(error.isUnreachable);
      assert.equal(
        error.message,
        `Flink REST API of team-a/orders unreachable via ${server.url}${PROXY}/jobs/overview: the API server answered 503 Service Unavailable: no endpoints available for service "orders-rest"; is the JobManager running?`,
      );
    },
  );
});

test('a 404 from the API server (Service missing) is never mistaken for "job not found" by cancelJob', async () => {
  const serviceMissing = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'services "orders-rest" not found',
    reason: 'NotFound',
    code: 404,
  };
  await withScriptedServer([{ method: 'PATCH', path: `${PROXY}/jobs/${JOB}?mode=cancel`, answer: { status: 404, json: serviceMissing } }], async (server) => {
    const client = flinkRestClientFor(deployment, {
      mode: 'apiserver-proxy',
      kubeConfig: kubeConfig({ server: server.url, skipTLSVerify: true }, { token: 't' }),
    });
    await assert.rejects(client.cancelJob(JOB), (error: unknown) => {
      assert.ok(error instanceof FlinkRestError);
      assert.equal(error.source, 'apiserver');
      assert.match(error.message, /the API server answered 404 Not Found: services "orders-rest" not found; the Service or its port "rest" does not exist/);
      return true;
    });
  });
});

test('a 429 from the API server (priority and fairness) is retried for GETs', async () => {
  const tooMany = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'Too many requests, please try again later.',
    reason: 'TooManyRequests',
    code: 429,
  };
  await withScriptedServer(
    [
      { method: 'GET', path: `${PROXY}/jobs/overview`, answer: { status: 429, json: tooMany } },
      { method: 'GET', path: `${PROXY}/jobs/overview`, answer: { status: 200, json: { jobs: [] } } },
    ],
    async (server) => {
      const client = flinkRestClientFor(deployment, {
        mode: 'apiserver-proxy',
        kubeConfig: kubeConfig({ server: server.url, skipTLSVerify: true }, { token: 't' }),
        retry: fastRetry,
      });
      assert.deepEqual(await client.listJobs(), []);
    },
  );
});

test('a 403 from the API server explains the missing RBAC permission', async () => {
  const forbidden = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    reason: 'Forbidden',
    code: 403,
    message:
      'services "orders-rest:rest" is forbidden: User "system:serviceaccount:flink:operator" cannot get resource "services/proxy" in API group "" in the namespace "team-a"',
  };
  await withScriptedServer([{ method: 'GET', path: `${PROXY}/config`, answer: { status: 403, json: forbidden } }], async (server) => {
    const client = flinkRestClientFor(deployment, {
      mode: 'apiserver-proxy',
      kubeConfig: kubeConfig({ server: server.url, skipTLSVerify: true }, { token: 't' }),
    });
    await assert.rejects(
      client.getConfig(),
      /the API server answered 403 Forbidden: .*cannot get resource "services\/proxy".*; the operator's credentials need "get" on services\/proxy/,
    );
  });
});

test('apiserver-proxy mode without a KubeConfig is a configuration error', () => {
  assert.throws(() => flinkRestClientFor(deployment, { mode: 'apiserver-proxy' }), /needs a KubeConfig/);
});
