/**
 * Savepoint steps: start one (intent, then trigger), follow it to its end, trim the history.
 *
 * Write order (design/004, design/005):
 * - start: the intent, with the trigger id chosen here, goes to the state ConfigMap; then the
 *   trigger is sent with that id. No result write is needed: Flink answers for that id, and a
 *   trigger re-sent after a crash is the same operation for Flink (it de-duplicates trigger ids).
 * - completion: the location goes into the history (and, for a stop, into upgradeSavepointPath)
 *   in one write, before anything else happens, so a completed savepoint is never lost.
 * - history trim: a savepoint is disposed first and leaves the history only once Flink confirmed
 *   the disposal (a crash in between disposes it again, which Flink answers as done).
 *
 * Failures: manual and periodic savepoints are retried with a new trigger id within
 * `savepoint.trigger.grace-period`, then reported (SavepointError) and acknowledged so they are not
 * retried forever; a failed stop (upgrade, suspend) leaves the job running the old spec.
 */
import type { FlinkDeploymentSpec } from '../api/flink-deployment-spec.js';
import { flattenFlinkConfiguration, savepointDirectory } from '../api/flink-configuration.js';
import type { InternalState, PendingSnapshot, SavepointRecord } from '../api/internal-state.js';
import { expiredSavepoints } from './deployment-operator-settings.js';
import { savepointProgress } from './pending-savepoint.js';
import type { Pass, PassContext, StepResult } from './reconcile-pass.js';

export interface SavepointRequest {
  triggerType: 'MANUAL' | 'PERIODIC' | 'UPGRADE';
  /** Stop the job with the savepoint (upgrade, suspend, deletion). */
  stopJob: boolean;
  /** The job to snapshot. */
  jobId: string;
  /** The spec whose configuration names the target directory and format. */
  spec: FlinkDeploymentSpec;
  nonce?: number;
}

function formatTypeOf(spec: FlinkDeploymentSpec): 'CANONICAL' | 'NATIVE' | undefined {
  const value = flattenFlinkConfiguration(spec.flinkConfiguration)['kubernetes.operator.savepoint.format.type']?.toUpperCase();
  return value === 'NATIVE' || value === 'CANONICAL' ? value : undefined;
}

const DISPOSAL_POLLS = 10;
const DISPOSAL_POLL_MS = 50;

export class SnapshotSteps {
  constructor(private readonly ctx: PassContext) {}

  /** Records the intent (UPGRADING too when the job is to stop), then sends the trigger. */
  async start(pass: Pass, request: SavepointRequest): Promise<StepResult> {
    const target = savepointDirectory(flattenFlinkConfiguration(request.spec.flinkConfiguration));
    const format = formatTypeOf(request.spec);
    const pending: PendingSnapshot = {
      kind: 'savepoint',
      triggerType: request.triggerType,
      jobId: request.jobId,
      stopJob: request.stopJob,
      requestedAt: this.ctx.deps.now(),
      triggerId: this.ctx.deps.newJobId(),
      ...(target ? { targetDirectory: target } : {}),
      ...(format ? { formatType: format } : {}),
      ...(request.nonce !== undefined ? { triggerNonce: request.nonce } : {}),
    };
    await this.ctx.save(pass, (s) => (s.pendingSavepoint ? s : { ...s, pendingSavepoint: pending, ...(request.stopJob ? { reconciliationState: 'UPGRADING' as const } : {}) }));
    return this.send(pass, pass.state.pendingSavepoint!);
  }

  /** The side effect of a recorded intent (see the module comment: no result write). */
  async send(pass: Pass, pending: PendingSnapshot): Promise<StepResult> {
    const options = {
      ...(pending.targetDirectory ? { targetDirectory: pending.targetDirectory } : {}),
      ...(pending.formatType && pending.formatType !== 'UNKNOWN' ? { formatType: pending.formatType } : {}),
      ...(pending.triggerId ? { triggerId: pending.triggerId } : {}),
    };
    if (pending.stopJob) await pass.api.stopWithSavepoint(pending.jobId, { ...options, drain: false });
    else await pass.api.triggerSavepoint(pending.jobId, options);
    return 'progress';
  }

