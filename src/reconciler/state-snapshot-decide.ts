/**
 * The FlinkStateSnapshot controller's decision: given one snapshot, what is known of the resource
 * its `spec.jobReference` names, and the clock, the one step to take next. Pure (no I/O, no
 * clock: `now` is given), so every rule is one row of test/reconciler/state-snapshot-decide.test.ts.
 *
 * Rules, in this order (design/011-flink-state-snapshot.md, "The snapshot controller"):
 * 1. deleting, our finalizer present: checkpoint / `disposeOnDelete` false / no path / FAILED,
 *    TRIGGER_PENDING, ABANDONED → remove the finalizer; IN_PROGRESS → wait (the job's reconciler
 *    finishes it); COMPLETED with a path → dispose, then remove the finalizer (disposed, or the
 *    target is gone: the data is left in place, with a Warning) or keep it (unreachable: Warning,
 *    retried) — Apache `StateSnapshotReconciler.cleanup`, except that a gone target never blocks
 *    the deletion;
 * 2. not deleting, no finalizer → add it, with the labels in the same patch;
 * 3. labels differ from Apache's `FlinkStateSnapshotUtils.getSnapshotLabels` → sync them;
 * 4. not yet processed (no status or TRIGGER_PENDING, no triggerId): invalid → FAILED at once;
 *    `alreadyExists` → COMPLETED with the spec's path; the target missing → an error, `failures`
 *    +1 per attempt, FAILED past `backoffLimit`, retried after Apache's backoff (capped); the
 *    target's job not running for longer than the grace → ABANDONED; otherwise wait for the job's
 *    reconciler to trigger it;
 * 5. anything else (IN_PROGRESS, final states) → wait.
 *
 * Source: apache/flink-kubernetes-operator @ 6e9caeb4 `reconciler/snapshot/StateSnapshotReconciler.java`
 * (reconcile, cleanup), `controller/FlinkStateSnapshotController.java` (updateErrorStatus: the
 * backoff and the limit), `utils/FlinkStateSnapshotUtils.java` (snapshotSuccessful,
 * abandonSnapshotIfJobNotRunning, getSnapshotLabels), `validation/DefaultValidator.java`.
 *
 * Guarantees
 * - Never triggers a snapshot: a processable snapshot whose job runs is left to the
 *   FlinkDeployment / FlinkSessionJob reconciler, which writes IN_PROGRESS and the result.
 * - A status step's patch is a JSON merge patch of only the fields that change (`null` removes).
 * - Deletion never waits on a resource that no longer exists.
 * Assumptions
 * - `lastAttemptAt` (when this process last counted a missing-target failure) is kept by the
 *   caller; without it the next pass counts an attempt at once.
 * Caveats
 * - A snapshot whose `metadata.creationTimestamp` is unreadable is treated as older than the grace.
 */
import { formatFieldErrors } from '../api/spec-validation.js';
import { backoffLimitOf, savepointSpecWithDefaults, type JobReferenceKind } from '../api/flink-state-snapshot-spec.js';
import { FINAL_SNAPSHOT_STATES, INITIAL_SNAPSHOT_FAILURES, snapshotStateOf, type FlinkStateSnapshotStatus } from '../api/flink-state-snapshot-status.js';
import {
  FLINK_STATE_SNAPSHOT_FINALIZER,
  SNAPSHOT_JOB_REFERENCE_KIND_LABEL,
  SNAPSHOT_JOB_REFERENCE_NAME_LABEL,
  SNAPSHOT_STATE_LABEL,
  SNAPSHOT_TRIGGER_TYPE_LABEL,
  SNAPSHOT_TYPE_LABEL,
  snapshotTypeOf,
  type FlinkStateSnapshot,
} from '../api/flink-state-snapshot.js';
import { validateFlinkStateSnapshot } from '../api/flink-state-snapshot-validation.js';
import type { EventType } from './reconciler-dependencies.js';
import { snapshotRetryDelayMs, snapshotTimestamp } from './snapshot-resources.js';

