/**
 * The FlinkStateSnapshot controller's reconciler (src/reconciler/state-snapshot-reconciler.ts)
 * against fakes that record every call: the writer (an in-memory API server applying merge
 * patches, with resourceVersion preconditions), `disposeSavepoint`, the events, the fence, and an
 * injected clock. Behaviour emulated: Apache `StateSnapshotReconciler` (reconcile, cleanup) and
 * `FlinkStateSnapshotController.updateErrorStatus` (backoff, backoffLimit),
 * apache/flink-kubernetes-operator @ 6e9caeb4, with the differences design/011 lists.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { flinkStateSnapshot, type FlinkStateSnapshotBuilder } from '../../src/api/flink-state-snapshot-builder.js';
import { FLINK_STATE_SNAPSHOT_FINALIZER, type FlinkStateSnapshot } from '../../src/api/flink-state-snapshot.js';
import type { JobReferenceKind } from '../../src/api/flink-state-snapshot-spec.js';
import { KubeApiError } from '../../src/kube/api-errors.js';
import type { FlinkStateSnapshotWriter, SnapshotMetadataPatch } from '../../src/kube/flink-state-snapshot-client.js';
import type { SavepointDisposal } from '../../src/reconciler/state-snapshot-decide.js';
import { FlinkStateSnapshotReconciler } from '../../src/reconciler/state-snapshot-reconciler.js';
import { RecordingFence } from './session-job-fakes.js';

const NS = 'default';
const START = Date.parse('2026-12-01T12:00:00.000Z');
const PATH = 's3://flink/savepoints/savepoint-aaaa-1';
const PROGRESS_MS = 5_000;
const STEADY_MS = 60_000;
const GRACE_MS = 60_000;

/** An in-memory API server for FlinkStateSnapshots: merge patches, resourceVersion preconditions, a deleted object gone once its finalizers are. */
class FakeSnapshotWriter implements FlinkStateSnapshotWriter {
  readonly objects = new Map<string, FlinkStateSnapshot>();
  readonly calls: string[] = [];
  private version = 1;
  /** The next write fails with this error. */
  failNext: KubeApiError | undefined;

  put(snapshot: FlinkStateSnapshot): void {
    this.objects.set(snapshot.metadata.name ?? '', { ...snapshot, metadata: { ...snapshot.metadata, resourceVersion: String(this.version++) } });
  }
  async get(_namespace: string, name: string): Promise<FlinkStateSnapshot | undefined> {
    return this.objects.get(name);
  }
  async create(snapshot: FlinkStateSnapshot): Promise<FlinkStateSnapshot> {
    this.put(snapshot);
    return this.objects.get(snapshot.metadata.name ?? '')!;
  }
  private existing(name: string): FlinkStateSnapshot {
    const failure = this.failNext;
    this.failNext = undefined;
    if (failure) throw failure;
    const current = this.objects.get(name);
    if (!current) throw new KubeApiError(404, 'NotFound', `flinkstatesnapshots.flink.apache.org "${name}" not found`);
    return current;
  }
  async patchStatus(_namespace: string, name: string, status: Record<string, unknown>): Promise<FlinkStateSnapshot> {
    this.calls.push(`patchStatus ${name} ${JSON.stringify(status)}`);
    const current = this.existing(name);
    const next: Record<string, unknown> = { ...(current.status ?? {}) };
    for (const [key, value] of Object.entries(status)) {
      if (value === null) delete next[key];
      else next[key] = value;
    }
    this.put({ ...current, status: next });
    return this.objects.get(name)!;
  }
  async patchMetadata(_namespace: string, name: string, patch: SnapshotMetadataPatch): Promise<FlinkStateSnapshot> {
    this.calls.push(`patchMetadata ${name} ${JSON.stringify(patch)}`);
    const current = this.existing(name);
    if (patch.resourceVersion !== undefined && patch.resourceVersion !== current.metadata.resourceVersion) {
      throw new KubeApiError(409, 'Conflict', `Operation cannot be fulfilled on flinkstatesnapshots.flink.apache.org "${name}": the object has been modified`);
    }
    const labels: Record<string, string> = { ...(current.metadata.labels ?? {}) };
    for (const [key, value] of Object.entries(patch.labels ?? {})) {
      if (value === null) delete labels[key];
      else labels[key] = value;
    }
    const metadata = { ...current.metadata, labels, ...(patch.finalizers ? { finalizers: patch.finalizers } : {}) };
    if (metadata.deletionTimestamp && (metadata.finalizers ?? []).length === 0) {
      this.objects.delete(name);
      return { ...current, metadata };
    }
    this.put({ ...current, metadata });
    return this.objects.get(name)!;
  }
  async delete(_namespace: string, name: string): Promise<void> {
    this.objects.delete(name);
  }
}

