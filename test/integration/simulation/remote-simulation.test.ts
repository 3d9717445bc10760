/**
 * The simulation attached to the API server across an HTTP hop (remote-service-proxy.ts), the
 * layout the benchmark uses with the simulation in a process of its own, and the simulation's own
 * JSON API client (simulation-api-client.ts).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { startDevCluster } from '../../../src/devcluster/dev-cluster.js';
import { forwardServiceProxy, serveServiceProxy, type ServiceProxyServer } from '../../../src/devcluster/remote-service-proxy.js';
import { startSimulation } from '../../../src/devcluster/simulated-cluster.js';
import { simulationApis } from '../../../src/devcluster/simulation/simulation-api-client.js';
import { type Harness, eventually, freshNamespace, rolledOut } from './simulation-harness.js';
import { DEMO_JOB_ID, applyRendered, renderFlinkResources } from './rendered-flink-resources.js';

let h: Harness;
let server: ServiceProxyServer;
let forwarder: ReturnType<typeof forwardServiceProxy>;

before(async () => {
  const cluster = await startDevCluster();
  server = await serveServiceProxy();
  const errors: Harness['errors'] = [];
  // The simulation sees only a kubeconfig and a place for its proxy handler, as in its own process.
  const simulation = await startSimulation(
    { kubeConfig: () => cluster.kubeConfig(), setServiceProxy: (handler) => server.setHandler(handler) },
    { podReadyDelayMs: 20, jobStartDelayMs: 20, savepointDurationMs: 30, onError: (error, what) => errors.push({ what, error }) },
  );
  forwarder = forwardServiceProxy(server.url);
  cluster.setServiceProxy(forwarder);
  const kc = cluster.kubeConfig();
  h = {
    sc: {
      cluster,
      simulation,
      stop: async () => {
        await simulation.stop();
        await cluster.stop();
      },
    },
    core: kc.makeApiClient(CoreV1Api),
    apps: kc.makeApiClient(AppsV1Api),
    errors,
  };
});

after(async () => {
  forwarder.close();
  await server.stop();
  await h.sc.stop();
});

/** The fields of the answers these tests read: Flink REST bodies and Kubernetes Status. */
interface ProxyBody {
  message?: string;
  reason?: string;
  'request-id'?: string;
  jobs?: Array<{ state: string }>;
  status?: { id: string };
  operation?: { location: string };
}

async function viaProxy(
  ns: string,
  service: string,
  path: string,
  init: { method?: string; body?: unknown } = {},
): Promise<{ status: number; body: ProxyBody }> {
  const res = await fetch(`${h.sc.cluster.url}/api/v1/namespaces/${ns}/services/${service}/proxy${path}`, {
    method: init.method ?? 'GET',
    headers: init.body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? {} : (JSON.parse(text) as ProxyBody) };
}

test('through the HTTP hop, a Flink cluster comes up and its REST API answers GETs and POSTs with bodies', async () => {
  const ns = await freshNamespace(h, 'remote');
  await applyRendered(h, ns, renderFlinkResources('orders'));
  await rolledOut(h, ns, 'orders', 1, 1);
  await eventually(
    async () => (await viaProxy(ns, 'orders-rest:rest', '/jobs/overview')).body?.jobs?.[0]?.state === 'RUNNING',
    'job RUNNING through the forwarded proxy',
  );

  const triggered = await viaProxy(ns, 'orders-rest:rest', `/jobs/${DEMO_JOB_ID}/savepoints?unused=1`, {
    method: 'POST',
    body: { 'target-directory': 's3://bucket/sp', 'cancel-job': false, triggerId: 'f'.repeat(32) },
  });
  assert.equal(triggered.status, 202);
  assert.equal(triggered.body['request-id'], 'f'.repeat(32), 'the JSON body reached the JobManager (its trigger id is echoed)');
  const done = await eventually(async () => {
    const r = await viaProxy(ns, 'orders-rest:rest', `/jobs/${DEMO_JOB_ID}/savepoints/${'f'.repeat(32)}`);
    return r.body?.status?.id === 'COMPLETED' ? r.body : undefined;
  }, 'savepoint COMPLETED');
  assert.match(done.operation?.location ?? '', /^s3:\/\/bucket\/sp\//);
  assert.deepEqual(h.errors, []);
});

test("errors pass through unchanged: the API server's 404 for a missing Service, the simulation's 503 for a missing port", async () => {
  const ns = await freshNamespace(h, 'remote');
  const missing = await viaProxy(ns, 'nothing-here', '/overview');
  assert.equal(missing.status, 404);
  assert.equal(missing.body.message, 'services "nothing-here" not found');
  await applyRendered(h, ns, renderFlinkResources('billing'));
  const noPort = await viaProxy(ns, 'billing-rest:9999', '/overview');
  assert.equal(noPort.status, 503);
  assert.equal(noPort.body.message, 'no service port "9999" found for service "billing-rest"');
});

test('when the simulation cannot be reached, the proxy answers 503 "error trying to reach service" instead of hanging', async () => {
  const ns = await freshNamespace(h, 'remote');
  await applyRendered(h, ns, renderFlinkResources('gone'));
  const dead = forwardServiceProxy('http://127.0.0.1:1');
  h.sc.cluster.setServiceProxy(dead);
  try {
    const r = await viaProxy(ns, 'gone-rest:rest', '/overview');
    assert.equal(r.status, 503);
    assert.equal(r.body.reason, 'ServiceUnavailable');
    assert.match(r.body.message ?? '', /^error trying to reach service: connect ECONNREFUSED 127\.0\.0\.1:1/);
  } finally {
    dead.close();
    h.sc.cluster.setServiceProxy(forwarder);
  }
});

test("the simulation's JSON client: answers are the server's JSON, errors carry the HTTP code, patches are merge patches", async () => {
  const ns = await freshNamespace(h, 'remote');
  const { core } = simulationApis(h.sc.cluster.kubeConfig(), 'remote-simulation-test/1.0');
  const created = await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'cm', labels: { a: '1' } }, data: { x: '1' } } });
  assert.equal(typeof created.metadata?.creationTimestamp, 'string', 'timestamps stay strings (no typed deserialization)');
  await assert.rejects(core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'cm' } } }), (e: { code?: number }) => e.code === 409);
  await assert.rejects(
    core.readNamespacedConfigMap({ namespace: ns, name: 'absent' }),
    (e: { code?: number; body?: { reason?: string } }) => e.code === 404 && e.body?.reason === 'NotFound',
  );
  const patched = await core.patchNamespacedConfigMap({ namespace: ns, name: 'cm', body: { data: { y: '2' } } });
  assert.deepEqual(patched.data, { x: '1', y: '2' }, 'a merge patch keeps the other keys');
  const listed = await core.listNamespacedPod({ namespace: ns, labelSelector: 'app=none' });
  assert.deepEqual(listed.items, []);
  const entry = h.sc.cluster.requestLog.entries().find((e) => e.userAgent === 'remote-simulation-test/1.0');
  assert.ok(entry, 'requests carry the given User-Agent');
});