/** Trigger type a user-created snapshot is labelled with (Apache `getSnapshotLabels` default). */
export const DEFAULT_SNAPSHOT_TRIGGER_TYPE_LABEL_VALUE = 'MANUAL';
/** Default of `notRunningGraceMs`: how long a snapshot may wait for its job to run before it is abandoned. */
export const DEFAULT_SNAPSHOT_NOT_RUNNING_GRACE_MS = 60_000;
/** Lifecycle states in which a job resource's job is not running, whatever its job status says. */
const NOT_RUNNING_LIFECYCLE_STATES: readonly string[] = ['SUSPENDED', 'FAILED', 'DELETING', 'DELETED'];

/** What `disposeSavepoint` reported for a COMPLETED snapshot being deleted. */
export type SavepointDisposal = { outcome: 'disposed' } | { outcome: 'target-gone' } | { outcome: 'unreachable'; reason: string };

/** What is known of the resource `spec.jobReference` names. */
export type SnapshotTarget = { kind: 'unreferenced' } | { kind: 'missing' } | { kind: 'found'; running: boolean };

export type SnapshotStatusPatch = { [K in keyof FlinkStateSnapshotStatus]?: FlinkStateSnapshotStatus[K] | null };
export type SnapshotLabelPatch = Record<string, string>;

export interface SnapshotEvent {
  type: EventType;
  reason: string;
  message: string;
}

export type StateSnapshotStep =
  | { kind: 'add-finalizer-and-labels'; finalizers: string[]; labels: SnapshotLabelPatch }
  | { kind: 'sync-labels'; labels: SnapshotLabelPatch }
  | { kind: 'dispose'; ref: { kind: JobReferenceKind; namespace: string; name: string }; path: string }
  | { kind: 'remove-finalizer'; finalizers: string[]; event?: SnapshotEvent }
  | { kind: 'complete-existing'; status: SnapshotStatusPatch }
  | { kind: 'fail-invalid'; status: SnapshotStatusPatch; event: SnapshotEvent }
  | { kind: 'target-missing'; status: SnapshotStatusPatch; retryAfterMs?: number; event: SnapshotEvent }
  | { kind: 'abandon'; status: SnapshotStatusPatch; event: SnapshotEvent }
  | { kind: 'wait'; requeue: 'progress' | 'steady' | 'none'; wakeUpInMs?: number; event?: SnapshotEvent };