interface Harness {
  reconciler: FlinkStateSnapshotReconciler;
  writer: FakeSnapshotWriter;
  fence: RecordingFence;
  targets: Map<string, { status?: unknown }>;
  disposals: string[];
  events: string[];
  clock: { now: number };
  counters: { fencedOut: number };
  /** What `disposeSavepoint` answers. */
  disposal: { next: SavepointDisposal };
  pass(name?: string): Promise<number | undefined>;
  stored(name?: string): FlinkStateSnapshot | undefined;
}

function harness(options: { refuses?: (what: string) => boolean; leading?: boolean } = {}): Harness {
  const writer = new FakeSnapshotWriter();
  const log: string[] = [];
  const fence = new RecordingFence(log, options.refuses ?? (() => false));
  const targets = new Map<string, { status?: unknown }>();
  const disposals: string[] = [];
  const events: string[] = [];
  const clock = { now: START };
  const counters = { fencedOut: 0 };
  const disposal: { next: SavepointDisposal } = { next: { outcome: 'disposed' } };
  const reconciler = new FlinkStateSnapshotReconciler({
    snapshots: { get: (_namespace, name) => writer.objects.get(name) },
    targets: { get: (kind: JobReferenceKind, _namespace, name) => targets.get(`${kind}/${name}`) },
    writer,
    disposeSavepoint: async (ref, path) => {
      disposals.push(`${ref.kind} ${ref.namespace}/${ref.name} ${path}`);
      return disposal.next;
    },
    events: { emit: (_snapshot, type, reason, message) => void events.push(`${type} ${reason}: ${message}`) },
    fenceFor: () => (options.leading === false ? undefined : fence),
    counters: { fencedOut: () => void counters.fencedOut++ },
    log: { info: () => {}, warn: () => {}, debug: () => {} },
    timings: { progressCheckIntervalMs: PROGRESS_MS, reconcileIntervalMs: STEADY_MS },
    now: () => clock.now,
    notRunningGraceMs: GRACE_MS,
  });
  return {
    reconciler,
    writer,
    fence,
    targets,
    disposals,
    events,
    clock,
    counters,
    disposal,
    pass: async (name = 'sp') => (await reconciler.reconcile({ namespace: NS, name })).requeueAfterMs,
    stored: (name = 'sp') => writer.objects.get(name),
  };
}

const RUNNING = { lifecycleState: 'STABLE', jobStatus: { state: 'RUNNING', jobId: 'a'.repeat(32) } };

function userSnapshot(change: (b: FlinkStateSnapshotBuilder) => void = () => {}, createdAt = START - 600_000): FlinkStateSnapshot {
  const b = flinkStateSnapshot('sp').withUid('uid-sp');
  change(b);
  const built = b.build();
  return { ...built, metadata: { ...built.metadata, creationTimestamp: new Date(createdAt) } };
}

