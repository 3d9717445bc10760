import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubernetesObject, V1Deployment, V1Pod, V1ReplicaSet } from '@kubernetes/client-node';
import type { SimulationAppsApi, SimulationCoreApi } from '../../../src/devcluster/simulation/simulation-api-client.js';
import { UnseenOwnWrites } from '../../../src/devcluster/simulation/unseen-own-writes.js';
import { ReplicaSetController } from '../../../src/devcluster/simulation/replicaset-controller.js';
import { DeploymentController } from '../../../src/devcluster/simulation/deployment-controller.js';
import type { InformerHandler, SimulationInformer } from '../../../src/devcluster/simulation/simulation-informer.js';
import { podTemplateHash } from '../../../src/devcluster/simulation/deployment-status.js';

/** An informer whose cache and events the test controls (so the watch lag after a write is explicit). */
class ScriptedInformer<T extends KubernetesObject> {
  readonly objects = new Map<string, T>();
  private readonly handlers: InformerHandler<T>[] = [];
  on(handler: InformerHandler<T>): void {
    this.handlers.push(handler);
  }
  get(namespace: string, name: string): T | undefined {
    return this.objects.get(`${namespace}/${name}`);
  }
  list(): readonly T[] {
    return [...this.objects.values()];
  }
  deliver(type: 'add' | 'update' | 'delete', object: T): void {
    const key = `${object.metadata?.namespace}/${object.metadata?.name}`;
    if (type === 'delete') this.objects.delete(key);
    else this.objects.set(key, object);
    for (const h of this.handlers) h(type, object);
  }
  asInformer(): SimulationInformer<T> {
    return this as unknown as SimulationInformer<T>;
  }
}

function readyPod(name: string, owner: V1ReplicaSet, ready: boolean, rv: string): V1Pod {
  return {
    metadata: {
      name,
      namespace: 'ns',
      uid: `uid-${name}`,
      resourceVersion: rv,
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: owner.metadata!.name!, uid: owner.metadata!.uid!, controller: true }],
    },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
  };
}

test('UnseenOwnWrites: behind while the cache shows a superseded version, cleared by any other version', () => {
  const w = new UnseenOwnWrites();
  assert.equal(w.cacheIsBehind('ns/a', '5'), false, 'no write yet');
  w.noteWrite('ns/a', ['5', '6']);
  assert.equal(w.cacheIsBehind('ns/a', '5'), true);
  assert.equal(w.cacheIsBehind('ns/a', '6'), true);
  assert.equal(w.cacheIsBehind('ns/a', '7'), false, 'the write reached the cache');
  assert.equal(w.cacheIsBehind('ns/a', '5'), false, 'entry cleared by the newer version');
  w.noteWrite('ns/b', ['1']);
  w.forget('ns/b');
  assert.equal(w.size, 0);
});

test('ReplicaSet controller: one status write per cached version, resumes once the watch shows it', async () => {
  const replicaSets = new ScriptedInformer<V1ReplicaSet>();
  const pods = new ScriptedInformer<V1Pod>();
  const statusWrites: Array<{ rv: string | undefined; ready: number | undefined }> = [];
  const apps = {
    replaceNamespacedReplicaSetStatus: async ({ body }: { body: V1ReplicaSet }) => {
      statusWrites.push({ rv: body.metadata?.resourceVersion, ready: body.status?.readyReplicas });
      return body;
    },
  } as unknown as SimulationAppsApi;
  const core = {
    createNamespacedPod: async () => assert.fail('no pod should be created: the one pod exists'),
    deleteNamespacedPod: async () => assert.fail('no pod should be deleted'),
  } as unknown as SimulationCoreApi;
  const controller = new ReplicaSetController({ apps, core, replicaSets: replicaSets.asInformer(), pods: pods.asInformer(), random: () => 0.5 });
  try {
    const rs: V1ReplicaSet = {
      metadata: { name: 'r', namespace: 'ns', uid: 'rs-uid', generation: 1, resourceVersion: '10' },
      spec: { replicas: 1, selector: {} },
    };
    pods.deliver('add', readyPod('r-abcde', rs, false, '11'));
    replicaSets.deliver('add', rs);
    await controller.idle();
    assert.deepEqual(statusWrites, [{ rv: '10', ready: 0 }], 'first status: 1 pod, not ready');

    // the pod turns Ready before the watch delivered our status write: the cache still shows rv 10
    pods.deliver('update', readyPod('r-abcde', rs, true, '12'));
    await controller.idle();
    assert.equal(statusWrites.length, 1, 'no write based on the stale rv 10 (it would be a 409)');

    // the watch event of our write arrives: the sync writes the Ready count from the fresh object
    replicaSets.deliver('update', {
      ...rs,
      metadata: { ...rs.metadata, resourceVersion: '13' },
      status: { replicas: 1, fullyLabeledReplicas: 1, readyReplicas: 0, availableReplicas: 0, observedGeneration: 1 },
    });
    await controller.idle();
    assert.deepEqual(statusWrites[1], { rv: '13', ready: 1 });
    assert.equal(statusWrites.length, 2);
  } finally {
    await controller.stop();
  }
});