export interface StateSnapshotDecisionInput {
  snapshot: FlinkStateSnapshot;
  target: SnapshotTarget;
  now: number;
  notRunningGraceMs: number;
  /** Epoch ms this process last counted a missing-target attempt of this snapshot. */
  lastAttemptAt?: number;
  /** Set once `dispose` was performed in this pass. */
  disposal?: SavepointDisposal;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Whether a FlinkDeployment / FlinkSessionJob v1 status says its job runs: `jobStatus.state`
 * RUNNING and a lifecycle state that is not SUSPENDED, FAILED, DELETING or DELETED (Apache
 * `ReconciliationUtils.isJobRunning`, plus the lifecycle).
 */
export function isTargetJobRunning(status: unknown): boolean {
  if (!isRecord(status)) return false;
  const lifecycle = status['lifecycleState'];
  if (typeof lifecycle === 'string' && NOT_RUNNING_LIFECYCLE_STATES.includes(lifecycle)) return false;
  const jobStatus = status['jobStatus'];
  return isRecord(jobStatus) && jobStatus['state'] === 'RUNNING';
}

/** The labels Apache's `getSnapshotLabels` gives this snapshot (a user's trigger type kept). */
export function desiredSnapshotLabels(snapshot: FlinkStateSnapshot): Record<string, string> {
  const labels: Record<string, string> = {};
  const type = snapshotTypeOf(snapshot.spec ?? {});
  if (type) labels[SNAPSHOT_TYPE_LABEL] = type;
  labels[SNAPSHOT_TRIGGER_TYPE_LABEL] = snapshot.metadata.labels?.[SNAPSHOT_TRIGGER_TYPE_LABEL] ?? DEFAULT_SNAPSHOT_TRIGGER_TYPE_LABEL_VALUE;
  if (snapshot.status) labels[SNAPSHOT_STATE_LABEL] = snapshotStateOf(snapshot.status);
  const reference = snapshot.spec?.jobReference;
  if (typeof reference?.kind === 'string') labels[SNAPSHOT_JOB_REFERENCE_KIND_LABEL] = reference.kind;
  if (typeof reference?.name === 'string' && reference.name !== '') labels[SNAPSHOT_JOB_REFERENCE_NAME_LABEL] = reference.name;
  return labels;
}

/** The labels that differ from {@link desiredSnapshotLabels} (empty: nothing to patch). */
export function snapshotLabelPatch(snapshot: FlinkStateSnapshot): SnapshotLabelPatch {
  const current = snapshot.metadata.labels ?? {};
  return Object.fromEntries(Object.entries(desiredSnapshotLabels(snapshot)).filter(([key, value]) => current[key] !== value));
}

function nameOf(snapshot: FlinkStateSnapshot): { namespace: string; name: string } {
  return { namespace: snapshot.metadata.namespace ?? '', name: snapshot.metadata.name ?? '' };
}

function ageMs(snapshot: FlinkStateSnapshot, now: number): number {
  const created = snapshot.metadata.creationTimestamp as Date | string | undefined;
  const at = created === undefined ? NaN : new Date(created).getTime();
  return Number.isNaN(at) ? Number.POSITIVE_INFINITY : now - at;
}

function decideDeletion(input: StateSnapshotDecisionInput): StateSnapshotStep {
  const { snapshot } = input;
  const rest = (snapshot.metadata.finalizers ?? []).filter((f) => f !== FLINK_STATE_SNAPSHOT_FINALIZER);
  const state = snapshotStateOf(snapshot.status);
  const savepoint = snapshot.spec?.savepoint;
  const reference = snapshot.spec?.jobReference;
  const path = snapshot.status?.path;
  if (!savepoint || !savepointSpecWithDefaults(savepoint).disposeOnDelete || !reference?.kind || !reference.name || !path || state !== 'COMPLETED') {
    if (state === 'IN_PROGRESS' && savepoint && savepointSpecWithDefaults(savepoint).disposeOnDelete && reference?.kind && reference.name) {
      return { kind: 'wait', requeue: 'progress' };
    }
    return { kind: 'remove-finalizer', finalizers: rest };
  }
  const { namespace, name } = nameOf(snapshot);
  const disposal = input.disposal;
  if (!disposal) return { kind: 'dispose', ref: { kind: reference.kind, namespace, name: reference.name }, path };
  switch (disposal.outcome) {
    case 'disposed':
      return {
        kind: 'remove-finalizer',
        finalizers: rest,
        event: {
          type: 'Normal',
          reason: 'SnapshotDisposed',
          message: `Disposed of the savepoint at ${path} before deleting FlinkStateSnapshot ${namespace}/${name}`,
        },
      };
    case 'target-gone':
      return {
        kind: 'remove-finalizer',
        finalizers: rest,
        event: {
          type: 'Warning',
          reason: 'SnapshotNotDisposed',
          message: `The savepoint data at ${path} was left in place: ${reference.kind} ${reference.name}, whose cluster would dispose of it, no longer exists; delete the data by hand if it is not needed`,
        },
      };
    case 'unreachable':
      return {
        kind: 'wait',
        requeue: 'progress',
        event: {
          type: 'Warning',
          reason: 'SnapshotDisposeFailed',
          message: `Could not dispose of the savepoint at ${path} (${disposal.reason}); retried until the job's cluster answers; remove the finalizer by hand to leave the data`,
        },
      };
  }
}

function decideUnprocessed(input: StateSnapshotDecisionInput): StateSnapshotStep {
  const { snapshot, now } = input;
  const { namespace, name } = nameOf(snapshot);
  const status = snapshot.status;
  const at = snapshotTimestamp(now);
  // The target rule is left out (targetFound not given): a missing target is retried below, not FAILED at once.
  const errors = validateFlinkStateSnapshot(snapshot);
  if (errors.length > 0) {
    const error = `${formatFieldErrors(errors)} (fix the spec and recreate the FlinkStateSnapshot)`;
    return {
      kind: 'fail-invalid',
      status: { state: 'FAILED', error, resultTimestamp: at },
      event: { type: 'Warning', reason: 'SnapshotError', message: error },
    };
  }
  const savepoint = snapshot.spec.savepoint;
  if (savepoint && savepointSpecWithDefaults(savepoint).alreadyExists) {
    return {
      kind: 'complete-existing',
      status: { state: 'COMPLETED', path: savepoint.path ?? null, triggerTimestamp: at, resultTimestamp: at, error: null },
    };
  }
  const reference = snapshot.spec.jobReference;
  const kind = reference?.kind ?? '';
  const target = reference?.name ?? '';
  if (input.target.kind !== 'found') {
    const failures = status?.failures ?? INITIAL_SNAPSHOT_FAILURES;
    if (input.lastAttemptAt !== undefined && failures > 0) {
      const due = input.lastAttemptAt + snapshotRetryDelayMs(failures);
      if (now < due) return { kind: 'wait', requeue: 'none', wakeUpInMs: due - now };
    }
    const error = `Target for snapshot ${namespace}/${name} was not found: create ${kind} ${target} or fix spec.jobReference`;
    const counted = failures + 1;
    const limit = backoffLimitOf(snapshot.spec);
    const exhausted = limit >= 0 && counted > limit;
    const patch: SnapshotStatusPatch = { failures: counted, ...(status?.error !== error ? { error } : {}) };
    if (exhausted) {
      return {
        kind: 'target-missing',
        status: { ...patch, state: 'FAILED', resultTimestamp: at },
        event: { type: 'Warning', reason: 'SnapshotError', message: `${error}; failed ${counted} times, more than backoffLimit ${limit}: FAILED` },
      };
    }
    return {
      kind: 'target-missing',
      status: status?.state === undefined ? { ...patch, state: 'TRIGGER_PENDING' } : patch,
      retryAfterMs: snapshotRetryDelayMs(counted),
      event: { type: 'Warning', reason: 'SnapshotError', message: error },
    };
  }
  if (!input.target.running) {
    const age = ageMs(snapshot, now);
    if (age < input.notRunningGraceMs) return { kind: 'wait', requeue: 'progress' };
    const error = `Secondary resource ${kind}/${target} for savepoint ${name} is not running`;
    return {
      kind: 'abandon',
      status: { state: 'ABANDONED', error, resultTimestamp: at },
      event: { type: 'Warning', reason: 'SnapshotAbandoned', message: error },
    };
  }
  return { kind: 'wait', requeue: 'steady' };
}

/** The one next step for `input.snapshot` (see the module comment for the rules). */
export function decideStateSnapshot(input: StateSnapshotDecisionInput): StateSnapshotStep {
  const { snapshot } = input;
  const finalizers = snapshot.metadata.finalizers ?? [];
  const hasFinalizer = finalizers.includes(FLINK_STATE_SNAPSHOT_FINALIZER);
  const deleting = snapshot.metadata.deletionTimestamp !== undefined && snapshot.metadata.deletionTimestamp !== null;
  if (deleting) return hasFinalizer ? decideDeletion(input) : { kind: 'wait', requeue: 'none' };
  const labels = snapshotLabelPatch(snapshot);
  if (!hasFinalizer) return { kind: 'add-finalizer-and-labels', finalizers: [...finalizers, FLINK_STATE_SNAPSHOT_FINALIZER], labels };
  if (Object.keys(labels).length > 0) return { kind: 'sync-labels', labels };
  const state = snapshotStateOf(snapshot.status);
  if (FINAL_SNAPSHOT_STATES.includes(state)) return { kind: 'wait', requeue: 'none' };
  if (state === 'TRIGGER_PENDING' && !snapshot.status?.triggerId) return decideUnprocessed(input);
  // IN_PROGRESS whose job resource is gone: nobody can finish it (the job's reconciler went with it).
  if (input.target.kind === 'missing') {
    const reference = snapshot.spec.jobReference;
    const error = `${reference?.kind ?? ''}/${reference?.name ?? ''} was deleted while the snapshot was in progress; nothing can complete it`;
    return {
      kind: 'abandon',
      status: { state: 'ABANDONED', error, resultTimestamp: snapshotTimestamp(input.now) },
      event: { type: 'Warning', reason: 'SnapshotAbandoned', message: error },
    };
  }
  // IN_PROGRESS, or TRIGGER_PENDING with a trigger id: the job's reconciler is on it.
  return { kind: 'wait', requeue: 'progress' };
}
