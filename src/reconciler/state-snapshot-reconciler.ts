/**
 * The FlinkStateSnapshot controller's reconciler: observe → decide → act, level-based, under the
 * contract of src/runtime/reconcile.ts and the leadership fence of fenced-pass.ts.
 *
 * One pass: read the snapshot from the informer cache and the resource its `spec.jobReference`
 * names from theirs, ask state-snapshot-decide.ts for one step, perform it, and decide again on
 * the object the write returned (a new snapshot gets its finalizer, its labels and its first
 * status in one pass), until a step writes nothing.
 *
 * Division of labour: this reconciler never triggers a snapshot. A processable TRIGGER_PENDING
 * snapshot whose job runs is taken up by the FlinkDeployment / FlinkSessionJob reconciler, which
 * writes IN_PROGRESS (with `status.triggerId`) and the result; this one handles the finalizer,
 * deletion (with disposal), labels, existing savepoints, invalid specs, missing targets and
 * abandonment.
 *
 * Guarantees
 * - Every write (metadata, status, disposal) is preceded by `fence.check(...)`: a pass whose term
 *   is gone writes nothing more.
 * - Metadata patches carry the resourceVersion the decision was made on: a stale cache gives a
 *   409, which (as a 404) requeues the key soon instead of failing the pass.
 * - An event is emitted once per situation (OncePerSituation), so a retried disposal does not
 *   flood the snapshot's events.
 * Assumptions: one key is never reconciled twice at once (the work queue).
 * Caveats: when the last missing-target attempt was counted is kept in memory only; after a
 * restart the first pass counts one attempt at once (as the Apache operator, whose retry timer
 * does not survive a restart either).
 */
import type { JobReferenceKind } from '../api/flink-state-snapshot-spec.js';
import type { FlinkStateSnapshot } from '../api/flink-state-snapshot.js';
import { isConflict, isNotFound } from '../kube/api-errors.js';
import type { FlinkStateSnapshotWriter, SnapshotMetadataPatch } from '../kube/flink-state-snapshot-client.js';
import type { ReconcileRequest, ReconcileResult, Reconciler } from '../runtime/reconcile.js';
import type { SideEffectFence } from '../runtime/side-effect-fence.js';
import { OncePerSituation, requeueAfterMs, runFencedPass, type FencedPassDependencies } from './fenced-pass.js';
import type { EventType } from './reconciler-dependencies.js';
import {
  decideStateSnapshot,
  isTargetJobRunning,
  type SavepointDisposal,
  type SnapshotEvent,
  type SnapshotTarget,
  type StateSnapshotStep,
} from './state-snapshot-decide.js';

/** The event sink, typed as the session job's (session-job-dependencies.ts `SessionJobEventSink`). */
export interface StateSnapshotEventSink {
  emit(snapshot: FlinkStateSnapshot, type: EventType, reason: string, message: string): void;
}

export interface StateSnapshotReconcilerDependencies extends FencedPassDependencies {
  /** The FlinkStateSnapshot informer cache. */
  snapshots: { get(namespace: string, name: string): FlinkStateSnapshot | undefined };
  /** The FlinkDeployment / FlinkSessionJob caches (v1 objects). */
  targets: { get(kind: JobReferenceKind, namespace: string, name: string): { status?: unknown } | undefined };
  writer: FlinkStateSnapshotWriter;
  /** Disposes of the savepoint at `path` through the cluster of the job `ref` names. */
  disposeSavepoint(ref: { kind: JobReferenceKind; namespace: string; name: string }, path: string): Promise<SavepointDisposal>;
  events: StateSnapshotEventSink;
  now(): number;
  /** How long a snapshot may wait for its job to run before it is ABANDONED (default DEFAULT_SNAPSHOT_NOT_RUNNING_GRACE_MS). */
  notRunningGraceMs: number;
}

/** Steps one pass performs at most (each write is followed by a new decision on its result). */
const MAX_STEPS_PER_PASS = 6;
/** Requeue after a 409 / 404 on a write: the cache catches up, then the pass decides again. */
const WRITE_RACE_REQUEUE_MS = 1_000;

export class FlinkStateSnapshotReconciler implements Reconciler {
  private readonly announced = new OncePerSituation();
  /** Epoch ms of the last counted missing-target attempt, by snapshot uid. */
  private readonly lastAttempt = new Map<string, number>();

  constructor(private readonly deps: StateSnapshotReconcilerDependencies) {}

  async reconcile(request: ReconcileRequest, signal: AbortSignal = new AbortController().signal): Promise<ReconcileResult> {
    return runFencedPass(this.deps, signal, (fence) => this.reconcileInTerm(request, fence));
  }