/** A COMPLETED savepoint with our finalizer, being deleted. */
function deletedSnapshot(change: (b: FlinkStateSnapshotBuilder) => void = (b) => b.withStatus({ state: 'COMPLETED', path: PATH })): FlinkStateSnapshot {
  const s = userSnapshot((b) => {
    b.withFinalizers(FLINK_STATE_SNAPSHOT_FINALIZER);
    change(b);
  });
  return { ...s, metadata: { ...s.metadata, deletionTimestamp: new Date(START - 1_000) } };
}

describe('FlinkStateSnapshot reconciler: finalizer and labels', () => {
  test('a new snapshot gets the finalizer and the labels in one conditional patch, once', async () => {
    const h = harness();
    h.targets.set('FlinkDeployment/basic-example', { status: RUNNING });
    h.writer.put(userSnapshot());
    assert.equal(await h.pass(), STEADY_MS);
    assert.deepEqual(h.writer.calls, [
      'patchMetadata sp {"finalizers":["flinkstatesnapshots.flink.apache.org/finalizer"],"labels":{"snapshot.type":"SAVEPOINT","snapshot.trigger-type":"MANUAL","job-reference.kind":"FlinkDeployment","job-reference.name":"basic-example"},"resourceVersion":"1"}',
    ]);
    await h.pass();
    await h.pass();
    assert.equal(h.writer.calls.length, 1, 'a steady snapshot is not written again');
    assert.equal(h.stored()?.status, undefined, "triggering is the job reconciler's");
  });
  test('a stale cache (409 on the conditional patch) requeues soon, no error', async () => {
    const h = harness();
    h.writer.put(userSnapshot());
    h.writer.failNext = new KubeApiError(409, 'Conflict', 'the object has been modified');
    assert.equal(await h.pass(), 1_000);
    assert.equal(h.stored()?.metadata.finalizers, undefined);
  });
});

