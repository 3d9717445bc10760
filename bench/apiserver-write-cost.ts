/**
 * `npx tsx bench/apiserver-write-cost.ts`: what one write costs inside the dev cluster's API
 * server, without HTTP, with 2,000 objects of each kind stored:
 * 1. a status update (PUT /status) of a 2 KB Deployment;
 * 2. a JSON merge patch of a Deployment's annotation;
 * 3. a JSON merge patch of `/status` of a FlinkDeployment (the real CRD of crds/, installed as a
 *    client installs it: a create of the CustomResourceDefinition), written through v1;
 * 4. a PUT of a ~3 KB ConfigMap (a state ConfigMap's shape) locked on its resourceVersion, the
 *    body being the previous answer with one data key changed (no GET in between).
 * 3 and 4 are the two writes the operator makes most. The figure behind finding 8 of
 * design/performance.md (structuredClone → cloneJson). The loop's own copy of the body (one
 * structuredClone per PUT, what a parsed request body would be) is included in figures 1 and 4.
 * `BENCH_ROUNDS` (default 20,000) sets the measured writes per figure; each figure is printed as
 * wall-clock µs per write and, in parentheses, the process's CPU µs per write (GC threads included).
 * `BENCH_ONLY=3,4` measures only those figures (for a profile of one write).
 */
import { readFileSync } from 'node:fs';
import { ApiOperations, scopeFor } from '../src/devcluster/apiserver/api-operations.js';
import { ObjectStore } from '../src/devcluster/apiserver/object-store.js';
import { ResourceRegistry } from '../src/devcluster/apiserver/resource-registry.js';
import { parseJsonText, type JsonObject } from '../src/devcluster/apiserver/json-clone.js';
import type { KubeObject } from '../src/devcluster/apiserver/resource-types.js';

const store = new ObjectStore(10_000);
const registry = new ResourceRegistry();
const ops = new ApiOperations(store, registry);
ops.create(scopeFor(registry.resolve('', 'v1', 'namespaces')!, ''), { metadata: { name: 'default' } }, {});
const N = 2_000;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20_000);

// ---------------------------------------------------------------- Deployments

const deployments = registry.resolve('apps', 'v1', 'deployments')!;
const scope = scopeFor(deployments, 'default');

const deployment = (i: number) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: `d${i}`, labels: { app: `d${i}`, type: 'flink-standalone-kubernetes', component: 'jobmanager' }, annotations: { note: 'x'.repeat(200) } },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: `d${i}` } },
    template: {
      metadata: { labels: { app: `d${i}` } },
      spec: {
        containers: [
          {
            name: 'flink-main-container',
            image: 'flink:1.20',
            args: ['jobmanager'],
            env: Array.from({ length: 10 }, (_, k) => ({ name: `E${k}`, value: 'v'.repeat(30) })),
            ports: [
              { containerPort: 8081, name: 'rest' },
              { containerPort: 6123, name: 'rpc' },
            ],
          },
        ],
      },
    },
  },
});

for (let i = 0; i < N; i++) ops.create(scope, deployment(i), {});

// ---------------------------------------------------------------- FlinkDeployments (the real CRD)

const crdText = readFileSync(new URL('../crds/flinkdeployments.flink.apache.org.yaml', import.meta.url), 'utf8');
ops.create(scopeFor(registry.resolve('apiextensions.k8s.io', 'v1', 'customresourcedefinitions')!, ''), parseJsonText(crdText, true), {});
const flinkDeployments = registry.resolve('flink.apache.org', 'v1', 'flinkdeployments')!;
const flinkScope = scopeFor(flinkDeployments, 'default');

const flinkDeployment = (i: number) => ({
  apiVersion: 'flink.apache.org/v1',
  kind: 'FlinkDeployment',
  metadata: { name: `f${i}`, labels: { team: 'data' } },
  spec: {
    image: 'flink:1.20',
    flinkVersion: 'v1_20',
    serviceAccount: 'flink',
    flinkConfiguration: {
      'taskmanager.numberOfTaskSlots': '2',
      'state.savepoints.dir': 'file:///flink-data/savepoints',
      'execution.checkpointing.interval': '10s',
    },
    jobManager: { resource: { cpu: 1, memory: '2048m' } },
    taskManager: { resource: { cpu: 1, memory: '2048m' }, replicas: 2 },
    job: { jarURI: 'local:///opt/flink/examples/streaming/StateMachineExample.jar', parallelism: 2, upgradeMode: 'savepoint', state: 'running' },
  },
});
for (let i = 0; i < N; i++) ops.create(flinkScope, flinkDeployment(i), { fieldManager: 'kubectl' });

