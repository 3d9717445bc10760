/**
 * Recovery when the state ConfigMap is missing (deleted by a user or a tool, or a crash before its
 * first write): rebuild what the world proves, never invent what it does not, and never take a
 * value from the FlinkDeployment's status (status is for users; anyone may edit it).
 *
 * Sources, in order (design/004, "Recovery rules"):
 * 1. the deployed record the operator stamps on what it renders (src/flink/deployed-record.ts):
 *    the pinned job id (JobManager Deployment, Flink ConfigMap or its `config.yaml`), the deployed
 *    spec and its generation;
 * 2. Flink's REST API: whether that job runs (`/jobs/overview`), its newest completed savepoint,
 *    the savepoint it was restored from, and a savepoint still in flight (`/jobs/:id/checkpoints`);
 *    a synchronous one (`checkpoint_type: SYNC_SAVEPOINT`) is a stop-with-savepoint: an upgrade or
 *    suspend was under way and is resumed;
 * 3. no JobManager (so no Flink to ask): the suspend savepoint the Flink ConfigMap records
 *    (`flink-operator.io/last-savepoint`); only when nothing records one,
 *    `status.jobStatus.lastSavepoint` is offered as the restore path of the next deployment, and
 *    the message says it is unverified. A last-state job whose Flink ConfigMap is left is rebuilt
 *    as suspended, so that its resume tries Flink HA (the newest checkpoint) before that path.
 *
 * Guarantees: a running job is never redeployed by the rebuild itself: with the deployed spec
 * unknown, the state says "job <id> runs an unknown spec" (`deployedJobId` set, no
 * `lastReconciledSpec`) and the reconciler upgrades it through the normal path (a savepoint first);
 * the rebuilt state passes the internal-state schema; its revision continues from
 * `status.stateRef.revision` (a counter, so that the status stays comparable; the store floors it
 * further by what it saw).
 * Assumptions: `specHash` and canonical JSON are stable across versions (deployed-record.ts).
 * Caveats: `lastStableSpec` (the rollback target) exists only in the state: a rebuilt deployment
 * cannot roll back until a spec has run stably again. Savepoints older than Flink's newest are not known any more (Flink keeps a bounded
 * history); a completed manual savepoint whose acknowledgement was lost is recognised only as "a
 * savepoint taken after the job started while the nonce was unacknowledged" (a periodic savepoint
 * in that window is taken for it).
 */
import type { V1ConfigMap, V1Deployment } from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import type { FlinkDeploymentV1 } from '../api/flink-deployment.js';
import type { FlinkDeploymentSpec } from '../api/flink-deployment-spec.js';
import { emptyInternalState, type InternalState, type PendingSnapshot, type SavepointRecord } from '../api/internal-state.js';
import { readDeployedRecord } from '../flink/deployed-record.js';
import { flinkConfigurationTextOf } from '../flink/flink-config-configmap.js';
import type { FlinkCheckpointingStatistics, FlinkCheckpointStatistics, FlinkJobOverview } from '../flink/flink-rest-types.js';

export interface ObservedWorld {
  /** The JobManager Deployment, if it exists. */
  readonly jobManagerDeployment?: V1Deployment;
  /** The Flink ConfigMap `flink-config-<name>`, if it exists. */
  readonly flinkConfigMap?: V1ConfigMap;
  /** What Flink's REST API answered; absent when there is no JobManager to ask (or it did not answer). */
  readonly flink?: {
    readonly jobs: readonly FlinkJobOverview[];
    /** `/jobs/:id/checkpoints` of the pinned job, when it is known to Flink. */
    readonly checkpoints?: FlinkCheckpointingStatistics;
  };
}

export interface RebuiltState {
  readonly state: InternalState;
  /** True when the deployed spec was recovered from the cluster's deployed record. */
  readonly specConfirmed: boolean;
  /** One or two sentences for the event the reconciler emits (reason StateRebuilt). */
  readonly message: string;
}

