import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { V1Deployment, V1Pod, V1ReplicaSet } from '@kubernetes/client-node';
import { computeDeploymentStatus, maxUnavailable, podTemplateHash } from '../../../src/devcluster/simulation/deployment-status.js';
import { buildPodStatus, imageTag, podFailureMode } from '../../../src/devcluster/simulation/pod-status.js';
import { flinkPathString, SnapshotStorage } from '../../../src/devcluster/simulation/snapshot-storage.js';
import { KeyedWorkQueue } from '../../../src/devcluster/simulation/keyed-work-queue.js';
import { PodLabelIndex } from '../../../src/devcluster/simulation/pod-label-index.js';

function dep(replicas: number, strategy?: 'Recreate', status?: V1Deployment['status']): V1Deployment {
  return {
    metadata: { name: 'd', namespace: 'ns', generation: 1, uid: 'u' },
    spec: {
      replicas,
      selector: { matchLabels: { a: 'b' } },
      strategy: strategy ? { type: strategy } : undefined,
      template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i:1' }] } },
    },
    status,
  };
}

function rs(name: string, spec: number, ready: number, pods = spec): V1ReplicaSet {
  return {
    metadata: { name, namespace: 'ns' },
    spec: { replicas: spec, selector: {} },
    status: { replicas: pods, readyReplicas: ready, availableReplicas: ready },
  };
}

test('pod-template-hash is stable under key order, changes with the template, and uses the safe alphabet', () => {
  const a = podTemplateHash({ metadata: { labels: { x: '1', y: '2' } }, spec: { containers: [{ name: 'c', image: 'i:1' }] } });
  const b = podTemplateHash({ spec: { containers: [{ image: 'i:1', name: 'c' }] }, metadata: { labels: { y: '2', x: '1' } } });
  const c = podTemplateHash({ metadata: { labels: { x: '1', y: '2' } }, spec: { containers: [{ name: 'c', image: 'i:2' }] } });
  assert.equal(a, b);
  assert.notEqual(a, c);
  assert.match(a, /^[bcdfghjklmnpqrstvwxz2456789]+$/);
  assert.notEqual(podTemplateHash({}, 1), podTemplateHash({}, 0), 'collisionCount changes the hash');
});

test('maxUnavailable: 0 for Recreate, 25% rounded down for RollingUpdate, 1 when surge and unavailable are both 0', () => {
  assert.equal(maxUnavailable(dep(4, 'Recreate')), 0);
  assert.equal(maxUnavailable(dep(4)), 1);
  assert.equal(maxUnavailable(dep(2)), 0);
  const d = dep(3);
  d.spec!.strategy = { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: 0 } };
  assert.equal(maxUnavailable(d), 1);
});

test('Deployment status: counts from ReplicaSets, conditions with the controller reasons and messages', () => {
  const now = new Date('2026-01-01T00:00:00Z');
  const created = computeDeploymentStatus({
    deployment: dep(2),
    replicaSets: [rs('d-1', 2, 0, 0)],
    newReplicaSet: rs('d-1', 2, 0, 0),
    createdNewReplicaSet: true,
    now,
  });
  assert.deepEqual(
    created.conditions!.map((c) => [c.type, c.status, c.reason, c.message]),
    [
      ['Available', 'False', 'MinimumReplicasUnavailable', 'Deployment does not have minimum availability.'],
      ['Progressing', 'True', 'NewReplicaSetCreated', 'Created new replica set "d-1"'],
    ],
  );
  assert.equal(created.unavailableReplicas, 2);
  const later = new Date(now.getTime() + 1000);
  const done = computeDeploymentStatus({
    deployment: dep(2, undefined, created),
    replicaSets: [rs('d-1', 2, 2)],
    newReplicaSet: rs('d-1', 2, 2),
    createdNewReplicaSet: false,
    now: later,
  });
  assert.deepEqual(
    done.conditions!.map((c) => [c.type, c.status, c.reason, c.message]),
    [
      ['Available', 'True', 'MinimumReplicasAvailable', 'Deployment has minimum availability.'],
      ['Progressing', 'True', 'NewReplicaSetAvailable', 'ReplicaSet "d-1" has successfully progressed.'],
    ],
  );
  const progressing = done.conditions!.find((c) => c.type === 'Progressing')!;
  assert.equal(new Date(progressing.lastTransitionTime!).getTime(), now.getTime(), 'status unchanged → lastTransitionTime kept');
  assert.equal(new Date(progressing.lastUpdateTime!).getTime(), later.getTime());
  assert.deepEqual([done.replicas, done.updatedReplicas, done.readyReplicas, done.availableReplicas, done.unavailableReplicas], [2, 2, 2, 2, undefined]);

  // no progress past the deadline → Progressing False / ProgressDeadlineExceeded
  const stuck = dep(1, undefined, {
    replicas: 1,
    updatedReplicas: 1,
    readyReplicas: 0,
    availableReplicas: 0,
    conditions: [{ type: 'Progressing', status: 'True', reason: 'ReplicaSetUpdated', message: 'x', lastUpdateTime: now, lastTransitionTime: now }],
  });
  stuck.spec!.progressDeadlineSeconds = 1;
  const timedOut = computeDeploymentStatus({
    deployment: stuck,
    replicaSets: [rs('d-1', 1, 0)],
    newReplicaSet: rs('d-1', 1, 0),
    createdNewReplicaSet: false,
    now: new Date(now.getTime() + 1500),
  });
  const p = timedOut.conditions!.find((c) => c.type === 'Progressing')!;
  assert.deepEqual([p.status, p.reason, p.message], ['False', 'ProgressDeadlineExceeded', 'ReplicaSet "d-1" has timed out progressing.']);
});

