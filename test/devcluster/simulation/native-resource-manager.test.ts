import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import type { SimulationAppsApi, SimulationCoreApi } from '../../../src/devcluster/simulation/simulation-api-client.js';
import { parseFlinkArgs } from '../../../src/devcluster/simulation/jobmanager-launch.js';
import {
  buildNativeTaskManagerPod,
  flinkMemoryMiB,
  NativeResourceManager,
  taskManagerAttemptOf,
} from '../../../src/devcluster/simulation/native-resource-manager.js';

const config = new Map<string, string>([
  ['kubernetes.cluster-id', 'orders'],
  ['kubernetes.container.image.ref', 'flink:1.20'],
  ['kubernetes.service-account', 'flink'],
  ['taskmanager.numberOfTaskSlots', '2'],
  ['taskmanager.memory.process.size', '1g'],
  ['kubernetes.taskmanager.labels', 'team:a, tier:batch'],
]);

test('native command lines: kubernetes-jobmanager.sh targets and kubernetes-taskmanager.sh', () => {
  const app = parseFlinkArgs(['bash', '-c', 'kubernetes-jobmanager.sh kubernetes-application ']);
  assert.equal(app.role, 'application-jobmanager');
  assert.equal(app.native, true);
  assert.equal(parseFlinkArgs(['bash', '-c', 'kubernetes-jobmanager.sh kubernetes-session -Dx=y']).role, 'session-jobmanager');
  assert.equal(parseFlinkArgs(['bash', '-c', 'kubernetes-jobmanager.sh kubernetes-session -Dx=y']).dynamicProperties.get('x'), 'y');
  assert.equal(parseFlinkArgs(['bash', '-c', 'kubernetes-taskmanager.sh -Dtaskmanager.resource-id=p ']).role, 'taskmanager');
  assert.equal(parseFlinkArgs(['bash', '-c', 'echo hi']).role, 'unknown');
  assert.equal(parseFlinkArgs(['standalone-job']).native, false);
});

test('a native TaskManager pod: name, labels, owner, container, resources, config volume, service account', () => {
  const pod = buildNativeTaskManagerPod({ namespace: 'team-a', clusterId: 'orders', podName: 'orders-taskmanager-1-2', ownerUid: 'jm-uid', config });
  assert.equal(pod.metadata?.name, 'orders-taskmanager-1-2');
  assert.deepEqual(pod.metadata?.labels, { team: 'a', tier: 'batch', type: 'flink-native-kubernetes', app: 'orders', component: 'taskmanager' });
  assert.deepEqual(pod.metadata?.ownerReferences, [
    { apiVersion: 'apps/v1', kind: 'Deployment', name: 'orders', uid: 'jm-uid', controller: true, blockOwnerDeletion: true },
  ]);
  const c = pod.spec!.containers[0];
  assert.equal(c.name, 'flink-main-container');
  assert.equal(c.image, 'flink:1.20');
  assert.deepEqual(c.command, ['/docker-entrypoint.sh']);
  assert.deepEqual(c.args, ['bash', '-c', 'kubernetes-taskmanager.sh -Dtaskmanager.resource-id=orders-taskmanager-1-2 ']);
  assert.deepEqual(c.resources, { requests: { cpu: '2', memory: '1024Mi' }, limits: { cpu: '2', memory: '1024Mi' } });
  assert.deepEqual(c.volumeMounts, [{ name: 'flink-config-volume', mountPath: '/opt/flink/conf' }]);
  assert.equal(pod.spec?.volumes?.[0]?.configMap?.name, 'flink-config-orders');
  assert.equal(pod.spec?.restartPolicy, 'Never');
  assert.equal(pod.spec?.serviceAccountName, 'flink');
});