  /** Follows a pending savepoint; resolves an intent without an answer by asking Flink. */
  async progress(pass: Pass, pending: PendingSnapshot): Promise<StepResult> {
    const jmStatus = pass.outcome.jobManagerStatus;
    if (jmStatus !== 'READY') {
      if (!pending.stopJob && (jmStatus === 'MISSING' || jmStatus === 'ERROR')) return this.fail(pass, pending, 'lost', 'the JobManager is not running');
      if (pending.stopJob && jmStatus === 'MISSING') return this.jobManagerGone(pass, pending);
      return 'progress';
    }
    const progress = await savepointProgress(pass.api, pending);
    switch (progress.kind) {
      case 'in-progress':
        return 'progress';
      case 'not-sent':
        return this.send(pass, pending);
      case 'completed':
        return this.complete(pass, pending, progress.location);
      case 'failed':
      case 'lost':
        return this.fail(pass, pending, progress.kind, progress.reason);
    }
  }

  private async complete(pass: Pass, pending: PendingSnapshot, location: string): Promise<StepResult> {
    const now = this.ctx.deps.now();
    const record: SavepointRecord = {
      location,
      timeStamp: now,
      triggerType: pending.triggerType,
      ...(pending.formatType ? { formatType: pending.formatType } : {}),
      ...(pending.triggerNonce !== undefined ? { triggerNonce: pending.triggerNonce } : {}),
      jobId: pending.jobId,
    };
    await this.ctx.save(pass, (s) => {
      if (s.pendingSavepoint?.triggerId !== pending.triggerId) return s;
      const next: InternalState = { ...s, pendingSavepoint: undefined, savepointHistory: [...s.savepointHistory, record] };
      if (pending.stopJob) next.upgradeSavepointPath = location;
      if (pending.triggerType === 'PERIODIC') next.lastPeriodicSavepointTimestamp = now;
      if (pending.triggerType === 'MANUAL') next.lastReconciledSpec = acknowledgeNonce(s.lastReconciledSpec, pending.triggerNonce);
      return next;
    });
    this.ctx.deps.events.emit(pass.deployment, 'Normal', 'SavepointCompleted', `${pending.triggerType} savepoint of job ${pending.jobId} completed: ${location}`);
    return 'continue';
  }

  private async fail(pass: Pass, pending: PendingSnapshot, kind: 'failed' | 'lost', reason: string): Promise<StepResult> {
    const { deps } = this.ctx;
    const now = deps.now();
    if (!pending.stopJob && kind === 'failed' && now - pending.requestedAt < pass.settings.triggerGracePeriodMs) {
      const retry: PendingSnapshot = { ...pending, triggerId: deps.newJobId(), failures: (pending.failures ?? 0) + 1 };
      await this.ctx.save(pass, (s) => (s.pendingSavepoint?.triggerId === pending.triggerId ? { ...s, pendingSavepoint: retry } : s));
      deps.log.warn({ reason, attempt: retry.failures }, 'savepoint failed; retrying within the grace period');
      return this.send(pass, retry);
    }
    const generation = pass.deployment.metadata.generation ?? 0;
    const what = pending.stopJob
      ? `the job keeps running its previous spec; the upgrade to generation ${generation} is tried again on the next spec change (or set job.upgradeMode: stateless)`
      : 'it is not retried further';
    const message = `${pending.triggerType} savepoint of job ${pending.jobId} ${kind === 'failed' ? 'failed' : 'was lost'}: ${reason}; ${what}`;
    deps.events.emit(pass.deployment, 'Warning', 'SavepointError', message);
    pass.outcome.error = message;
    await this.ctx.save(pass, (s) => {
      if (s.pendingSavepoint?.triggerId !== pending.triggerId) return s;
      const next: InternalState = { ...s, pendingSavepoint: undefined };
      if (pending.stopJob && s.reconciliationState === 'UPGRADING') next.reconciliationState = 'DEPLOYED';
      if (pending.stopJob) next.failedUpgrade = { generation, reason: message, at: new Date(now).toISOString() };
      if (pending.triggerType === 'PERIODIC') next.lastPeriodicSavepointTimestamp = now;
      if (pending.triggerType === 'MANUAL') next.lastReconciledSpec = acknowledgeNonce(s.lastReconciledSpec, pending.triggerNonce);
      return next;
    });
    return 'steady';
  }

