/**
 * The FlinkStateSnapshot index by job (src/kube/snapshots-by-job.ts): a job's reconciler gets its own
 * snapshots without scanning the namespace, and the index follows the informer's events.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { flinkStateSnapshot } from '../../src/api/flink-state-snapshot-builder.js';
import type { FlinkStateSnapshot } from '../../src/api/flink-state-snapshot.js';
import type { ObjectEventListener, ObservableObjectReader } from '../../src/kube/object-reader.js';
import { SnapshotsByJob } from '../../src/kube/snapshots-by-job.js';

/** An informer stand-in: `emit` hands an event to the subscriber. */
function fakeInformer(initial: FlinkStateSnapshot[]) {
  let listener: ObjectEventListener<FlinkStateSnapshot> | undefined;
  const reader: ObservableObjectReader<FlinkStateSnapshot> = {
    get: () => undefined,
    list: () => initial,
    subscribe: (l) => {
      listener = l;
      return () => (listener = undefined);
    },
    hasSynced: () => true,
  };
  return { reader, emit: (event: Parameters<ObjectEventListener<FlinkStateSnapshot>>[0]) => listener?.(event) };
}

const names = (snapshots: FlinkStateSnapshot[]) => snapshots.map((s) => s.metadata.name).sort();

test('by job: kind and name in the namespace; events add, move and remove; a relist replaces everything', () => {
  const a = flinkStateSnapshot('a').of('FlinkDeployment', 'orders').build();
  const b = flinkStateSnapshot('b').of('FlinkSessionJob', 'orders').build();
  const c = flinkStateSnapshot('c').of('FlinkDeployment', 'orders').inNamespace('team-b').build();
  const informer = fakeInformer([a, b, c]);
  const index = new SnapshotsByJob(informer.reader);
  assert.deepEqual(names(index.ofJob('FlinkDeployment', 'default', 'orders')), ['a'], 'not the session job of the same name, not another namespace');
  assert.deepEqual(names(index.ofJob('FlinkSessionJob', 'default', 'orders')), ['b']);

  const d = flinkStateSnapshot('d').of('FlinkDeployment', 'orders').build();
  informer.emit({ type: 'added', object: d });
  assert.deepEqual(names(index.ofJob('FlinkDeployment', 'default', 'orders')), ['a', 'd']);
  informer.emit({ type: 'updated', object: flinkStateSnapshot('d').of('FlinkDeployment', 'payments').build() });
  assert.deepEqual(names(index.ofJob('FlinkDeployment', 'default', 'orders')), ['a'], 'moved with its jobReference');
  assert.deepEqual(names(index.ofJob('FlinkDeployment', 'default', 'payments')), ['d']);
  informer.emit({ type: 'deleted', object: a });
  assert.deepEqual(index.ofJob('FlinkDeployment', 'default', 'orders'), []);
  informer.emit({ type: 'relisted', objects: [b] });
  assert.deepEqual(index.ofJob('FlinkDeployment', 'default', 'payments'), []);
  assert.deepEqual(names(index.ofJob('FlinkSessionJob', 'default', 'orders')), ['b']);
});
