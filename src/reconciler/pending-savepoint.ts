/**
 * Finds out where a pending savepoint stands, by asking Flink.
 *
 * A pending savepoint is recorded in the state ConfigMap *before* the trigger is sent (the
 * intent), and its triggerId right after Flink answers. So after a crash the state may hold an
 * intent without a triggerId, and the trigger may or may not have reached Flink. This module
 * resolves that by looking at the world, never by sending the trigger again blindly:
 *
 * - with a triggerId: Flink's answer for that trigger;
 * - without one (or when Flink no longer knows the trigger, e.g. after a JobManager restart):
 *   the job's savepoint history (`GET /jobs/:id/checkpoints`) since the intent was recorded.
 *   A savepoint found there is adopted; none found while the job still runs means the trigger
 *   never arrived, and only then may it be sent.
 *
 * Assumptions: the operator's and the JobManager's clocks agree within `clockSkewToleranceMs`
 * (a savepoint triggered up to that long *before* the intent was recorded is also adopted).
 * Caveat: Flink keeps a bounded checkpoint history (`web.checkpoints.history`, 10 by default);
 * an intent older than that history is resolved as "lost", which fails the upgrade loudly rather
 * than guessing.
 */
import { createHash } from 'node:crypto';
import type { AnyInternalState, PendingSnapshot, SavepointRecord } from '../api/internal-state.js';
import { FlinkRestError } from '../flink/flink-rest-error.js';
import { TERMINAL_JOB_STATES } from '../flink/flink-rest-types.js';
import type { FlinkJobApi } from './reconciler-dependencies.js';

export type SavepointProgress =
  | { kind: 'in-progress' }
  | { kind: 'completed'; location: string }
  | { kind: 'failed'; reason: string }
  /** Flink never saw the trigger and the job still runs: the trigger may be sent now. */
  | { kind: 'not-sent' }
  /** The job is gone or ended without the savepoint. */
  | { kind: 'lost'; reason: string };

function failureText(cause: { class?: string; 'stack-trace'?: string } | undefined): string {
  if (!cause) return 'unknown cause';
  const firstLine = cause['stack-trace']?.split('\n')[0];
  return firstLine ?? cause.class ?? 'unknown cause';
}

function isUnknownTrigger(error: unknown): boolean {
  return error instanceof FlinkRestError && error.source === 'flink' && (error.status === 404 || error.status === 400);
}

const DISPOSAL_POLLS = 10;
const DISPOSAL_POLL_MS = 50;

/** How a disposal ended: done (or nothing was there), refused by Flink, or not answered. */
export type SavepointDisposalOutcome = { outcome: 'disposed' } | { outcome: 'refused'; reason: string } | { outcome: 'unanswered'; reason: string };

/**
 * Asks Flink to dispose of the savepoint at `location` (POST /savepoint-disposal) and waits a
 * little for its answer. A savepoint that does not exist any more counts as disposed (a repeat after
 * a crash is the same operation).
 */
export async function disposeSavepointAndConfirm(
  api: Pick<FlinkJobApi, 'disposeSavepoint' | 'getDisposalStatus'>,
  location: string,
): Promise<SavepointDisposalOutcome> {
  try {
    const triggerId = await api.disposeSavepoint(location);
    for (let i = 0; i < DISPOSAL_POLLS; i++) {
      const status = await api.getDisposalStatus(triggerId);
      if (status.status === 'COMPLETED') {
        if (!('failureCause' in status)) return { outcome: 'disposed' };
        const cause = `${status.failureCause.class ?? ''} ${status.failureCause['stack-trace']?.split('\n')[0] ?? ''}`.trim();
        return /FileNotFound|does not exist|not found/i.test(cause) ? { outcome: 'disposed' } : { outcome: 'refused', reason: cause };
      }
      await new Promise((r) => setTimeout(r, DISPOSAL_POLL_MS));
    }
    return { outcome: 'unanswered', reason: `Flink did not finish disposing of ${location} within ${(DISPOSAL_POLLS * DISPOSAL_POLL_MS) / 1000} s` };
  } catch (error) {
    return { outcome: 'unanswered', reason: (error as Error).message };
  }
}

/** The Flink calls the resolution needs. */
export type SavepointStatusApi = Pick<FlinkJobApi, 'getSavepointStatus' | 'listJobs' | 'getCheckpoints'>;