  /**
   * The JobManager Deployment disappeared while its job was being stopped with a savepoint: the job
   * is gone with it and Flink can no longer say whether the savepoint completed. The stop is over;
   * the upgrade (or suspend) goes on from the newest savepoint the state knows, and says so.
   */
  private async jobManagerGone(pass: Pass, pending: PendingSnapshot): Promise<StepResult> {
    const newest = pass.state.upgradeSavepointPath ?? pass.state.savepointHistory.at(-1)?.location;
    const message =
      `The JobManager Deployment disappeared while job ${pending.jobId} was being stopped with a savepoint; that savepoint cannot be confirmed. ` +
      (newest ? `Continuing from the newest known savepoint ${newest}` : 'No savepoint is known: continuing without state');
    this.ctx.deps.events.emit(pass.deployment, 'Warning', 'SavepointError', message);
    await this.ctx.save(pass, (s) => (s.pendingSavepoint?.triggerId === pending.triggerId ? { ...s, pendingSavepoint: undefined, reconciliationState: 'UPGRADING' } : s));
    return 'continue';
  }

  /** Disposes savepoints past the history limits, then drops them from the history. */
  async trimHistory(pass: Pass): Promise<void> {
    const { deps } = this.ctx;
    await this.disposeTrimmedForSize(pass);
    const expired = expiredSavepoints(pass.state.savepointHistory, pass.settings, deps.now());
    if (expired.length === 0) return;
    let leaving = expired;
    if (pass.settings.savepointCleanup) {
      if (pass.outcome.jobManagerStatus !== 'READY') return;
      leaving = [];
      for (const record of expired) {
        if (await this.dispose(pass, record.location)) leaving.push(record);
      }
      if (leaving.length === 0) return;
    }
    const gone = new Set(leaving.map((r) => r.location));
    await this.ctx.save(pass, (s) => (s.savepointHistory.some((r) => gone.has(r.location)) ? { ...s, savepointHistory: s.savepointHistory.filter((r) => !gone.has(r.location)) } : s));
  }

  /** Savepoints the state's size rules dropped (configmap-state-store.ts): disposed like expired ones, when cleanup is on. */
  private async disposeTrimmedForSize(pass: Pass): Promise<void> {
    const { deps } = this.ctx;
    const trimmed = deps.takeTrimmedSavepoints(pass.deployment);
    if (trimmed.length === 0 || !pass.settings.savepointCleanup) return;
    if (pass.outcome.jobManagerStatus !== 'READY') {
      deps.returnTrimmedSavepoints(pass.deployment, trimmed);
      return;
    }
    const left = [];
    for (const record of trimmed) if (!(await this.dispose(pass, record.location))) left.push(record);
    deps.returnTrimmedSavepoints(pass.deployment, left);
  }

  /** True once Flink confirmed the savepoint is gone (disposed now, or it did not exist any more). */
  private async dispose(pass: Pass, location: string): Promise<boolean> {
    try {
      const triggerId = await pass.api.disposeSavepoint(location);
      for (let i = 0; i < DISPOSAL_POLLS; i++) {
        const status = await pass.api.getDisposalStatus(triggerId);
        if (status.status === 'COMPLETED') {
          if (!('failureCause' in status)) return true;
          const cause = `${status.failureCause.class ?? ''} ${status.failureCause['stack-trace']?.split('\n')[0] ?? ''}`;
          if (/FileNotFound|does not exist|not found/i.test(cause)) return true;
          this.ctx.deps.events.emit(pass.deployment, 'Warning', 'SavepointError', `could not dispose savepoint ${location}: ${cause.trim()}`);
          return false;
        }
        await new Promise((r) => setTimeout(r, DISPOSAL_POLL_MS));
      }
    } catch (error) {
      this.ctx.deps.log.warn({ err: (error as Error).message, location }, 'savepoint disposal failed; retried on a later pass');
    }
    return false;
  }
}

function acknowledgeNonce(spec: FlinkDeploymentSpec | undefined, nonce: number | undefined): FlinkDeploymentSpec | undefined {
  if (!spec?.job || nonce === undefined) return spec;
  return { ...spec, job: { ...spec.job, savepointTriggerNonce: nonce } };
}
