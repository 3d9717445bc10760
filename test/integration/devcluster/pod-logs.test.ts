/**
 * `kubectl logs` (and the pods/log subresource over raw HTTP) against the dev cluster with its
 * simulated kubelet and Flink JobManagers; `kubectl exec`/`port-forward`/`attach` refused with a
 * clear message; the api-only answers. Real behaviour sources are named per test.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { startSimulatedCluster, type SimulatedCluster } from '../../../src/devcluster/simulated-cluster.js';
import { startDevCluster } from '../../../src/devcluster/dev-cluster.js';
import { KubectlRunner } from './kubectl-runner.js';
import { eventually, raw } from './raw-http.js';

let sc: SimulatedCluster;
let core: CoreV1Api;
let kubectl: KubectlRunner;
const ns = 'logs';

function flinkPod(name: string, extra: Partial<V1Pod['spec']> = {}): V1Pod {
  return {
    metadata: { name, labels: { app: name } },
    spec: {
      containers: [
        { name: 'flink-main-container', image: 'flink:1.20', args: ['standalone-job', '--job-classname', 'org.example.Job'] },
        { name: 'sidecar', image: 'example/sidecar:1.0' },
      ],
      ...extra,
    },
  };
}

async function runningPod(body: V1Pod): Promise<V1Pod> {
  await core.createNamespacedPod({ namespace: ns, body });
  const name = body.metadata!.name!;
  let pod: V1Pod | undefined;
  await eventually(
    async () => {
      pod = await core.readNamespacedPod({ namespace: ns, name });
      return pod.status?.containerStatuses?.every((c) => c.state?.running) === true;
    },
    5000,
    `pod ${name} running`,
  );
  return pod!;
}

before(async () => {
  sc = await startSimulatedCluster({ simulation: { podReadyDelayMs: 20, jobStartDelayMs: 20, checkpointIntervalMs: 40 } });
  core = sc.cluster.kubeConfig().makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: ns } } });
  kubectl = new KubectlRunner(sc.cluster.kubeconfigYaml());
  await runningPod(flinkPod('jm'));
  // a checkpoint has completed (the 40 ms interval)
  await eventually(
    async () => (await kubectl.ok(['logs', '-n', ns, 'jm', '-c', 'flink-main-container'])).includes('Completed checkpoint 1 '),
    5000,
    'checkpoint 1 logged',
  );
});
after(async () => {
  kubectl.cleanup();
  await sc.stop();
});

test('kubectl logs shows the JobManager start, submission, state change and checkpoints in Flink log4j layout', async () => {
  const out = await kubectl.ok(['logs', '-n', ns, 'jm', '-c', 'flink-main-container']);
  const lines = out.trimEnd().split('\n');
  // log4j-console.properties of the Flink image: %d{yyyy-MM-dd HH:mm:ss,SSS} %-5p %-60c %x - %m%n
  assert.match(
    lines[0],
    /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} INFO {2}org\.apache\.flink\.runtime\.entrypoint\.ClusterEntrypoint {8}\[\] - Starting StandaloneApplicationClusterEntryPoint\.$/,
  );
  const jobId = /Received JobGraph submission '([^']*)' \(([0-9a-f]{32})\)\./.exec(out)?.[2];
  assert.ok(jobId, out);
  assert.match(out, new RegExp(`Submitting job '[^']*' \\(${jobId}\\)\\.`));
  assert.match(out, new RegExp(`ExecutionGraph +\\[\\] - Job [^\\n]* \\(${jobId}\\) switched from state CREATED to RUNNING\\.`));
  assert.match(out, new RegExp(`Triggering checkpoint 1 \\(type=CheckpointType\\{name='Checkpoint'[^\\n]* for job ${jobId}\\.`));
  assert.match(out, new RegExp(`Completed checkpoint 1 for job ${jobId} \\(\\d+ bytes, checkpointDuration=\\d+ ms, finalizationTime=0 ms\\)\\.`));
});

test('kubectl logs --tail, --timestamps, --limit-bytes, --since and --since-time filter as the kubelet does', async () => {
  const all = (await kubectl.ok(['logs', '-n', ns, 'jm', '-c', 'flink-main-container'])).trimEnd().split('\n');
  const tail = (await kubectl.ok(['logs', '-n', ns, 'jm', '-c', 'flink-main-container', '--tail=2'])).trimEnd().split('\n');
  assert.equal(tail.length, 2);
  // kubelet kuberuntime/logs: timestamps in RFC3339NanoFixed, then a space, then the line
  const stamped = (await kubectl.ok(['logs', '-n', ns, 'jm', '-c', 'flink-main-container', '--timestamps', '--tail=1'])).trimEnd();
  assert.match(stamped, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z \d{4}-\d\d-\d\d /);
  const limited = await kubectl.ok(['logs', '-n', ns, 'jm', '-c', 'flink-main-container', '--limit-bytes=10']);
  assert.equal(limited, all[0].slice(0, 10));
  const since = (await kubectl.ok(['logs', '-n', ns, 'jm', '-c', 'flink-main-container', '--since=1h'])).trimEnd().split('\n');
  assert.ok(since.length >= all.length);
  const future = new Date(Date.now() + 3_600_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  assert.equal(await kubectl.ok(['logs', '-n', ns, 'jm', '-c', 'flink-main-container', `--since-time=${future}`]), '');
});

test('the log subresource refuses as the real server: several containers, unknown container, no previous instance', async () => {
  const base = `/api/v1/namespaces/${ns}/pods/jm/log`;
  // pkg/registry/core/pod/strategy.go validateContainer
  let r = await raw(sc.cluster.url, 'GET', base);
  assert.equal(r.status, 400);
  assert.equal(r.json.message, 'a container name must be specified for pod jm, choose one of: [flink-main-container sidecar]');
  r = await raw(sc.cluster.url, 'GET', `${base}?container=nope`);
  assert.equal(r.status, 400);
  assert.equal(r.json.reason, 'BadRequest');
  assert.equal(r.json.message, 'container nope is not valid for pod jm');
  const unknown = await kubectl.run(['logs', '-n', ns, 'jm', '-c', 'nope']);
  // kubectl checks the name itself first (same words as the server)
  assert.match(unknown.stderr, /container nope is not valid for pod jm/);
  // kubelet validateContainerLogStatus
  const previous = await kubectl.run(['logs', '-n', ns, 'jm', '-c', 'flink-main-container', '--previous']);
  assert.notEqual(previous.code, 0);
  assert.match(previous.stderr, /previous terminated container "flink-main-container" in pod "jm" not found/);
  r = await raw(sc.cluster.url, 'GET', `/api/v1/namespaces/${ns}/pods/ghost/log`);
  assert.equal(r.status, 404);
  assert.equal(r.json.message, 'pods "ghost" not found');
  // pkg/apis/core/validation ValidatePodLogOptions
  r = await raw(sc.cluster.url, 'GET', `${base}?container=sidecar&tailLines=-1`);
  assert.equal(r.status, 422);
  assert.equal(r.json.message, 'PodLogOptions "jm" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0');
  // kubectl picks the first container when none is named (and says so)
  const defaulted = await kubectl.run(['logs', '-n', ns, 'jm']);
  assert.equal(defaulted.code, 0);
  assert.match(defaulted.stderr, /Defaulted container "flink-main-container" out of: flink-main-container, sidecar/);
});

test('a container still waiting to start, and a restarted one with --previous', async () => {
  // kubelet validateContainerLogStatus: waiting → "is waiting to start: <reason>"
  await core.createNamespacedPod({
    namespace: ns,
    body: {
      metadata: { name: 'waiting' },
      spec: {
        containers: [{ name: 'main', image: 'example/app:1.0', volumeMounts: [{ name: 'cfg', mountPath: '/cfg' }] }],
        volumes: [{ name: 'cfg', configMap: { name: 'absent' } }],
      },
    },
  });
  await eventually(async () => (await core.readNamespacedPod({ namespace: ns, name: 'waiting' })).spec?.nodeName === 'devcluster-node', 5000, 'bound');
  await eventually(
    async () => (await core.readNamespacedPod({ namespace: ns, name: 'waiting' })).status?.containerStatuses?.[0]?.state?.waiting !== undefined,
    5000,
    'waiting status',
  );
  const waiting = await kubectl.run(['logs', '-n', ns, 'waiting']);
  assert.match(waiting.stderr, /Error from server \(BadRequest\): container "main" in pod "waiting" is waiting to start: ContainerCreating/);
  await core.createNamespacedPod({
    namespace: ns,
    body: { metadata: { name: 'crashing' }, spec: { containers: [{ name: 'main', image: 'example/app:crashloop' }] } },
  });
  await eventually(
    async () => ((await core.readNamespacedPod({ namespace: ns, name: 'crashing' })).status?.containerStatuses?.[0]?.restartCount ?? 0) > 0,
    5000,
    'restarted',
  );
  const previous = await kubectl.run(['logs', '-n', ns, 'crashing', '--previous']);
  assert.equal(previous.code, 0, previous.stderr);
});

test('kubectl logs -f streams until the container stops: deleting the pod ends it after the JobManager logged its SIGTERM shutdown', async () => {
  await runningPod(flinkPod('followed'));
  const follow = kubectl.start(['logs', '-f', '-n', ns, 'followed', '-c', 'flink-main-container']);
  await eventually(() => follow.output().includes('Starting StandaloneApplicationClusterEntryPoint.'), 5000, 'follow started');
  await kubectl.ok(['delete', 'pod', '-n', ns, 'followed', '--wait=false']);
  // ClusterEntrypoint / SignalHandler on SIGTERM
  await eventually(
    () => follow.output().includes('Terminating cluster entrypoint process StandaloneApplicationClusterEntryPoint with exit code 1445.'),
    5000,
    'shutdown logged',
  );
  // the stream ends when the container stops: kubectl exits by itself
  await follow.exited;
  assert.match(follow.output(), /SignalHandler +\[\] - RECEIVED SIGNAL 15: SIGTERM\. Shutting down as requested\./);
});

test('kubectl exec, attach and port-forward say the development cluster does not support them', async () => {
  const exec = await kubectl.run(['exec', '-n', ns, 'jm', '-c', 'flink-main-container', '--', 'ls']);
  assert.notEqual(exec.code, 0);
  assert.match(exec.stderr, /exec is not supported by the development cluster/);
  const pf = await kubectl.run(['port-forward', '-n', ns, 'pod/jm', '18081:8081'], undefined, 20_000);
  assert.notEqual(pf.code, 0);
  assert.match(pf.stderr, /port forwarding is not supported by the development cluster/);
  const attach = await kubectl.run(['attach', '-n', ns, 'jm', '-c', 'sidecar'], undefined, 20_000);
  assert.notEqual(attach.code, 0);
  assert.match(attach.stderr, /attach is not supported by the development cluster/);
  const r = await raw(sc.cluster.url, 'POST', `/api/v1/namespaces/${ns}/pods/ghost/exec?command=ls`);
  assert.equal(r.status, 404);
});

test('api-only: an unbound pod has an empty log, a bound one answers that its kubelet is unreachable', async () => {
  const cluster = await startDevCluster();
  try {
    const api = cluster.kubeConfig().makeApiClient(CoreV1Api);
    await api.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'unbound' }, spec: { containers: [{ name: 'main', image: 'x:1' }] } } });
    // LogLocation: no node → no location → empty answer
    let r = await raw(cluster.url, 'GET', '/api/v1/namespaces/default/pods/unbound/log');
    assert.equal(r.status, 200);
    assert.equal(r.text, '');
    await api.createNamespacedPod({
      namespace: 'default',
      body: { metadata: { name: 'bound' }, spec: { nodeName: 'node-1', containers: [{ name: 'main', image: 'x:1' }] } },
    });
    r = await raw(cluster.url, 'GET', '/api/v1/namespaces/default/pods/bound/log');
    assert.equal(r.status, 500);
    assert.equal(r.json.message, 'Get "https://node-1:10250/containerLogs/default/bound/main": dial tcp node-1:10250: connect: connection refused');
  } finally {
    await cluster.stop();
  }
});