test('Deployment controller: no repeated revision patch or status write before the watch shows the previous one', async () => {
  const deployments = new ScriptedInformer<V1Deployment>();
  const replicaSets = new ScriptedInformer<V1ReplicaSet>();
  const calls: string[] = [];
  let rv = 100;
  const apps = {
    createNamespacedReplicaSet: async ({ body }: { body: V1ReplicaSet }) => {
      calls.push('create-rs');
      return { ...body, metadata: { ...body.metadata, uid: 'rs-uid', resourceVersion: String(++rv) } };
    },
    patchNamespacedDeployment: async ({ name }: { name: string }) => {
      calls.push('patch-revision');
      const d = deployments.get('ns', name)!;
      return { ...d, metadata: { ...d.metadata, resourceVersion: String(++rv), annotations: { 'deployment.kubernetes.io/revision': '1' } } };
    },
    replaceNamespacedDeploymentStatus: async ({ body }: { body: V1Deployment }) => {
      calls.push(`status@${body.metadata?.resourceVersion}:updated=${body.status?.updatedReplicas}`);
      return { ...body, metadata: { ...body.metadata, resourceVersion: String(++rv) } };
    },
  } as unknown as SimulationAppsApi;
  const controller = new DeploymentController({ apps, deployments: deployments.asInformer(), replicaSets: replicaSets.asInformer() });
  try {
    const template = { metadata: { labels: { app: 'd' } }, spec: { containers: [{ name: 'c', image: 'i:1' }] } };
    const d: V1Deployment = {
      metadata: { name: 'd', namespace: 'ns', uid: 'd-uid', generation: 1, resourceVersion: '1' },
      spec: { replicas: 1, selector: { matchLabels: { app: 'd' } }, strategy: { type: 'Recreate' }, template },
    };
    deployments.deliver('add', d);
    await controller.idle();
    assert.deepEqual(calls, ['create-rs', 'patch-revision', 'status@102:updated=0']);

    // the ReplicaSet appears (and gets a pod) before the watch delivered the Deployment status write
    const hash = podTemplateHash(template);
    const rs: V1ReplicaSet = {
      metadata: {
        name: `d-${hash}`,
        namespace: 'ns',
        uid: 'rs-uid',
        resourceVersion: '150',
        labels: { 'pod-template-hash': hash },
        annotations: { 'deployment.kubernetes.io/revision': '1', 'deployment.kubernetes.io/desired-replicas': '1' },
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'd', uid: 'd-uid', controller: true }],
      },
      spec: { replicas: 1, selector: {} },
      status: { replicas: 1, readyReplicas: 0, availableReplicas: 0 },
    };
    replicaSets.deliver('add', rs);
    await controller.idle();
    assert.equal(calls.length, 3, 'nothing written from the stale Deployment (rv 1): the patch would repeat, the status write would be a 409');

    // the watch shows our writes: the sync writes the new counts, and does not patch the revision again
    deployments.deliver('update', {
      ...d,
      metadata: { ...d.metadata, resourceVersion: '103', annotations: { 'deployment.kubernetes.io/revision': '1' } },
      status: { observedGeneration: 1, replicas: 0, updatedReplicas: 0 },
    });
    await controller.idle();
    assert.deepEqual(calls.slice(3), ['status@103:updated=1']);
  } finally {
    await controller.stop();
  }
});