/** The job id pinned in the cluster: the deployed record, else the Flink configuration's `$internal.pipeline.job-id`. */
export function pinnedJobIdOf(observed: ObservedWorld): string | undefined {
  const record = readDeployedRecord(observed.jobManagerDeployment, observed.flinkConfigMap);
  if (record.jobId) return record.jobId;
  const text = flinkConfigurationTextOf(observed.flinkConfigMap);
  if (!text) return undefined;
  try {
    const config = parseYaml(text) as Record<string, unknown> | null;
    const value = config?.['$internal.pipeline.job-id'];
    return typeof value === 'string' && /^[0-9a-f]{32}$/.test(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The job of the cluster among Flink's jobs: the pinned one, or the only one when none is pinned. */
export function jobOfCluster<T extends { jid: string }>(jobs: readonly T[], pinned: string | undefined): T | undefined {
  return jobs.find((j) => j.jid === pinned) ?? (pinned === undefined && jobs.length === 1 ? jobs[0] : undefined);
}

function completed(c: FlinkCheckpointStatistics | null | undefined): c is FlinkCheckpointStatistics & { external_path: string } {
  return c !== null && c !== undefined && c.status === 'COMPLETED' && typeof c.external_path === 'string' && c.external_path.length > 0;
}

/** Flink's savepoints of the job, oldest first: the one it restored from, then its newest completed one. */
/** The savepoints Flink still knows of a running job: the one it was restored from and the newest completed one. */
export function savepointsFromFlink(jobId: string, statistics: FlinkCheckpointingStatistics | undefined): SavepointRecord[] {
  if (!statistics) return [];
  const records: SavepointRecord[] = [];
  const restored = statistics.latest.restored;
  if (restored?.is_savepoint && restored.external_path) {
    records.push({ location: restored.external_path, timeStamp: restored.restore_timestamp, triggerType: 'UNKNOWN' });
  }
  const newest = [statistics.latest.savepoint, ...statistics.history]
    .filter((c) => completed(c) && c.is_savepoint)
    .sort((a, b) => (b?.latest_ack_timestamp ?? 0) - (a?.latest_ack_timestamp ?? 0))[0];
  if (completed(newest) && !records.some((r) => r.location === newest.external_path)) {
    records.push({ location: newest.external_path, timeStamp: newest.latest_ack_timestamp, triggerType: 'UNKNOWN', jobId });
  }
  return records;
}

function nonceOf(spec: FlinkDeploymentSpec | undefined): number | undefined {
  return spec?.job?.savepointTriggerNonce ?? undefined;
}

/** Rebuilds the internal state of `deployment` from the observed world (see the module comment). */
export function rebuildStateFromWorld(deployment: FlinkDeploymentV1, observed: ObservedWorld, now: Date = new Date()): RebuiltState {
  const state = emptyInternalState();
  state.revision = deployment.status?.stateRef?.revision ?? 0;
  state.reconciliationTimestamp = now.toISOString();
  const name = `${deployment.metadata.namespace ?? ''}/${deployment.metadata.name ?? ''}`;
  const desired = deployment.spec;

  if (!observed.jobManagerDeployment) {
    // No JobManager: no job runs and no Flink can be asked (a suspended or torn-down cluster). The
    // Flink ConfigMap, if left, still names the pinned job id (Flink's HA store may hold that job).
    const pinned = pinnedJobIdOf(observed);
    if (pinned) state.deployedJobId = pinned;
    const recorded = readDeployedRecord(undefined, observed.flinkConfigMap).lastSavepoint;
    const hint = deployment.status?.jobStatus?.lastSavepoint?.location;
    const offered = desired.job?.upgradeMode !== 'stateless' ? (recorded ?? hint) : undefined;
    if (offered) state.upgradeSavepointPath = offered;
    const restore = !offered
      ? 'the next deployment starts without state'
      : recorded
        ? `the next deployment restores from ${recorded}, the suspend savepoint the cluster's Flink ConfigMap records`
        : `the next deployment restores from ${offered}, the savepoint status.jobStatus.lastSavepoint names (not verified: no cluster is left to ask)`;
    if (desired.job?.state === 'suspended') {
      state.phase = 'SUSPENDED';
      state.firstDeployment = false;
      state.lastReconciledSpec = structuredClone(desired);
      state.lastReconciledGeneration = deployment.metadata.generation;
      return { state, specConfirmed: false, message: `operator state of ${name} was missing and no Flink cluster runs (suspended); ${restore}` };
    }
    const left = readDeployedRecord(undefined, observed.flinkConfigMap).spec;
    if (pinned && left && desired.job?.upgradeMode === 'last-state' && left.job?.upgradeMode === 'last-state') {
      // A last-state job whose cluster is gone (suspended, or its JobManager deleted) with its Flink
      // ConfigMap left: Flink HA may hold the job with checkpoints newer than any savepoint.
      // Rebuilt as suspended with the spec the cluster last ran, so the resume recovers it from
      // Flink HA when HA holds it, and only otherwise restores from the offered savepoint.
      state.phase = 'SUSPENDED';
      state.firstDeployment = false;
      state.lastReconciledSpec = { ...structuredClone(left), job: { ...structuredClone(left.job), state: 'suspended' } };
      const message = `operator state of ${name} was missing and no Flink cluster runs; job ${pinned} is resumed from Flink HA if HA holds it, else ${restore.replace('the next deployment ', '')}`;
      return { state, specConfirmed: false, message };
    }
    state.firstDeployment = true;
    // The job is gone with its cluster: the next pass records a new deployment from the restore path.
    state.phase = 'STOPPED';
    return { state, specConfirmed: false, message: `operator state of ${name} was missing and no Flink cluster is left; ${restore}` };
  }

  const record = readDeployedRecord(observed.jobManagerDeployment, observed.flinkConfigMap);
  const pinned = pinnedJobIdOf(observed);
  const jobs = observed.flink?.jobs ?? [];
  const job = jobOfCluster(jobs, pinned);
  const jobId = job?.jid ?? pinned;
  state.phase = 'DEPLOYED';
  state.firstDeployment = false;
  if (jobId) state.deployedJobId = jobId;
  if (record.spec) {
    state.lastReconciledSpec = structuredClone(record.spec);
    state.lastReconciledGeneration = record.generation ?? deployment.metadata.generation;
  }
  const statistics = job ? observed.flink?.checkpoints : undefined;
  state.savepointHistory = jobId ? savepointsFromFlink(jobId, statistics) : [];

  const facts: string[] = [];
  facts.push(
    record.spec
      ? `deployed spec of generation ${state.lastReconciledGeneration ?? '?'} from the cluster's deployed record`
      : 'deployed spec unknown (no deployed record)',
  );
  facts.push(jobId ? `job ${jobId}` + (job ? ` ${job.state} in Flink` : ' (Flink not asked)') : 'no job id pinned');
  if (state.savepointHistory.length > 0) facts.push(`newest savepoint ${state.savepointHistory.at(-1)!.location}`);

  const inFlight = (statistics?.history ?? [])
    .filter((c) => c.is_savepoint && c.status === 'IN_PROGRESS')
    .sort((a, b) => b.trigger_timestamp - a.trigger_timestamp)[0];
  if (jobId && inFlight && job?.state === 'RUNNING') {
    const stopJob = inFlight.checkpoint_type === 'SYNC_SAVEPOINT';
    const manual = !stopJob && nonceOf(desired) !== undefined && nonceOf(desired) !== nonceOf(record.spec);
    const pending: PendingSnapshot = {
      kind: 'savepoint',
      triggerType: stopJob ? 'UPGRADE' : manual ? 'MANUAL' : 'PERIODIC',
      jobId,
      stopJob,
      requestedAt: inFlight.trigger_timestamp,
      ...(manual ? { triggerNonce: nonceOf(desired)! } : {}),
    };
    state.pendingSavepoint = pending;
    if (stopJob) state.phase = 'STOPPING';
    facts.push(
      `a ${stopJob ? 'stop-with-savepoint' : 'savepoint'} in flight since ${new Date(inFlight.trigger_timestamp).toISOString()} is followed to its end`,
    );
  } else if (state.lastReconciledSpec?.job && job && nonceOf(desired) !== undefined && nonceOf(desired) !== nonceOf(record.spec)) {
    // A manual savepoint completed after the job started while the nonce was unacknowledged answered the nonce — except
    // the one the status reports when it says it answered another nonce (chaos seed 4410: nonce 1's savepoint recorded,
    // nonce 2 set, the state lost before nonce 2's trigger; seed 5527: nonce 1's savepoint recorded, then the state lost).
    const startedAt = job['start-time'];
    const reported = deployment.status?.jobStatus?.lastSavepoint;
    const answeredOther = (path: string | undefined) => path !== undefined && path === reported?.location && reported.triggerNonce !== nonceOf(desired);
    const answered = (statistics?.history ?? [])
      .concat(statistics?.latest.savepoint ? [statistics.latest.savepoint] : [])
      .some(
        (c) => completed(c) && c.is_savepoint && c.checkpoint_type !== 'SYNC_SAVEPOINT' && c.trigger_timestamp >= startedAt && !answeredOther(c.external_path),
      );
    if (answered) {
      state.lastReconciledSpec.job.savepointTriggerNonce = nonceOf(desired);
      facts.push(`savepointTriggerNonce ${nonceOf(desired)} taken as answered by that savepoint`);
    }
  }
  if (!record.spec && job?.state === 'RUNNING') facts.push('the job is upgraded through the normal path (a savepoint first) to confirm the spec');
  return {
    state,
    specConfirmed: record.spec !== undefined,
    message: `operator state of ${name} was missing; rebuilt from the cluster and Flink: ${facts.join('; ')}`,
  };
}
