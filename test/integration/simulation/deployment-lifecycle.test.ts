import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { V1Pod } from '@kubernetes/client-node';
import { SIMULATION_USER_AGENT } from '../../../src/devcluster/simulated-cluster.js';
import { type Harness, deployment, eventually, freshNamespace, patchDeployment, rolledOut, startHarness } from './simulation-harness.js';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h.sc.stop();
});

function ready(p: V1Pod): boolean {
  return p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

test('a Deployment created with client-node becomes Available with owner-referenced, Running, Ready Pods', async () => {
  const ns = await freshNamespace(h);
  await h.apps.createNamespacedDeployment({ namespace: ns, body: deployment('web', { replicas: 2 }) });
  const d = await rolledOut(h, ns, 'web', 2, 1);
  const available = d.status!.conditions!.find((c) => c.type === 'Available')!;
  assert.equal(available.status, 'True');
  assert.equal(available.reason, 'MinimumReplicasAvailable');
  assert.equal(available.message, 'Deployment has minimum availability.');
  assert.equal(d.status!.readyReplicas, 2);
  assert.equal(d.status!.unavailableReplicas, undefined);
  assert.equal(d.metadata!.annotations!['deployment.kubernetes.io/revision'], '1');

  const rsList = await h.apps.listNamespacedReplicaSet({ namespace: ns });
  assert.equal(rsList.items.length, 1);
  const rs = rsList.items[0];
  const hash = rs.metadata!.labels!['pod-template-hash'];
  assert.equal(rs.metadata!.name, `web-${hash}`);
  assert.deepEqual(
    rs.metadata!.ownerReferences!.map((o) => [o.kind, o.name, o.uid, o.controller]),
    [['Deployment', 'web', d.metadata!.uid, true]],
  );
  assert.equal(rs.status!.readyReplicas, 2);

  const pods = (await h.core.listNamespacedPod({ namespace: ns, labelSelector: 'app=web' })).items;
  assert.equal(pods.length, 2);
  for (const p of pods) {
    assert.match(p.metadata!.name!, new RegExp(`^web-${hash}-[a-z0-9]{5}$`));
    assert.deepEqual(
      p.metadata!.ownerReferences!.map((o) => [o.kind, o.name, o.uid, o.controller]),
      [['ReplicaSet', rs.metadata!.name, rs.metadata!.uid, true]],
    );
    assert.equal(p.status!.phase, 'Running');
    assert.ok(ready(p));
    assert.match(p.status!.podIP!, /^10\.244\.\d+\.\d+$/);
    assert.equal(p.status!.containerStatuses![0].ready, true);
    assert.ok(p.status!.containerStatuses![0].state!.running);
  }

  // every request of the simulation, watches included, carries its User-Agent
  const log = h.sc.cluster.requestLog;
  assert.ok(log.count({ userAgentPrefix: SIMULATION_USER_AGENT, verb: 'watch', resource: 'pods' }) >= 1);
  assert.ok(log.count({ userAgentPrefix: SIMULATION_USER_AGENT, verb: 'create', resource: 'pods' }) >= 2);
  assert.ok(log.count({ userAgentPrefix: SIMULATION_USER_AGENT, verb: 'update', resource: 'deployments', subresource: 'status' }) >= 1);
  assert.equal(log.count({ excludeUserAgentPrefix: SIMULATION_USER_AGENT, verb: 'create', resource: 'pods' }), 0);
});

test('a Recreate rollout replaces the pod only after the old one is gone, and records revision 2', async () => {
  const ns = await freshNamespace(h);
  await h.apps.createNamespacedDeployment({ namespace: ns, body: deployment('jm', { strategy: 'Recreate' }) });
  await rolledOut(h, ns, 'jm', 1, 1);
  const oldPod = (await h.core.listNamespacedPod({ namespace: ns })).items[0];

  let overlap = false;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const pods = (await h.core.listNamespacedPod({ namespace: ns })).items.filter((p) => !p.metadata?.deletionTimestamp);
      if (new Set(pods.map((p) => p.metadata!.labels!['pod-template-hash'])).size > 1) overlap = true;
      await sleep(3);
    }
  })();
  await patchDeployment(h, ns, 'jm', { spec: { template: { spec: { containers: [{ name: 'main', image: 'example/app:2.0' }] } } } });
  const d = await rolledOut(h, ns, 'jm', 1, 2);
  sampling = false;
  await sampler;
  assert.equal(overlap, false, 'Recreate never runs old and new pods together');
  assert.equal(d.metadata!.annotations!['deployment.kubernetes.io/revision'], '2');
  const pods = (await h.core.listNamespacedPod({ namespace: ns })).items;
  assert.equal(pods.length, 1);
  assert.notEqual(pods[0].metadata!.uid, oldPod.metadata!.uid);
  assert.equal(pods[0].spec!.containers[0].image, 'example/app:2.0');
  const rss = (await h.apps.listNamespacedReplicaSet({ namespace: ns })).items;
  assert.deepEqual(rss.map((rs) => [rs.metadata!.annotations!['deployment.kubernetes.io/revision'], rs.spec!.replicas]).sort(), [
    ['1', 0],
    ['2', 1],
  ]);
});

