/**
 * The publish step (src/reconciler/snapshot-resource-steps.ts) against a fake FlinkStateSnapshot
 * writer that records every call: an owed resource is created once under its fixed name and its
 * status written; a repeat after a crash (the object already there, 409 on create) writes nothing
 * twice; a refusal for good (the CRD missing: 404) drops the entry with a Warning and loses no state;
 * someone else's object of that name is left alone.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { emptyInternalState, type InternalState, type SnapshotResourceWrite } from '../../src/api/internal-state.js';
import type { FlinkStateSnapshot } from '../../src/api/flink-state-snapshot.js';
import { KubeApiError } from '../../src/kube/api-errors.js';
import type { FlinkStateSnapshotWriter } from '../../src/kube/flink-state-snapshot-client.js';
import { publishSnapshotResource, type SnapshotResourceStepContext } from '../../src/reconciler/snapshot-resource-steps.js';

const OWED: SnapshotResourceWrite = {
  name: 'orders-savepoint-periodic-1764460000000',
  action: 'publish',
  snapshotType: 'SAVEPOINT',
  triggerType: 'PERIODIC',
  jobReference: { kind: 'FlinkDeployment', name: 'orders' },
  disposeOnDelete: false,
  status: { state: 'COMPLETED', path: 'file:///flink-data/savepoints/savepoint-1', resultTimestamp: '2025-11-29T23:46:40.000Z', failures: 0 },
};

/** A writer over an in-memory namespace; `calls` lists every request in order. */
function fakeWriter(initial: FlinkStateSnapshot[] = [], failCreate?: KubeApiError) {
  const objects = new Map(initial.map((o) => [o.metadata.name!, structuredClone(o)]));
  const calls: string[] = [];
  const writer: FlinkStateSnapshotWriter = {
    get: (_ns, name) => {
      calls.push(`get ${name}`);
      return Promise.resolve(structuredClone(objects.get(name)));
    },
    create: (snapshot) => {
      calls.push(`create ${snapshot.metadata.name}`);
      if (failCreate) return Promise.reject(failCreate);
      if (objects.has(snapshot.metadata.name!)) return Promise.reject(new KubeApiError(409, 'AlreadyExists', 'exists'));
      const created = { ...structuredClone(snapshot), metadata: { ...snapshot.metadata, uid: 'uid-new' } };
      objects.set(snapshot.metadata.name!, created);
      return Promise.resolve(structuredClone(created));
    },
    patchStatus: (_ns, name, status) => {
      calls.push(`patchStatus ${name} ${status.state}`);
      const object = objects.get(name)!;
      // RFC 7386: a null removes the field.
      const merged: Record<string, unknown> = { ...object.status, ...status };
      for (const key of Object.keys(merged)) if (merged[key] === null) delete merged[key];
      object.status = merged;
      return Promise.resolve(structuredClone(object));
    },
    patchMetadata: (_ns, name, patch) => {
      calls.push(`patchMetadata ${name} ${JSON.stringify(patch.labels)}`);
      const object = objects.get(name)!;
      object.metadata.labels = { ...object.metadata.labels, ...(patch.labels as Record<string, string>) };
      return Promise.resolve(structuredClone(object));
    },
    delete: (_ns, name) => {
      calls.push(`delete ${name}`);
      objects.delete(name);
      return Promise.resolve();
    },
  };
  return { writer, calls, objects };
}

function context(writer: FlinkStateSnapshotWriter, owed: SnapshotResourceWrite[]) {
  let state: InternalState = { ...emptyInternalState(), phase: 'RUNNING', snapshotResourceWrites: owed };
  const events: string[] = [];
  const fenceChecks: string[] = [];
  const ctx: SnapshotResourceStepContext<InternalState> = {
    writer,
    namespace: 'default',
    check: (what) => fenceChecks.push(what),
    emit: (type, reason, message) => events.push(`${type} ${reason}: ${message}`),
    state: () => state,
    save: (fn) => {
      state = fn(state);
      return Promise.resolve(state);
    },
  };
  return { ctx, events, fenceChecks, state: () => state };
}

