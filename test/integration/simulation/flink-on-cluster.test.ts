import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type Harness, eventually, freshNamespace, patchDeployment, rolledOut, startHarness } from './simulation-harness.js';
import { DEMO_JOB_ID, applyRendered, renderFlinkResources } from './rendered-flink-resources.js';

const run = promisify(execFile);
let h: Harness;
let tmp: string;
before(async () => {
  h = await startHarness();
  tmp = await mkdtemp(join(tmpdir(), 'sim-kubectl-'));
});
after(async () => {
  await h.sc.stop();
  await rm(tmp, { recursive: true, force: true });
});

interface ProxyAnswer {
  status: number;
  body: any;
}

/** A request through the API server's service proxy, as the operator sends it. */
async function viaProxy(ns: string, service: string, path: string, init: { method?: string; body?: unknown } = {}): Promise<ProxyAnswer> {
  const res = await fetch(`${h.sc.cluster.url}/api/v1/namespaces/${ns}/services/${service}/proxy${path}`, {
    method: init.method ?? 'GET',
    headers: init.body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text) };
}

async function jobState(ns: string, name: string): Promise<string | undefined> {
  const r = await viaProxy(ns, `${name}-rest:rest`, '/jobs/overview');
  return r.status === 200 ? r.body.jobs[0]?.state : undefined;
}

async function runningCluster(name: string, options: Parameters<typeof renderFlinkResources>[1] = {}): Promise<string> {
  const ns = await freshNamespace(h, 'flink');
  await applyRendered(h, ns, renderFlinkResources(name, options));
  await rolledOut(h, ns, name, 1, 1);
  await eventually(async () => (await jobState(ns, name)) === 'RUNNING', `${name} job RUNNING`);
  return ns;
}

async function savepoint(ns: string, name: string, kind: 'savepoints' | 'stop', body: unknown = {}): Promise<any> {
  const trigger = await viaProxy(ns, `${name}-rest:rest`, `/jobs/${DEMO_JOB_ID}/${kind}`, { method: 'POST', body });
  assert.equal(trigger.status, 202);
  const id = trigger.body['request-id'];
  return eventually(async () => {
    const r = await viaProxy(ns, `${name}-rest:rest`, `/jobs/${DEMO_JOB_ID}/savepoints/${id}`);
    return r.body?.status?.id === 'COMPLETED' ? { triggerId: id, ...r.body } : undefined;
  }, `${kind} ${id} completed`);
}

test('the service proxy answers through client-node and through kubectl with Flink shapes', async () => {
  const ns = await runningCluster('basic');
  const kc = h.sc.cluster.kubeConfig();
  const { CoreV1Api } = await import('@kubernetes/client-node');
  const core = kc.makeApiClient(CoreV1Api);
  const viaClientNode = await core.connectGetNamespacedServiceProxyWithPath({ namespace: ns, name: 'basic-rest:rest', path: 'jobs/overview' });
  const overview = typeof viaClientNode === 'string' ? JSON.parse(viaClientNode) : viaClientNode;
  assert.equal(overview.jobs.length, 1);
  assert.equal(overview.jobs[0].jid, DEMO_JOB_ID);
  assert.equal(overview.jobs[0].state, 'RUNNING');
  assert.equal(overview.jobs[0].name, 'StateMachineExample');

  const kubeconfig = join(tmp, 'kubeconfig');
  await writeFile(kubeconfig, h.sc.cluster.kubeconfigYaml());
  const { stdout } = await run(
    'kubectl',
    ['--kubeconfig', kubeconfig, '--cache-dir', join(tmp, 'cache-1'), 'get', '--raw', `/api/v1/namespaces/${ns}/services/basic-rest:rest/proxy/jobs/overview`],
    { env: { ...process.env, HOME: tmp } },
  );
  const viaKubectl = JSON.parse(stdout);
  assert.equal(viaKubectl.jobs[0].jid, DEMO_JOB_ID);
  const config = await viaProxy(ns, 'basic-rest:rest', '/config');
  assert.equal(config.body['flink-version'], '1.20.0');
  const details = await viaProxy(ns, 'basic-rest:8081', `/jobs/${DEMO_JOB_ID}`);
  assert.equal(details.status, 200);
  assert.equal(details.body.vertices[0].parallelism, 2);
  assert.deepEqual(await viaProxy(ns, 'basic-rest:rest', '/no/such/path'), { status: 404, body: { errors: ['Not found: /no/such/path'] } });
});