test('a TaskManager pod template is the base: its sidecars, volumes, node selector and env stay', () => {
  const template: V1Pod = {
    metadata: { labels: { from: 'template' } },
    spec: {
      nodeSelector: { pool: 'flink' },
      containers: [
        { name: 'flink-main-container', env: [{ name: 'A', value: '1' }], volumeMounts: [{ name: 'data', mountPath: '/data' }] },
        { name: 'sidecar', image: 'busybox' },
      ],
      volumes: [{ name: 'data', emptyDir: {} }],
    },
  };
  const pod = buildNativeTaskManagerPod({ namespace: 'ns', clusterId: 'orders', podName: 'orders-taskmanager-1-1', ownerUid: 'u', config, template });
  assert.equal(pod.metadata?.labels?.from, 'template');
  assert.deepEqual(pod.spec?.nodeSelector, { pool: 'flink' });
  assert.deepEqual(
    pod.spec?.containers.map((c) => c.name),
    ['flink-main-container', 'sidecar'],
  );
  assert.deepEqual(
    pod.spec?.containers[0]?.env?.map((e) => e.name),
    ['A', '_POD_IP_ADDRESS'],
  );
  assert.deepEqual(
    pod.spec?.containers[0]?.volumeMounts?.map((m) => m.mountPath),
    ['/data', '/opt/flink/conf'],
  );
  assert.deepEqual(
    pod.spec?.volumes?.map((v) => v.name),
    ['data', 'flink-config-volume'],
  );
});

test('attempt numbers and memory sizes', () => {
  assert.equal(taskManagerAttemptOf('orders', 'orders-taskmanager-3-7'), 3);
  assert.equal(taskManagerAttemptOf('orders', 'other-taskmanager-3-7'), 0);
  assert.equal(taskManagerAttemptOf('orders', 'orders-taskmanager-x'), 0);
  assert.equal(flinkMemoryMiB('1728m'), 1728);
  assert.equal(flinkMemoryMiB('2 gb'), 2048);
  assert.equal(flinkMemoryMiB(String(512 * 1024 * 1024)), 512);
  assert.equal(flinkMemoryMiB('lots'), undefined);
});

/** Fake API clients recording what the resource manager asked. */
function fakeApis(existing: V1Pod[]) {
  const calls: string[] = [];
  const created: V1Pod[] = [];
  const core = {
    async listNamespacedPod(req: { namespace: string; labelSelector: string }) {
      calls.push(`list ${req.namespace} ${req.labelSelector}`);
      return { items: existing };
    },
    async createNamespacedPod(req: { namespace: string; body: V1Pod }) {
      calls.push(`create ${req.body.metadata?.name}`);
      created.push(req.body);
      return req.body;
    },
  } as unknown as SimulationCoreApi;
  const apps = {
    async readNamespacedDeployment(req: { namespace: string; name: string }) {
      calls.push(`read deployment ${req.name}`);
      return { metadata: { name: req.name, uid: 'jm-uid' } };
    },
  } as unknown as SimulationAppsApi;
  return { core, apps, calls, created };
}

test('a new JobManager creates ceil(parallelism / slots) TaskManager pods of attempt 1, owned by its Deployment', async () => {
  const { core, apps, calls, created } = fakeApis([]);
  const rm = new NativeResourceManager({ core, apps, namespace: 'ns', clusterId: 'orders', config, parallelism: 5, slotsPerTaskManager: 2 });
  await rm.start();
  assert.deepEqual(calls, [
    'list ns type=flink-native-kubernetes,app=orders,component=taskmanager',
    'read deployment orders',
    'create orders-taskmanager-1-1',
    'create orders-taskmanager-1-2',
    'create orders-taskmanager-1-3',
  ]);
  assert.ok(created.every((p) => p.metadata?.ownerReferences?.[0]?.uid === 'jm-uid'));
});

test('a restarted JobManager adopts the live TaskManagers of previous attempts and creates only the missing ones, with the next attempt number', async () => {
  const live = (name: string, phase = 'Running'): V1Pod => ({ metadata: { name }, status: { phase } });
  const { core, apps, calls } = fakeApis([live('orders-taskmanager-2-1'), live('orders-taskmanager-1-4', 'Failed')]);
  const rm = new NativeResourceManager({ core, apps, namespace: 'ns', clusterId: 'orders', config, parallelism: 6, slotsPerTaskManager: 2 });
  await rm.start();
  assert.deepEqual(
    calls.filter((c) => c.startsWith('create')),
    ['create orders-taskmanager-3-1', 'create orders-taskmanager-3-2'],
  );
});

test('a stopped JobManager creates nothing', async () => {
  const { core, apps, calls } = fakeApis([]);
  const rm = new NativeResourceManager({ core, apps, namespace: 'ns', clusterId: 'orders', config, parallelism: 2, slotsPerTaskManager: 1 });
  rm.stop();
  await rm.start();
  assert.equal(calls.filter((c) => c.startsWith('create')).length, 0);
});