test('a RollingUpdate rollout keeps pods available and ends with only new pods', async () => {
  const ns = await freshNamespace(h);
  await h.apps.createNamespacedDeployment({ namespace: ns, body: deployment('tm', { replicas: 2 }) });
  await rolledOut(h, ns, 'tm', 2, 1);
  let minAvailable = Infinity;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const pods = (await h.core.listNamespacedPod({ namespace: ns })).items;
      minAvailable = Math.min(minAvailable, pods.filter(ready).length);
      await sleep(3);
    }
  })();
  await patchDeployment(h, ns, 'tm', { spec: { template: { metadata: { labels: { app: 'tm', version: 'b' } } } } });
  await rolledOut(h, ns, 'tm', 2, 2);
  sampling = false;
  await sampler;
  assert.ok(minAvailable >= 2 - 0, `availability dropped to ${minAvailable}`); // maxUnavailable 25% of 2 rounds down to 0
  const pods = (await h.core.listNamespacedPod({ namespace: ns })).items;
  assert.equal(pods.length, 2);
  assert.ok(pods.every((p) => p.metadata!.labels!['version'] === 'b'));
});

test('scaling up and down changes pods, ReplicaSet and Deployment status', async () => {
  const ns = await freshNamespace(h);
  await h.apps.createNamespacedDeployment({ namespace: ns, body: deployment('s', { replicas: 1 }) });
  await rolledOut(h, ns, 's', 1, 1);
  await patchDeployment(h, ns, 's', { spec: { replicas: 3 } });
  await rolledOut(h, ns, 's', 3, 2);
  assert.equal((await h.core.listNamespacedPod({ namespace: ns })).items.length, 3);
  await patchDeployment(h, ns, 's', { spec: { replicas: 1 } });
  await rolledOut(h, ns, 's', 1, 3);
  await eventually(async () => (await h.core.listNamespacedPod({ namespace: ns })).items.length === 1, 'one pod left');
  const rss = (await h.apps.listNamespacedReplicaSet({ namespace: ns })).items;
  assert.equal(rss.length, 1, 'scaling does not create a ReplicaSet');
  assert.equal(rss[0].spec!.replicas, 1);
});