test('the proxy answers like the real API server when nothing can serve the request', async () => {
  const ns = await freshNamespace(h, 'flink');
  const r = renderFlinkResources('lonely');
  await h.core.createNamespacedService({ namespace: ns, body: r.restService });
  const none = await viaProxy(ns, 'lonely-rest:rest', '/jobs/overview');
  assert.equal(none.status, 503);
  assert.deepEqual([none.body.kind, none.body.reason, none.body.message], ['Status', 'ServiceUnavailable', 'no endpoints available for service "lonely-rest"']);
  const missing = await viaProxy(ns, 'nope:rest', '/jobs/overview');
  assert.equal(missing.status, 404);
  assert.equal(missing.body.message, 'services "nope" not found');
  const badPort = await viaProxy(ns, 'lonely-rest:web', '/jobs/overview');
  assert.equal(badPort.status, 503);
  assert.equal(badPort.body.message, 'no service port "web" found for service "lonely-rest"');

  const ns2 = await runningCluster('other');
  const rpc = await viaProxy(ns2, 'other:jobmanager-rpc', '/jobs/overview');
  assert.equal(rpc.status, 503);
  assert.match(rpc.body.message, /^error trying to reach service: dial tcp 10\.244\.\d+\.\d+:6123: connect: connection refused$/);

  const ns3 = await freshNamespace(h, 'flink');
  await applyRendered(h, ns3, renderFlinkResources('down', { config: { 'simulator.rest.unavailable': 'true' } }));
  await rolledOut(h, ns3, 'down', 1, 1);
  const refused = await viaProxy(ns3, 'down-rest:rest', '/jobs/overview');
  assert.equal(refused.status, 503);
  assert.match(refused.body.message, /connect: connection refused$/);
});

test('savepoint, then an upgrade that restores from it: the new JobManager restores and the lineage records both', async () => {
  const ns = await runningCluster('upg');
  const sp = await savepoint(ns, 'upg', 'stop', { drain: false });
  const location: string = sp.operation.location;
  assert.match(location, /^file:\/flink-data\/savepoints\/savepoint-a1b2c3-[0-9a-f]{12}$/);
  assert.equal(await jobState(ns, 'upg'), 'FINISHED');
  const jm = await h.apps.readNamespacedDeployment({ namespace: ns, name: 'upg' });
  const args = [...jm.spec!.template.spec!.containers[0].args!, '--fromSavepoint', location];
  await patchDeployment(h, ns, 'upg', { spec: { template: { spec: { containers: [{ name: 'flink-main-container', args }] } } } });
  await rolledOut(h, ns, 'upg', 1, 2);
  await eventually(async () => (await jobState(ns, 'upg')) === 'RUNNING', 'restored job RUNNING');
  const cps = await viaProxy(ns, 'upg-rest:rest', `/jobs/${DEMO_JOB_ID}/checkpoints`);
  assert.equal(cps.status, 200, JSON.stringify(cps));
  assert.equal(cps.body.latest.restored.external_path, location);
  assert.equal(cps.body.latest.restored.is_savepoint, true);

  const lineage = (await viaProxy(ns, 'upg-rest:rest', '/simulator/lineage')).body;
  assert.deepEqual(lineage, h.sc.simulation.lineage(ns, 'upg'));
  assert.deepEqual(lineage.deployment, { namespace: ns, name: 'upg' });
  assert.deepEqual(
    lineage.submissions.map((s: any) => [s.jobId, s.restoredFrom, s.origin]),
    [
      [DEMO_JOB_ID, null, 'submitted'],
      [DEMO_JOB_ID, location, 'submitted'],
    ],
  );
  assert.notEqual(lineage.submissions[0].podName, lineage.submissions[1].podName);
  assert.deepEqual(
    lineage.savepoints.map((s: any) => [s.triggerId, s.kind, s.status, s.location]),
    [[sp.triggerId, 'stop-with-savepoint', 'COMPLETED', location]],
  );
});

test('a replaced JobManager pod is a new process: without HA it submits its job again from its args', async () => {
  const ns = await runningCluster('nha');
  const [pod] = (await h.core.listNamespacedPod({ namespace: ns, labelSelector: 'app=nha,component=jobmanager' })).items;
  await h.core.deleteNamespacedPod({ namespace: ns, name: pod.metadata!.name! });
  await eventually(async () => h.sc.simulation.lineage(ns, 'nha').submissions.length === 2, 'second submission');
  const subs = h.sc.simulation.lineage(ns, 'nha').submissions;
  assert.deepEqual(
    subs.map((s) => [s.jobId, s.restoredFrom, s.origin]),
    [
      [DEMO_JOB_ID, null, 'submitted'],
      [DEMO_JOB_ID, null, 'submitted'],
    ],
  );
  assert.notEqual(subs[1].podName, pod.metadata!.name);
  await eventually(async () => (await jobState(ns, 'nha')) === 'RUNNING', 'resubmitted job RUNNING');
  const cancel = await viaProxy(ns, 'nha-rest:rest', `/jobs/${DEMO_JOB_ID}?mode=cancel`, { method: 'PATCH' });
  assert.deepEqual(cancel, { status: 202, body: {} });
  await eventually(async () => (await jobState(ns, 'nha')) === 'CANCELED', 'job CANCELED');
  assert.deepEqual(
    h.sc.simulation.lineage(ns, 'nha').cancellations.map((c) => c.jobId),
    [DEMO_JOB_ID],
  );
});