describe('FlinkStateSnapshot reconciler: not yet processed', () => {
  test('alreadyExists → COMPLETED with the path and the state label, in one pass', async () => {
    const h = harness();
    h.clock.now = Date.parse('2026-12-01T12:00:00.123Z');
    h.writer.put(userSnapshot((b) => b.asExistingSavepoint(PATH).withExactSpec({ savepoint: { alreadyExists: true, path: PATH } })));
    assert.equal(await h.pass(), undefined);
    const s = h.stored()!;
    assert.deepEqual(s.status, { state: 'COMPLETED', path: PATH, triggerTimestamp: '2026-12-01T12:00:00.123Z', resultTimestamp: '2026-12-01T12:00:00.123Z' });
    assert.equal(s.metadata.labels?.['snapshot.state'], 'COMPLETED');
    assert.ok(s.metadata.finalizers?.includes(FLINK_STATE_SNAPSHOT_FINALIZER));
    assert.deepEqual(h.events, []);
  });
  test('an invalid spec → FAILED at once, with a SnapshotError event', async () => {
    const h = harness();
    h.writer.put(userSnapshot((b) => b.withExactSpec({ jobReference: { kind: 'FlinkDeployment', name: 'basic-example' } })));
    await h.pass();
    const s = h.stored()!;
    assert.equal(s.status?.state, 'FAILED');
    assert.match(
      s.status?.error ?? '',
      /^spec: needs exactly one of savepoint and checkpoint, got neither.*\(fix the spec and recreate the FlinkStateSnapshot\)$/,
    );
    assert.equal(h.events.length, 1);
    assert.match(h.events[0], /^Warning SnapshotError: spec: needs exactly one/);
  });
  test('missing target: error, failures counted per attempt with the backoff, FAILED after backoffLimit 1', async () => {
    const h = harness();
    h.writer.put(userSnapshot((b) => b.withBackoffLimit(1)));
    const error = 'Target for snapshot default/sp was not found: create FlinkDeployment basic-example or fix spec.jobReference';

    assert.equal(await h.pass(), 10_000, 'first retry after 10 s');
    assert.deepEqual([h.stored()?.status?.state, h.stored()?.status?.failures, h.stored()?.status?.error], ['TRIGGER_PENDING', 1, error]);
    assert.equal(h.stored()?.metadata.labels?.['snapshot.state'], 'TRIGGER_PENDING');
    const writes = h.writer.calls.length;

    h.clock.now += 3_000; // an event-driven pass before the backoff has passed
    assert.equal(await h.pass(), 7_000);
    assert.equal(h.writer.calls.length, writes, 'no status write per pass');

    h.clock.now += 7_000;
    await h.pass();
    assert.deepEqual([h.stored()?.status?.state, h.stored()?.status?.failures, h.stored()?.status?.error], ['FAILED', 2, error]);
    assert.match(
      h.writer.calls.find((c) => c.includes('"failures":2')) ?? '',
      /^patchStatus sp \{"failures":2,"state":"FAILED"/,
      'the unchanged error is not rewritten',
    );
    assert.equal(h.stored()?.metadata.labels?.['snapshot.state'], 'FAILED');
    assert.deepEqual(h.events, [`Warning SnapshotError: ${error}`, `Warning SnapshotError: ${error}; failed 2 times, more than backoffLimit 1: FAILED`]);

    const done = h.writer.calls.length;
    h.clock.now += 60_000;
    await h.pass();
    assert.equal(h.writer.calls.length, done, 'FAILED is final');
  });
  test('without a limit the backoff doubles: 10 s, 20 s, 40 s', async () => {
    const h = harness();
    h.writer.put(userSnapshot());
    const delays: (number | undefined)[] = [];
    for (let i = 0; i < 3; i++) {
      const delay = await h.pass();
      delays.push(delay);
      h.clock.now += delay ?? 0;
    }
    assert.deepEqual(delays, [10_000, 20_000, 40_000]);
    assert.equal(h.stored()?.status?.failures, 3);
    assert.equal(h.events.length, 1, 'the same error is announced once');
  });
  test('the target exists but its job does not run: abandoned after the grace, not before', async () => {
    const h = harness();
    h.targets.set('FlinkDeployment/basic-example', { status: { lifecycleState: 'DEPLOYED', jobStatus: { state: 'RECONCILING' } } });
    h.writer.put(userSnapshot(() => {}, START - 10_000));
    assert.equal(await h.pass(), PROGRESS_MS);
    assert.equal(h.stored()?.status, undefined, 'a snapshot created with its deployment waits for the job');

    h.clock.now = START + 51_000;
    await h.pass();
    const message = 'Secondary resource FlinkDeployment/basic-example for savepoint sp is not running';
    assert.deepEqual(
      { state: h.stored()?.status?.state, error: h.stored()?.status?.error, resultTimestamp: h.stored()?.status?.resultTimestamp },
      { state: 'ABANDONED', error: message, resultTimestamp: '2026-12-01T12:00:51.000Z' },
    );
    assert.deepEqual(h.events, [`Warning SnapshotAbandoned: ${message}`]);
    assert.equal(h.stored()?.metadata.labels?.['snapshot.state'], 'ABANDONED');
  });
  test('the job starts within the grace: left for the job reconciler', async () => {
    const h = harness();
    h.targets.set('FlinkDeployment/basic-example', { status: { jobStatus: { state: 'RECONCILING' } } });
    h.writer.put(userSnapshot(() => {}, START - 10_000));
    await h.pass();
    h.targets.set('FlinkDeployment/basic-example', { status: RUNNING });
    h.clock.now = START + 120_000;
    assert.equal(await h.pass(), STEADY_MS);
    assert.equal(h.stored()?.status, undefined);
  });
});

describe('FlinkStateSnapshot reconciler: deletion', () => {
  test('a COMPLETED savepoint is disposed of, then the finalizer removed, Normal SnapshotDisposed', async () => {
    const h = harness();
    h.writer.put(deletedSnapshot());
    assert.equal(await h.pass(), undefined);
    assert.deepEqual(h.disposals, [`FlinkDeployment default/basic-example ${PATH}`]);
    assert.equal(h.stored(), undefined, 'the object is gone');
    assert.deepEqual(h.events, [`Normal SnapshotDisposed: Disposed of the savepoint at ${PATH} before deleting FlinkStateSnapshot default/sp`]);
  });
  test('the target is gone: the finalizer is removed anyway, with a Warning naming the data left', async () => {
    const h = harness();
    h.disposal.next = { outcome: 'target-gone' };
    h.writer.put(deletedSnapshot());
    await h.pass();
    assert.equal(h.stored(), undefined);
    assert.equal(h.events.length, 1);
    assert.match(h.events[0], /^Warning SnapshotNotDisposed: The savepoint data at s3:\/\/flink\/savepoints\/savepoint-aaaa-1 was left in place/);
  });
  test('the cluster unreachable: the finalizer is kept, one Warning, retried after the progress interval', async () => {
    const h = harness();
    h.disposal.next = { outcome: 'unreachable', reason: 'connection refused' };
    h.writer.put(deletedSnapshot());
    assert.equal(await h.pass(), PROGRESS_MS);
    assert.equal(await h.pass(), PROGRESS_MS);
    assert.deepEqual(h.stored()?.metadata.finalizers, [FLINK_STATE_SNAPSHOT_FINALIZER]);
    assert.equal(h.disposals.length, 2, 'retried');
    assert.deepEqual(h.events, [
      `Warning SnapshotDisposeFailed: Could not dispose of the savepoint at ${PATH} (connection refused); retried until the job's cluster answers; remove the finalizer by hand to leave the data`,
    ]);
    h.disposal.next = { outcome: 'disposed' };
    await h.pass();
    assert.equal(h.stored(), undefined);
  });
  test('a checkpoint, or a savepoint with disposeOnDelete false, is released without disposal', async () => {
    for (const change of [
      (b: FlinkStateSnapshotBuilder) => b.asCheckpoint().withStatus({ state: 'COMPLETED', path: PATH }),
      (b: FlinkStateSnapshotBuilder) => b.asSavepoint({ disposeOnDelete: false }).withStatus({ state: 'COMPLETED', path: PATH }),
    ]) {
      const h = harness();
      h.writer.put(deletedSnapshot(change));
      await h.pass();
      assert.equal(h.stored(), undefined);
      assert.deepEqual(h.disposals, []);
    }
  });
  test('IN_PROGRESS keeps the finalizer until the job reconciler finishes it', async () => {
    const h = harness();
    h.writer.put(deletedSnapshot((b) => b.withStatus({ state: 'IN_PROGRESS', triggerId: 't1' })));
    assert.equal(await h.pass(), PROGRESS_MS);
    assert.deepEqual(h.stored()?.metadata.finalizers, [FLINK_STATE_SNAPSHOT_FINALIZER]);
    assert.deepEqual(h.writer.calls, []);
  });
});

describe('FlinkStateSnapshot reconciler: the leadership fence', () => {
  test('a fenced-out pass writes nothing and disposes of nothing', async () => {
    const h = harness({ refuses: () => true });
    h.writer.put(userSnapshot((b) => b.asExistingSavepoint(PATH)));
    h.writer.put({ ...deletedSnapshot(), metadata: { ...deletedSnapshot().metadata, name: 'gone' } });
    assert.equal(await h.pass(), PROGRESS_MS);
    assert.equal(await h.pass('gone'), PROGRESS_MS);
    assert.deepEqual(h.writer.calls, []);
    assert.deepEqual(h.disposals, []);
    assert.equal(h.counters.fencedOut, 2);
    assert.deepEqual(h.fence.asked, [
      'add the finalizer of FlinkStateSnapshot default/sp',
      `dispose of the savepoint ${PATH} of FlinkStateSnapshot default/gone`,
    ]);
  });
  test('not leading: nothing at all', async () => {
    const h = harness({ leading: false });
    h.writer.put(userSnapshot());
    assert.equal(await h.pass(), undefined);
    assert.deepEqual(h.writer.calls, []);
  });
});