export async function savepointProgress(api: SavepointStatusApi, pending: PendingSnapshot, clockSkewToleranceMs = 0): Promise<SavepointProgress> {
  if (pending.triggerId) {
    try {
      const answer = await api.getSavepointStatus(pending.jobId, pending.triggerId);
      if (answer.status === 'IN_PROGRESS') return { kind: 'in-progress' };
      if ('location' in answer) return { kind: 'completed', location: answer.location };
      return { kind: 'failed', reason: failureText(answer.failureCause) };
    } catch (error) {
      if (!isUnknownTrigger(error)) throw error;
      // Flink forgot the trigger (JobManager restarted): fall through to the history.
    }
  }
  const jobs = await api.listJobs();
  const job = jobs.find((j) => j.jid === pending.jobId);
  if (!job) return { kind: 'lost', reason: `job ${pending.jobId} is not known to the JobManager any more` };
  const statistics = await api.getCheckpoints(pending.jobId);
  const since = pending.requestedAt - clockSkewToleranceMs;
  const candidates = [statistics.latest.savepoint, ...statistics.history]
    .filter((c): c is NonNullable<typeof c> => c !== null && c !== undefined && c.is_savepoint && c.trigger_timestamp >= since)
    .sort((a, b) => a.trigger_timestamp - b.trigger_timestamp);
  const completed = candidates.find((c) => c.status === 'COMPLETED' && c.external_path);
  if (completed?.external_path) return { kind: 'completed', location: completed.external_path };
  if (candidates.some((c) => c.status === 'IN_PROGRESS')) return { kind: 'in-progress' };
  const failed = candidates.find((c) => c.status === 'FAILED');
  if (failed) return { kind: 'failed', reason: failed.failure_message ?? 'savepoint failed' };
  if (job.state === 'RUNNING') return { kind: 'not-sent' };
  if (TERMINAL_JOB_STATES.has(String(job.state))) return { kind: 'lost', reason: `job ${pending.jobId} ended (${job.state}) without the requested savepoint` };
  return { kind: 'in-progress' };
}

/** The history record of a pending savepoint that completed at `location`, `now`. */
export function completedSavepointRecord(pending: PendingSnapshot, location: string, now: number): SavepointRecord {
  return {
    location,
    timeStamp: now,
    triggerType: pending.triggerType,
    ...(pending.formatType ? { formatType: pending.formatType } : {}),
    ...(pending.triggerNonce !== undefined ? { triggerNonce: pending.triggerNonce } : {}),
    jobId: pending.jobId,
  };
}

/** The options a recorded intent is sent to Flink with (its trigger id makes a re-send the same operation). */
export function savepointTriggerOptions(pending: PendingSnapshot): { targetDirectory?: string; formatType?: 'CANONICAL' | 'NATIVE'; triggerId?: string } {
  return {
    ...(pending.targetDirectory ? { targetDirectory: pending.targetDirectory } : {}),
    ...(pending.formatType && pending.formatType !== 'UNKNOWN' ? { formatType: pending.formatType } : {}),
    ...(pending.triggerId ? { triggerId: pending.triggerId } : {}),
  };
}

/**
 * The trigger id of a savepoint's attempt: random, except for a manual savepoint, whose id is
 * derived from the job, the nonce it answers, the nonce it follows (the state's lastReconciledSpec)
 * and the attempt: 32 hex, Flink's TriggerId form.
 *
 * Why: Flink treats a trigger whose id it already knows as the same operation (its
 * DispatcherCachedOperationsHandler acknowledges an operation key it has cached instead of starting
 * another savepoint). A pass that lost its intent — a state ConfigMap rebuilt from the world after
 * it was deleted or refused, while the trigger of a paused predecessor was still on its way (the
 * side-effect fence's caveat) — asks for the same nonce again and sends the same id: whichever
 * request arrives second joins the first savepoint instead of taking a second one (invariant "one
 * savepoint per action"; chaos seed 12).
 * Caveats: the cache is per JobManager process (a new JobManager forgets the ids; the state rebuild
 * then recognises a completed savepoint by its time, state-rebuild.ts); a nonce set back to a value
 * it had before, from the same previous nonce, on the same job, meets the old operation and is
 * answered by the old savepoint.
 */
export function savepointTriggerId(
  savepoint: Pick<PendingSnapshot, 'triggerType' | 'jobId' | 'triggerNonce'>,
  state: Pick<AnyInternalState, 'lastReconciledSpec'>,
  attempt: number,
  randomId: () => string,
): string {
  if (savepoint.triggerType !== 'MANUAL' || savepoint.triggerNonce === undefined) return randomId();
  return manualSavepointTriggerId(savepoint.jobId, savepoint.triggerNonce, state.lastReconciledSpec?.job?.savepointTriggerNonce, attempt);
}

/** The derived id itself (the job, the nonce answered, the nonce followed, the attempt). */
export function manualSavepointTriggerId(jobId: string, nonce: number, previousNonce: number | undefined, attempt: number): string {
  return createHash('sha256')
    .update(`manual-savepoint\n${jobId}\n${previousNonce ?? ''}\n${nonce}\n${attempt}`)
    .digest('hex')
    .slice(0, 32);
}