test('with Kubernetes HA, the JobManager keeps HA metadata and a replacement recovers from the latest checkpoint', async () => {
  const haConfig = {
    'high-availability.type': 'kubernetes',
    'high-availability.storageDir': 'file:///flink-data/ha',
    'execution.checkpointing.interval': '25 ms',
  };
  const ns2 = await runningCluster('ha', { config: haConfig });
  const cm = await eventually(async () => {
    const c = await h.core.readNamespacedConfigMap({ namespace: ns2, name: 'ha-cluster-config-map' });
    return Object.keys(c.data ?? {}).some((k) => k.startsWith('completedCheckpoint')) ? c : undefined;
  }, 'HA ConfigMap with a checkpoint');
  assert.deepEqual(cm.metadata!.labels, { app: 'ha', 'configmap-type': 'high-availability', type: 'flink-native-kubernetes' });
  assert.ok(cm.data![`jobGraph-${DEMO_JOB_ID}`]);
  assert.equal(cm.metadata!.ownerReferences, undefined);

  const [pod] = (await h.core.listNamespacedPod({ namespace: ns2, labelSelector: 'app=ha,component=jobmanager' })).items;
  await h.core.deleteNamespacedPod({ namespace: ns2, name: pod.metadata!.name! });
  await eventually(async () => h.sc.simulation.lineage(ns2, 'ha').submissions.length === 2, 'recovery');
  const recovered = h.sc.simulation.lineage(ns2, 'ha').submissions[1];
  assert.equal(recovered.origin, 'ha-recovered');
  assert.equal(recovered.jobId, DEMO_JOB_ID);
  assert.match(recovered.restoredFrom!, new RegExp(`^file:/flink-data/checkpoints/${DEMO_JOB_ID}/chk-\\d+$`));
  await eventually(async () => (await jobState(ns2, 'ha')) === 'RUNNING', 'recovered job RUNNING');
  const cps = await viaProxy(ns2, 'ha-rest:rest', `/jobs/${DEMO_JOB_ID}/checkpoints`);
  assert.equal(cps.body.latest.restored.external_path, recovered.restoredFrom);
});

test('failure modes through flinkConfiguration: job fails after start, savepoints fail, bad config crash-loops the JobManager', async () => {
  const ns = await runningCluster('spfail', { config: { 'simulator.savepoint.failure': 'fail' } });
  const sp = await savepoint(ns, 'spfail', 'savepoints');
  assert.equal(sp.operation['failure-cause'].class, 'org.apache.flink.runtime.checkpoint.CheckpointException');
  assert.equal(await jobState(ns, 'spfail'), 'RUNNING', 'a failed savepoint leaves the job running');

  const nsFail = await freshNamespace(h, 'flink');
  await applyRendered(h, nsFail, renderFlinkResources('fails', { config: { 'simulator.job.fail-after': '100 ms' } }));
  await eventually(async () => (await jobState(nsFail, 'fails')) === 'FAILED', 'job FAILED');
  const details = await viaProxy(nsFail, 'fails-rest:rest', `/jobs/${DEMO_JOB_ID}`);
  assert.ok(details.body.timestamps.RUNNING > 0, 'it was RUNNING before it failed');
  const ex = await viaProxy(nsFail, 'fails-rest:rest', `/jobs/${DEMO_JOB_ID}/exceptions`);
  assert.equal(ex.body.exceptionHistory.entries[0].exceptionName, 'org.apache.flink.runtime.JobException');

  const ns2 = await freshNamespace(h, 'flink');
  await applyRendered(h, ns2, renderFlinkResources('badconf', { jobId: 'not-hex' }));
  await eventually(async () => {
    const p = (await h.core.listNamespacedPod({ namespace: ns2, labelSelector: 'component=jobmanager' })).items[0];
    const cs = p?.status?.containerStatuses?.[0];
    return cs?.state?.waiting?.reason === 'CrashLoopBackOff' && (cs.restartCount ?? 0) >= 1;
  }, 'JobManager with an invalid configuration crash-loops');
  assert.equal((await viaProxy(ns2, 'badconf-rest:rest', '/jobs/overview')).status, 503);
});

test('deleting the JobManager Deployment kills its JobManager: the proxy has no endpoint any more', async () => {
  const ns = await runningCluster('bye');
  assert.equal(h.sc.simulation.jobManagers().filter((jm) => jm.pod.namespace === ns).length, 1);
  await h.apps.deleteNamespacedDeployment({ namespace: ns, name: 'bye' });
  await eventually(async () => h.sc.simulation.jobManagers().every((jm) => jm.pod.namespace !== ns), 'JobManager stopped');
  const gone = await viaProxy(ns, 'bye-rest:rest', '/jobs/overview');
  assert.equal(gone.status, 503);
  assert.equal(gone.body.message, 'no endpoints available for service "bye-rest"');
});

test('the simulation reported no unexpected errors', () => {
  const unexpected = h.errors.filter((e) => (e.error as { code?: number }).code !== 409 && !/container start of pod .*badconf/.test(e.what));
  assert.deepEqual(
    unexpected.map((e) => `${e.what}: ${String((e.error as { body?: string }).body ?? e.error)}`),
    [],
  );
});
