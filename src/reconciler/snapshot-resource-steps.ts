/**
 * The publish step: carries out the oldest FlinkStateSnapshot write a state owes
 * (`snapshotResourceWrites`, snapshot-resources.ts), then removes it from the state. One
 * implementation for both resources (a FlinkDeployment's reconciler and a FlinkSessionJob's reach it
 * through SnapshotResourceStepContext).
 *
 * intent → effect → result: the entry was written with the fact it publishes (the intent); the
 * step creates / patches / deletes the object (the effect) and then drops the entry (the result).
 * A crash in between repeats the effect, which lands on the same name: a create finds the object
 * (409), a status patch writes the same fields, a delete finds nothing. So a snapshot resource is
 * neither lost nor duplicated.
 *
 * Guarantees
 * - Only objects that are the entry's are written: the operator's own (same jobReference) or, for
 *   a user's snapshot, the object with the recorded uid; another object of that name is left alone
 *   (a Warning event says so) and the entry dropped.
 * - Every write is preceded by the pass's fence check.
 * - The resources are a record *of* the state, never its source: an entry the API server refuses
 *   for good (the CRD not installed: 404; no permission: 403; invalid: 422) is dropped with a
 *   Warning event; the savepoint stays in the state's history and the status.
 * Caveats
 * - Transient API failures are thrown: the pass is retried with backoff, and nothing behind the
 *   entry (an upgrade, say) proceeds until the API server answers again.
 */
import { sameValue } from '../api/canonical-json.js';
import type { FlinkStateSnapshot } from '../api/flink-state-snapshot.js';
import { SNAPSHOT_STATE_LABEL } from '../api/flink-state-snapshot.js';
import type { FlinkStateSnapshotStatus } from '../api/flink-state-snapshot-status.js';
import type { AnyInternalState, SnapshotResourceWrite } from '../api/internal-state.js';
import { isAlreadyExists, KubeApiError, toKubeApiError } from '../kube/api-errors.js';
import type { FlinkStateSnapshotWriter } from '../kube/flink-state-snapshot-client.js';
import { isSnapshotOf, operatorSnapshotObject } from './snapshot-resources.js';

/** What the publish step needs of a pass, whichever resource it reconciles. */
export interface SnapshotResourceStepContext<S extends AnyInternalState> {
  readonly writer: FlinkStateSnapshotWriter;
  /** The namespace of the reconciled resource (and of its snapshots). */
  readonly namespace: string;
  /** The pass's fence: throws when this instance no longer leads. */
  check(what: string): void;
  /** Emits a Kubernetes event on the reconciled resource. */
  emit(type: 'Normal' | 'Warning', reason: string, message: string): void;
  state(): S;
  save(fn: (current: S) => S): Promise<S>;
}

/** Permanent refusals: the entry cannot be written, ever (see the module comment). */
function refusedForGood(error: unknown): KubeApiError | undefined {
  const kubeError = error instanceof KubeApiError ? error : toKubeApiError(error);
  return kubeError.code === 404 || kubeError.code === 403 || kubeError.code === 422 ? kubeError : undefined;
}

/** Writes the oldest owed entry, then removes it. */
export async function publishSnapshotResource<S extends AnyInternalState>(ctx: SnapshotResourceStepContext<S>): Promise<{ requeue: 'continue' }> {
  const write = ctx.state().snapshotResourceWrites?.[0];
  if (!write) return { requeue: 'continue' };
  try {
    await (write.action === 'delete' ? deleteResource(ctx, write) : publish(ctx, write));
  } catch (error) {
    const refused = refusedForGood(error);
    if (!refused) throw error;
    const why =
      refused.code === 404
        ? 'the FlinkStateSnapshot CRD is not installed (kubectl apply --server-side -f crds/)'
        : refused.code === 403
          ? 'the operator may not write flinkstatesnapshots (see manifests/)'
          : refused.message;
    ctx.emit(
      'Warning',
      'SnapshotResourceError',
      `FlinkStateSnapshot ${write.name} could not be ${write.action === 'delete' ? 'deleted' : 'written'}: ${why}; the snapshot stays recorded in the operator state and status`,
    );
  }
  await ctx.save((s) => {
    const owed = s.snapshotResourceWrites ?? [];
    if (owed.length === 0 || !sameValue(owed[0], write)) return s;
    return { ...s, snapshotResourceWrites: owed.length > 1 ? owed.slice(1) : undefined };
  });
  return { requeue: 'continue' };
}

async function publish<S extends AnyInternalState>(ctx: SnapshotResourceStepContext<S>, write: SnapshotResourceWrite): Promise<void> {
  let current: FlinkStateSnapshot | undefined;
  if (write.uid) {
    current = await ctx.writer.get(ctx.namespace, write.name);
    if (!current) return; // the user deleted their snapshot: nothing to report to
  } else {
    // The operator's own: created at once (the usual case); a repeat after a crash finds it (409), then reads it.
    ctx.check(`create FlinkStateSnapshot ${write.name}`);
    try {
      current = await ctx.writer.create(operatorSnapshotObject(ctx.namespace, write));
    } catch (error) {
      if (!isAlreadyExists(error)) throw error;
      current = await ctx.writer.get(ctx.namespace, write.name);
      if (!current) throw error;
    }
  }
  if (!isSnapshotOf(current, write)) {
    ctx.emit(
      'Warning',
      'SnapshotResourceError',
      `FlinkStateSnapshot ${write.name} exists but is not this snapshot's (another job or a recreated object); left unchanged`,
    );
    return;
  }
  if (write.status && !statusHolds(current.status, write.status)) {
    ctx.check(`write the status of FlinkStateSnapshot ${write.name}`);
    current = await ctx.writer.patchStatus(ctx.namespace, write.name, { ...write.status, ...(write.status.error === undefined ? { error: null } : {}) });
  }
  const state = write.status?.state;
  if (state && current.metadata.labels?.[SNAPSHOT_STATE_LABEL] !== state) {
    ctx.check(`label FlinkStateSnapshot ${write.name}`);
    await ctx.writer.patchMetadata(ctx.namespace, write.name, { labels: { [SNAPSHOT_STATE_LABEL]: state } });
  }
}

/** Whether `current` already says everything `wanted` says (and no stale error). */
function statusHolds(current: FlinkStateSnapshotStatus | undefined, wanted: FlinkStateSnapshotStatus): boolean {
  if (!current) return false;
  if (wanted.error === undefined && current.error !== undefined) return false;
  return (Object.keys(wanted) as Array<keyof FlinkStateSnapshotStatus>).every((key) => current[key] === wanted[key]);
}

async function deleteResource<S extends AnyInternalState>(ctx: SnapshotResourceStepContext<S>, write: SnapshotResourceWrite): Promise<void> {
  const current: FlinkStateSnapshot | undefined = await ctx.writer.get(ctx.namespace, write.name);
  if (!current || current.metadata.deletionTimestamp || !isSnapshotOf(current, write)) return;
  ctx.check(`delete FlinkStateSnapshot ${write.name}`);
  await ctx.writer.delete(ctx.namespace, write.name, current.metadata.uid);
}