const flinkStatus = (k: number): JsonObject => {
  const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  return {
    status: {
      observedGeneration: 1,
      lifecycleState: 'STABLE',
      jobManagerDeploymentStatus: 'READY',
      clusterInfo: { 'flink-version': '1.20.0', 'total-cpu': '3.0', 'total-memory': '6442450944' },
      taskManager: { labelSelector: `component=taskmanager,app=f${k % N}`, replicas: 2 },
      conditions: [{ type: 'Ready', status: 'True', observedGeneration: 1, lastTransitionTime: now, reason: 'Stable', message: 'the job is running' }],
      jobStatus: { jobName: 'State machine job', jobId: 'a'.repeat(32), state: 'RUNNING', startTime: '1700000000000', updateTime: String(1700000000000 + k) },
      stateRef: { configMapName: `f${k % N}-state`, revision: k },
    },
  };
};

// ---------------------------------------------------------------- state ConfigMaps

const configMaps = registry.resolve('', 'v1', 'configmaps')!;
const cmScope = scopeFor(configMaps, 'default');
const stateConfigMap = (i: number) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: {
    name: `f${i}-state`,
    labels: { 'app.kubernetes.io/managed-by': 'flink-operator', 'app.kubernetes.io/component': 'operator-state', 'flink.apache.org/deployment': `f${i}` },
    annotations: { 'flink-operator.io/written-by': 'flink-operator', 'flink-operator.io/state-digest': 'd'.repeat(64) },
    ownerReferences: [
      {
        apiVersion: 'flink.apache.org/v1',
        kind: 'FlinkDeployment',
        name: `f${i}`,
        uid: '0'.repeat(8) + `-0000-0000-0000-${String(i).padStart(12, '0')}`,
        controller: true,
      },
    ],
  },
  data: {
    formatVersion: '1',
    revision: '1',
    deployment: `default/f${i}`,
    phase: 'Stable',
    lastReconciledGeneration: '1',
    lastReconciledSpec: JSON.stringify(flinkDeployment(i).spec),
    lastStableSpec: JSON.stringify(flinkDeployment(i).spec),
    savepointHistory: JSON.stringify(
      Array.from({ length: 5 }, (_, k) => ({
        location: `file:///flink-data/savepoints/savepoint-${k}-${'b'.repeat(12)}`,
        timeStamp: 1700000000000 + k,
        triggerType: 'PERIODIC',
      })),
    ),
    lastCheckpoint: JSON.stringify({ timeStamp: 1700000000000, triggerType: 'PERIODIC', formatType: 'CANONICAL' }),
  },
});
const lastAnswer: KubeObject[] = [];
for (let i = 0; i < N; i++) lastAnswer.push(ops.create(cmScope, stateConfigMap(i), { fieldManager: 'flink-operator' }).body);

// ---------------------------------------------------------------- measurements

const only = process.env.BENCH_ONLY?.split(',').map(Number);
let figure = 0;

function measure(name: string, op: (k: number) => void): void {
  figure++;
  if (only && !only.includes(figure)) return;
  for (let k = 0; k < 2_000; k++) op(k); // warm-up
  const started = performance.now();
  const cpu = process.cpuUsage();
  for (let k = 0; k < ROUNDS; k++) op(k);
  const { user, system } = process.cpuUsage(cpu);
  // the CPU time too: on a shared machine the wall-clock figure also counts time waiting for a core
  console.log(`${name}: ${(((performance.now() - started) * 1000) / ROUNDS).toFixed(1)} µs (CPU ${((user + system) / ROUNDS).toFixed(1)} µs)`);
}

measure('status update (PUT /status)', (k) => {
  const name = `d${k % N}`;
  const body = structuredClone(ops.getStored(scope, name));
  const now = new Date().toISOString();
  body.status = {
    observedGeneration: 1,
    replicas: 1,
    readyReplicas: k % 2,
    conditions: [{ type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable', lastUpdateTime: now, lastTransitionTime: now }],
  };
  ops.update(scope, name, body, {}, 'status');
});
measure('merge patch of an annotation', (k) => {
  ops.patch(scope, `d${k % N}`, 'merge', JSON.stringify({ metadata: { annotations: { revision: String(k) } } }), {}, '');
});
measure('merge patch of a FlinkDeployment /status', (k) => {
  ops.patch(flinkScope, `f${k % N}`, 'merge', JSON.stringify(flinkStatus(k)), { fieldManager: 'flink-operator' }, 'status');
});
measure('ConfigMap PUT locked on resourceVersion (3 KB)', (k) => {
  const i = k % N;
  const body = structuredClone(lastAnswer[i]);
  body.data = { ...(body.data as JsonObject), revision: String(k) };
  lastAnswer[i] = ops.update(cmScope, `f${i}-state`, body, { fieldManager: 'flink-operator' }, '').body;
});