test('image tag crashloop: CrashLoopBackOff with restarts; the Deployment is unavailable and misses its progress deadline', async () => {
  const ns = await freshNamespace(h);
  await h.apps.createNamespacedDeployment({ namespace: ns, body: deployment('crash', { image: 'example/app:crashloop', progressDeadlineSeconds: 1 }) });
  const pod = await eventually(async () => {
    const p = (await h.core.listNamespacedPod({ namespace: ns })).items[0];
    const cs = p?.status?.containerStatuses?.[0];
    return cs && (cs.restartCount ?? 0) >= 2 && cs.state?.waiting?.reason === 'CrashLoopBackOff' ? p : undefined;
  }, 'CrashLoopBackOff with 2 restarts');
  const cs = pod.status!.containerStatuses![0];
  assert.equal(cs.lastState!.terminated!.exitCode, 1);
  assert.equal(cs.lastState!.terminated!.reason, 'Error');
  assert.match(cs.state!.waiting!.message!, /^back-off \d+s restarting failed container=main pod=/);
  assert.equal(pod.status!.phase, 'Running');
  assert.equal(ready(pod), false);
  const backOff = await eventually(async () => {
    const events = (await h.core.listNamespacedEvent({ namespace: ns })).items;
    return events.find((e) => e.reason === 'BackOff' && e.involvedObject.uid === pod.metadata!.uid && (e.count ?? 0) >= 2);
  }, 'an aggregated BackOff event');
  assert.equal(backOff.type, 'Warning');
  assert.equal(backOff.message, `Back-off restarting failed container main in pod ${pod.metadata!.name}_${ns}(${pod.metadata!.uid})`);
  assert.equal(backOff.source?.component, 'kubelet');
  const d = await eventually(
    async () => {
      const d = await h.apps.readNamespacedDeployment({ namespace: ns, name: 'crash' });
      return d.status?.conditions?.find((c) => c.type === 'Progressing')?.reason === 'ProgressDeadlineExceeded' ? d : undefined;
    },
    'ProgressDeadlineExceeded',
    4000,
  );
  const available = d.status!.conditions!.find((c) => c.type === 'Available')!;
  assert.deepEqual([available.status, available.reason], ['False', 'MinimumReplicasUnavailable']);
  assert.equal(d.status!.unavailableReplicas, 1);
  const progressing = d.status!.conditions!.find((c) => c.type === 'Progressing')!;
  assert.equal(progressing.status, 'False');
  assert.match(progressing.message!, /^ReplicaSet "crash-[a-z0-9]+" has timed out progressing\.$/);
});

test('image tag missing: ErrImagePull then ImagePullBackOff, the pod stays Pending', async () => {
  const ns = await freshNamespace(h);
  await h.apps.createNamespacedDeployment({ namespace: ns, body: deployment('pull', { image: 'registry.example:5000/team/app:missing' }) });
  const pod = await eventually(async () => {
    const p = (await h.core.listNamespacedPod({ namespace: ns })).items[0];
    return p?.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'ImagePullBackOff' ? p : undefined;
  }, 'ImagePullBackOff');
  assert.equal(pod.status!.phase, 'Pending');
  assert.match(pod.status!.containerStatuses![0].state!.waiting!.message!, /Back-off pulling image "registry.example:5000\/team\/app:missing"/);
  const d = await h.apps.readNamespacedDeployment({ namespace: ns, name: 'pull' });
  assert.equal(d.status!.availableReplicas ?? 0, 0);
  const failed = await eventually(async () => (await h.core.listNamespacedEvent({ namespace: ns })).items.find((e) => e.reason === 'Failed'), 'a Failed event');
  assert.match(failed.message!, /^Failed to pull image "registry.example:5000\/team\/app:missing": /);
});

test('image tag notready: the pod runs but never becomes Ready', async () => {
  const ns = await freshNamespace(h);
  await h.apps.createNamespacedDeployment({ namespace: ns, body: deployment('slow', { image: 'example/app:notready' }) });
  const pod = await eventually(async () => {
    const p = (await h.core.listNamespacedPod({ namespace: ns })).items[0];
    return p?.status?.containerStatuses?.[0]?.state?.running ? p : undefined;
  }, 'running container');
  assert.equal(pod.status!.phase, 'Running');
  const readyCondition = pod.status!.conditions!.find((c) => c.type === 'Ready')!;
  assert.deepEqual([readyCondition.status, readyCondition.reason], ['False', 'ContainersNotReady']);
  const d = await h.apps.readNamespacedDeployment({ namespace: ns, name: 'slow' });
  assert.equal(d.status!.availableReplicas ?? 0, 0);
});