test('failure modes are chosen by image tag; registry ports are not tags', () => {
  assert.equal(imageTag('flink:1.20'), '1.20');
  assert.equal(imageTag('registry:5000/flink'), '');
  assert.equal(imageTag('registry:5000/flink:missing@sha256:abc'), 'missing');
  const pod = (image: string): V1Pod => ({
    metadata: { name: 'p', namespace: 'n', uid: 'u' },
    spec: {
      containers: [
        { name: 'a', image: 'x:1' },
        { name: 'b', image },
      ],
    },
  });
  assert.equal(podFailureMode(pod('x:crashloop')), 'crashloop');
  assert.equal(podFailureMode(pod('x:missing')), 'missing');
  assert.equal(podFailureMode(pod('x:notready')), 'notready');
  assert.equal(podFailureMode(pod('registry:5000/crashloop')), 'none');
  const status = buildPodStatus(
    pod('x:1'),
    {
      stage: { kind: 'crashed', backOffSeconds: 10, lastStartedAt: new Date(0), finishedAt: new Date(1) },
      restartCount: 3,
      podIP: '10.244.0.9',
      hostIP: '10.0.0.1',
      startTime: new Date(0),
      containerIdSeed: 'u',
    },
    new Date(2),
  );
  assert.equal(status.phase, 'Running');
  assert.equal(status.containerStatuses![1].state!.waiting!.reason, 'CrashLoopBackOff');
  assert.equal(status.containerStatuses![1].state!.waiting!.message, 'back-off 10s restarting failed container=b pod=p_n(u)');
  assert.equal(status.containerStatuses![1].lastState!.terminated!.exitCode, 1);
  assert.equal(status.conditions!.find((c) => c.type === 'Ready')!.status, 'False');
});

test('snapshot storage treats Flink path spellings as one file and forgets disposed paths', () => {
  assert.equal(flinkPathString('file:///a/b/'), 'file:/a/b');
  assert.equal(flinkPathString('/a/b'), 'file:/a/b');
  assert.equal(flinkPathString('s3://bucket/x/'), 's3://bucket/x');
  const storage = new SnapshotStorage();
  storage.write({ location: 'file:/sp/savepoint-1', kind: 'savepoint', jobId: 'j', checkpointId: 3, completedAt: 0 });
  assert.ok(storage.find('file:///sp/savepoint-1'));
  assert.ok(storage.find('/sp/savepoint-1/'));
  assert.equal(storage.remove('file:///sp/savepoint-1', 'disposed', 5), true);
  assert.equal(storage.find('file:/sp/savepoint-1'), undefined);
  assert.deepEqual(storage.removalOf('/sp/savepoint-1'), { reason: 'disposed', at: 5 });
  assert.equal(storage.remove('file:/sp/savepoint-1', 'disposed', 6), false);
});

test('work queue: coalesces adds, never runs a key twice at once, reruns a key added while running, retries failures', async () => {
  const runs: string[] = [];
  let concurrentSameKey = false;
  const active = new Set<string>();
  let failOnce = true;
  const q = new KeyedWorkQueue(
    async (key) => {
      if (active.has(key)) concurrentSameKey = true;
      active.add(key);
      runs.push(key);
      await sleep(10);
      active.delete(key);
      if (key === 'flaky' && failOnce) {
        failOnce = false;
        throw new Error('boom');
      }
    },
    { concurrency: 4, baseRetryMs: 5 },
  );
  q.add('a');
  q.add('a'); // coalesced with the queued one
  await sleep(2);
  q.add('a'); // while running → runs once more afterwards
  q.add('a');
  q.add('flaky');
  await sleep(80);
  await q.idle();
  assert.equal(concurrentSameKey, false);
  assert.equal(runs.filter((k) => k === 'a').length, 2);
  assert.equal(runs.filter((k) => k === 'flaky').length, 2, 'a failed run is retried');
  await q.stop();
});

test('pod label index selects exactly the pods matching every selector pair', () => {
  const pods = new Map<string, V1Pod>();
  const index = new PodLabelIndex((ns, name) => pods.get(`${ns}/${name}`));
  const put = (name: string, labels: Record<string, string>, ns = 'n') => {
    const p: V1Pod = { metadata: { name, namespace: ns, labels } };
    pods.set(`${ns}/${name}`, p);
    index.observe('add', p);
  };
  put('jm', { app: 'x', component: 'jobmanager' });
  put('tm', { app: 'x', component: 'taskmanager' });
  put('other', { app: 'y', component: 'jobmanager' });
  put('elsewhere', { app: 'x', component: 'jobmanager' }, 'm');
  assert.deepEqual(
    index.select('n', { app: 'x', component: 'jobmanager' }).map((p) => p.metadata!.name),
    ['jm'],
  );
  assert.deepEqual(index.select('n', {}), []);
  index.observe('update', { metadata: { name: 'jm', namespace: 'n', labels: { app: 'z' } } });
  pods.set('n/jm', { metadata: { name: 'jm', namespace: 'n', labels: { app: 'z' } } });
  assert.deepEqual(index.select('n', { app: 'x', component: 'jobmanager' }), []);
  index.observe('delete', pods.get('n/tm')!);
  assert.deepEqual(index.select('n', { app: 'x' }), []);
});