  private async reconcileInTerm(request: ReconcileRequest, fence: SideEffectFence): Promise<ReconcileResult> {
    const d = this.deps;
    let snapshot = d.snapshots.get(request.namespace, request.name);
    if (!snapshot) return {};
    let disposal: SavepointDisposal | undefined;
    try {
      for (let steps = 0; steps < MAX_STEPS_PER_PASS; steps++) {
        const uid = uidOf(snapshot);
        const lastAttemptAt = this.lastAttempt.get(uid);
        const step = decideStateSnapshot({
          snapshot,
          target: this.targetOf(snapshot),
          now: d.now(),
          notRunningGraceMs: d.notRunningGraceMs,
          ...(lastAttemptAt !== undefined ? { lastAttemptAt } : {}),
          ...(disposal ? { disposal } : {}),
        });
        if (step.kind !== 'wait') d.log.info({ namespace: request.namespace, name: request.name, step: step.kind }, `state snapshot step ${step.kind}`);
        const outcome = await this.act(snapshot, step, fence);
        if (outcome.kind === 'done') return outcome.result;
        if (outcome.kind === 'disposed') disposal = outcome.disposal;
        else snapshot = outcome.snapshot;
      }
      return { requeueAfterMs: d.timings.progressCheckIntervalMs };
    } catch (error) {
      if (isConflict(error) || isNotFound(error)) {
        d.log.info({ namespace: request.namespace, name: request.name, reason: (error as Error).message }, 'snapshot changed or went away under this pass');
        return { requeueAfterMs: WRITE_RACE_REQUEUE_MS };
      }
      throw error;
    }
  }

  private targetOf(snapshot: FlinkStateSnapshot): SnapshotTarget {
    const reference = snapshot.spec?.jobReference;
    if (!reference?.kind || !reference.name) return { kind: 'unreferenced' };
    const target = this.deps.targets.get(reference.kind, snapshot.metadata.namespace ?? '', reference.name);
    return target ? { kind: 'found', running: isTargetJobRunning(target.status) } : { kind: 'missing' };
  }

  private async act(
    snapshot: FlinkStateSnapshot,
    step: StateSnapshotStep,
    fence: SideEffectFence,
  ): Promise<
    { kind: 'done'; result: ReconcileResult } | { kind: 'updated'; snapshot: FlinkStateSnapshot } | { kind: 'disposed'; disposal: SavepointDisposal }
  > {
    const d = this.deps;
    const namespace = snapshot.metadata.namespace ?? '';
    const name = snapshot.metadata.name ?? '';
    const what = `FlinkStateSnapshot ${namespace}/${name}`;
    const patchMetadata = (patch: SnapshotMetadataPatch) =>
      d.writer.patchMetadata(namespace, name, {
        ...patch,
        ...(snapshot.metadata.resourceVersion ? { resourceVersion: snapshot.metadata.resourceVersion } : {}),
      });
    switch (step.kind) {
      case 'add-finalizer-and-labels':
        fence.check(`add the finalizer of ${what}`);
        return {
          kind: 'updated',
          snapshot: await patchMetadata({ finalizers: step.finalizers, ...(Object.keys(step.labels).length > 0 ? { labels: step.labels } : {}) }),
        };
      case 'sync-labels':
        fence.check(`label ${what}`);
        return { kind: 'updated', snapshot: await patchMetadata({ labels: step.labels }) };
      case 'dispose':
        fence.check(`dispose of the savepoint ${step.path} of ${what}`);
        return { kind: 'disposed', disposal: await d.disposeSavepoint(step.ref, step.path) };
      case 'remove-finalizer':
        fence.check(`remove the finalizer of ${what}`);
        await patchMetadata({ finalizers: step.finalizers });
        if (step.event) this.announce(snapshot, step.event, 'deleted');
        this.announced.forget(uidOf(snapshot));
        this.lastAttempt.delete(uidOf(snapshot));
        return { kind: 'done', result: {} };
      case 'complete-existing':
      case 'fail-invalid':
      case 'abandon': {
        fence.check(`record the status of ${what}`);
        const updated = await d.writer.patchStatus(namespace, name, step.status);
        if (step.kind !== 'complete-existing') this.announce(snapshot, step.event, step.kind);
        this.lastAttempt.delete(uidOf(snapshot));
        return { kind: 'updated', snapshot: updated };
      }
      case 'target-missing': {
        fence.check(`record the status of ${what}`);
        const updated = await d.writer.patchStatus(namespace, name, step.status);
        this.announce(snapshot, step.event, step.status.state === 'FAILED' ? 'failed' : `missing-${step.event.message}`);
        // A retry waits for the backoff: the next decision sees this attempt and waits (after the labels).
        if (step.retryAfterMs !== undefined) this.lastAttempt.set(uidOf(snapshot), d.now());
        else this.lastAttempt.delete(uidOf(snapshot));
        return { kind: 'updated', snapshot: updated };
      }
      case 'wait':
        if (step.event) this.announce(snapshot, step.event, step.event.message);
        if (step.requeue === 'none') return { kind: 'done', result: step.wakeUpInMs !== undefined ? { requeueAfterMs: step.wakeUpInMs } : {} };
        return {
          kind: 'done',
          result: {
            requeueAfterMs: requeueAfterMs({ requeue: step.requeue, ...(step.wakeUpInMs !== undefined ? { wakeUpInMs: step.wakeUpInMs } : {}) }, d.timings),
          },
        };
    }
  }

  private announce(snapshot: FlinkStateSnapshot, event: SnapshotEvent, situation: string): void {
    if (this.announced.firstTime(uidOf(snapshot), event.reason, situation)) this.deps.events.emit(snapshot, event.type, event.reason, event.message);
  }
}

function uidOf(snapshot: FlinkStateSnapshot): string {
  return snapshot.metadata.uid ?? `${snapshot.metadata.namespace}/${snapshot.metadata.name}`;
}