test('a pod mounting a missing ConfigMap stays ContainerCreating until the ConfigMap exists', async () => {
  const ns = await freshNamespace(h);
  const d = deployment('cfg');
  d.spec!.template.spec!.volumes = [{ name: 'conf', configMap: { name: 'later' } }];
  await h.apps.createNamespacedDeployment({ namespace: ns, body: d });
  await eventually(
    async () => (await h.core.listNamespacedPod({ namespace: ns })).items[0]?.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'ContainerCreating',
    'ContainerCreating',
  );
  await sleep(100);
  const pending = (await h.core.listNamespacedPod({ namespace: ns })).items[0];
  assert.equal(pending.status!.phase, 'Pending');
  const mountEvent = await eventually(
    async () => (await h.core.listNamespacedEvent({ namespace: ns })).items.find((e) => e.reason === 'FailedMount'),
    'a FailedMount event',
  );
  assert.equal(mountEvent.message, 'MountVolume.SetUp failed for volume "conf" : configmap "later" not found');
  await h.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'later' }, data: { a: 'b' } } });
  await rolledOut(h, ns, 'cfg', 1, 1);
});

test('deleting a Deployment removes its ReplicaSets and Pods', async () => {
  const ns = await freshNamespace(h);
  await h.apps.createNamespacedDeployment({ namespace: ns, body: deployment('gone', { replicas: 2 }) });
  await rolledOut(h, ns, 'gone', 2, 1);
  await h.apps.deleteNamespacedDeployment({ namespace: ns, name: 'gone' });
  await eventually(async () => (await h.core.listNamespacedPod({ namespace: ns })).items.length === 0, 'pods gone');
  await eventually(async () => (await h.apps.listNamespacedReplicaSet({ namespace: ns })).items.length === 0, 'replicasets gone');
  await sleep(50);
  assert.equal((await h.core.listNamespacedPod({ namespace: ns })).items.length, 0, 'no pod is re-created');
});

test('a Deployment deleted and re-created at once with the same template converges to new pods', async () => {
  const ns = await freshNamespace(h);
  await h.apps.createNamespacedDeployment({ namespace: ns, body: deployment('again') });
  const first = await rolledOut(h, ns, 'again', 1, 1);
  const oldPod = (await h.core.listNamespacedPod({ namespace: ns })).items[0];
  await h.apps.deleteNamespacedDeployment({ namespace: ns, name: 'again' });
  await h.apps.createNamespacedDeployment({ namespace: ns, body: deployment('again') });
  const second = await rolledOut(h, ns, 'again', 1, 1);
  assert.notEqual(second.metadata!.uid, first.metadata!.uid);
  const pods = await eventually(async () => {
    const items = (await h.core.listNamespacedPod({ namespace: ns })).items;
    return items.length === 1 && items[0].metadata!.uid !== oldPod.metadata!.uid ? items : undefined;
  }, 'only the new pod');
  const rs = (await h.apps.listNamespacedReplicaSet({ namespace: ns })).items;
  assert.equal(rs.length, 1);
  assert.equal(rs[0].metadata!.ownerReferences![0].uid, second.metadata!.uid);
  assert.equal(pods[0].metadata!.ownerReferences![0].uid, rs[0].metadata!.uid);
});

test('the simulation reported no unexpected errors', () => {
  const unexpected = h.errors.filter((e) => (e.error as { code?: number }).code !== 409);
  assert.deepEqual(
    unexpected.map((e) => `${e.what}: ${String((e.error as { body?: string }).body ?? e.error)}`),
    [],
  );
});