test('an owed resource is created under its fixed name (jobReference, labels, alreadyExists), its status written, then the entry dropped', async () => {
  const fake = fakeWriter();
  const c = context(fake.writer, [OWED]);
  assert.deepEqual(await publishSnapshotResource(c.ctx), { requeue: 'continue' });
  assert.deepEqual(fake.calls, [`create ${OWED.name}`, `patchStatus ${OWED.name} COMPLETED`], 'created at once, no read first');
  const created = fake.objects.get(OWED.name)!;
  assert.deepEqual(created.spec.jobReference, { kind: 'FlinkDeployment', name: 'orders' });
  assert.equal(created.spec.savepoint?.alreadyExists, true);
  assert.equal(created.spec.savepoint?.path, OWED.status?.path);
  assert.equal(created.metadata.ownerReferences, undefined);
  assert.equal(created.metadata.labels?.['snapshot.state'], 'COMPLETED');
  assert.deepEqual(created.metadata.finalizers, ['flinkstatesnapshots.flink.apache.org/finalizer'], "with the snapshot controller's finalizer from the start");
  assert.equal(created.status?.path, OWED.status?.path);
  assert.equal(c.state().snapshotResourceWrites, undefined, 'nothing owed any more');
  assert.equal(c.fenceChecks.length, 2, 'every write behind a fence check');
});

test('a repeat after a crash (the object was created, the entry not yet dropped) creates nothing twice', async () => {
  const first = fakeWriter();
  await publishSnapshotResource(context(first.writer, [OWED]).ctx);
  const again = fakeWriter([...first.objects.values()]);
  const c = context(again.writer, [OWED]);
  await publishSnapshotResource(c.ctx);
  assert.deepEqual(again.calls, [`create ${OWED.name}`, `get ${OWED.name}`], 'the create answers 409, the object read back already says it all: no write');
  assert.equal(c.state().snapshotResourceWrites, undefined);
});

test('the CRD not installed (404 on create): a Warning, the entry dropped, the state otherwise untouched', async () => {
  const fake = fakeWriter([], new KubeApiError(404, 'NotFound', 'the server could not find the requested resource'));
  const c = context(fake.writer, [OWED]);
  await publishSnapshotResource(c.ctx);
  assert.equal(c.events.length, 1);
  assert.match(c.events[0], /^Warning SnapshotResourceError: .*the FlinkStateSnapshot CRD is not installed \(kubectl apply --server-side -f crds\/\)/);
  assert.equal(c.state().snapshotResourceWrites, undefined);
  assert.equal(c.state().phase, 'RUNNING');
});

test("an object of that name that is another job's is left alone (a Warning), and a user's deleted snapshot is not recreated", async () => {
  const foreign: FlinkStateSnapshot = {
    apiVersion: 'flink.apache.org/v1beta1',
    kind: 'FlinkStateSnapshot',
    metadata: { name: OWED.name, namespace: 'default', uid: 'uid-foreign' },
    spec: { jobReference: { kind: 'FlinkDeployment', name: 'payments' }, savepoint: {} },
  };
  const fake = fakeWriter([foreign]);
  const c = context(fake.writer, [OWED, { ...OWED, name: 'users-own', uid: 'uid-gone', status: { state: 'COMPLETED' } }]);
  await publishSnapshotResource(c.ctx);
  await publishSnapshotResource(c.ctx);
  assert.deepEqual(fake.calls, [`create ${OWED.name}`, `get ${OWED.name}`, 'get users-own'], 'no write to either (the create answered 409)');
  assert.match(c.events.join('\n'), /exists but is not this snapshot's/);
  assert.equal(c.state().snapshotResourceWrites, undefined);
});
