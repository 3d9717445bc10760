/**
 * Table tests of the reconciler's decision function `decide(input)` (src/reconciler/decide.ts and
 * stop-decision.ts), and unit tests of the cluster health check (cluster-health.ts).
 *
 * Each row: a phase and its state, the desired spec, what was observed, the operator settings
 * (flinkConfiguration keys of the desired spec) and the facts the decision may gather → the step it
 * names and the step's key fields. Builders: ./decision-fixtures.ts.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DEPLOYMENT_PHASES } from '../../src/api/deployment-phase.js';
import { JOB_MANAGER_APPEARANCE_GRACE_MS } from '../../src/reconciler/decide.js';
import { ClusterHealthEvaluator } from '../../src/reconciler/cluster-health.js';
import type { ClusterHealthSettings } from '../../src/reconciler/deployment-operator-settings.js';
import type { DecisionInput } from '../../src/reconciler/decide.js';
import type { GatherableFact, Observation } from '../../src/reconciler/observation.js';
import type { ReconcileStep } from '../../src/reconciler/reconcile-step.js';
import {
  HISTORY,
  HOUR,
  JOB_A,
  JOB_B,
  JOB_C,
  MINUTE,
  NEWEST_SAVEPOINT,
  NOW,
  SECOND,
  VERTEX,
  assertMatches,
  changed,
  decideGathering,
  decisionInput,
  iso,
  jobIn,
  jobManagerMissing,
  jobOverview,
  jobRunning,
  newImage,
  overridesSpec,
  pendingSavepoint,
  resumedSpec,
  savepoint,
  spec,
  stateIn,
  suspendedSpec,
  type Facts,
} from './decision-fixtures.js';

type ExpectedStep = { kind: ReconcileStep['kind'] } & Record<string, unknown>;

interface Row {
  name: string;
  input: DecisionInput;
  facts?: Facts;
  /** The facts the decision gathered on the way, in order (default: none). */
  gathered?: GatherableFact[];
  step: ExpectedStep;
  /** Matches the status error of the decision (the step's, else the decision's); null: no error. */
  error?: RegExp | null;
  /** The reason of the event the decision announces. */
  announce?: string;
}

const SP = spec();
const SP_HA = spec({ ha: true });
const LS = spec({ upgradeMode: 'last-state', ha: true });
/** Last-state with `job.upgrade.last-state.max.allowed.checkpoint.age: 5 min`. */
const LS_MAX_AGE = spec({ upgradeMode: 'last-state', ha: true, config: { 'kubernetes.operator.job.upgrade.last-state.max.allowed.checkpoint.age': '5 min' } });
const SL = spec({ upgradeMode: 'stateless' });
const STOP_SAVEPOINT = 'file:///flink-data/savepoints/savepoint-stop';
const CHECKPOINT = {
  completedCount: 4,
  newestRestorePoint: { path: 'file:///flink-data/checkpoints/chk-4', triggeredAt: NOW - MINUTE, ackAt: NOW - MINUTE + 500 },
  newestCompletedAckAt: NOW - MINUTE + 500,
};
const HA_HOLDS = { jobIds: [JOB_A], hasCheckpoint: true };
const HA_GRAPH_ONLY = { jobIds: [JOB_A], hasCheckpoint: false };
const withConfig = (config: Record<string, string>, options: Parameters<typeof spec>[0] = {}) => spec({ ...options, config });
const OVERRIDES_2 = overridesSpec(2);
const withoutScheduler = (base: ReturnType<typeof overridesSpec>) => changed(base, (s) => delete s.flinkConfiguration?.['jobmanager.scheduler']);
const INPLACE_OFF = { 'kubernetes.operator.job.upgrade.inplace-scaling.enabled': 'false' };
const RECOVERY_OFF = { 'kubernetes.operator.jm-deployment-recovery.enabled': 'false' };
const HEALTH_ON = { 'kubernetes.operator.cluster.health-check.enabled': 'true' };
const RESTART_FAILED = { 'kubernetes.operator.job.restart.failed': 'true' };
const ROLLBACK_ON = { 'kubernetes.operator.deployment.rollback.enabled': 'true' };

/** A session cluster: no `job` (Apache operator: SessionReconciler). */
const SESSION = changed(spec(), (s) => {
  delete s.job;
});
const SESSION_ROLLBACK_ON = changed(SESSION, (s) => {
  s.flinkConfiguration = ROLLBACK_ON;
});
/** A session cluster's JobManager answers (its REST API lists no job of the operator's). */
const sessionReady = (extra: Partial<Observation> = {}): Observation => ({
  jobManager: 'READY',
  savepointsAwaitingDisposal: 0,
  pinnedJobId: JOB_A,
  jobs: [],
  ...extra,
});

const OWED_WRITE = {
  name: 'orders-savepoint-periodic-1',
  action: 'publish' as const,
  snapshotType: 'SAVEPOINT' as const,
  triggerType: 'PERIODIC' as const,
  jobReference: { kind: 'FlinkDeployment' as const, name: 'orders' },
};
const USER_SAVEPOINT = {
  ref: { name: 'before-upgrade', uid: 'uid-1', backoffLimit: -1 },
  snapshotType: 'SAVEPOINT' as const,
  targetDirectory: 's3://team/savepoints',
};

const rows: Row[] = [
  // ---- session clusters (no job) ----
  {
    name: 'session cluster, NEW: deployed without a restore path',
    input: decisionInput({ state: stateIn('NEW'), desired: SESSION }),
    step: { kind: 'deploy', intent: { phase: 'DEPLOYING', generation: 1, restoreFrom: undefined, keepJobId: undefined, spec: { job: undefined } } },
  },
  {
    name: 'session cluster, DEPLOYED: the JobManager answers → RUNNING (no job to wait for)',
    input: decisionInput({ state: stateIn('DEPLOYED', SESSION), observed: sessionReady() }),
    step: { kind: 'mark-running' },
  },
  {
    name: 'session cluster, DEPLOYED: the JobManager is not ready yet → wait',
    input: decisionInput({ state: stateIn('DEPLOYED', SESSION), observed: sessionReady({ jobManager: 'DEPLOYED_NOT_READY' }) }),
    step: { kind: 'wait', requeue: 'progress' },
  },
  {
    name: 'session cluster, DEPLOYED past the readiness timeout but ready: no rollback, RUNNING',
    input: decisionInput({
      state: stateIn('DEPLOYED', SESSION_ROLLBACK_ON, { lastStableSpec: SESSION, lastStableGeneration: 1 }),
      observed: sessionReady(),
    }),
    step: { kind: 'mark-running' },
  },
  {
    name: 'session cluster, RUNNING and ready: steady, no health check and no savepoint (no job)',
    input: decisionInput({
      state: stateIn(
        'RUNNING',
        changed(SESSION, (s) => {
          s.flinkConfiguration = { ...HEALTH_ON, 'kubernetes.operator.periodic.savepoint.interval': '1 min' };
        }),
      ),
      observed: sessionReady(),
    }),
    step: { kind: 'wait', requeue: 'steady' },
    error: null,
  },
  {
    name: 'session cluster, RUNNING: an image change redeploys the cluster without a savepoint',
    input: decisionInput({
      state: stateIn('RUNNING', SESSION, { savepointHistory: HISTORY }),
      desired: newImage(SESSION),
      generation: 2,
      observed: sessionReady(),
    }),
    step: { kind: 'deploy', intent: { phase: 'DEPLOYING', generation: 2, restoreFrom: undefined, keepJobId: undefined, spec: { image: 'flink:1.20.1' } } },
    announce: 'SpecChanged',
  },
  {
    name: 'session cluster, RUNNING: its JobManager Deployment is gone → recreated',
    input: decisionInput({ state: stateIn('RUNNING', SESSION) }),
    step: { kind: 'deploy', intent: { phase: 'DEPLOYING', restoreFrom: undefined, keepJobId: undefined } },
    announce: 'RecoverDeployment',
  },
  // ---- NEW ----
  {
    name: 'NEW: the first deployment restores from job.initialSavepointPath',
    input: decisionInput({ state: stateIn('NEW'), desired: spec({ initialSavepointPath: 'file:///flink-data/savepoints/initial' }) }),
    step: {
      kind: 'deploy',
      intent: {
        phase: 'DEPLOYING',
        generation: 1,
        restoreFrom: 'file:///flink-data/savepoints/initial',
        keepJobId: undefined,
        spec: { job: { initialSavepointPath: 'file:///flink-data/savepoints/initial' } },
      },
    },
  },
  {
    name: 'NEW without initialSavepointPath: deployed without state',
    input: decisionInput({ state: stateIn('NEW'), desired: SP }),
    step: { kind: 'deploy', intent: { phase: 'DEPLOYING', restoreFrom: undefined, keepJobId: undefined } },
  },
  {
    name: 'NEW with an invalid spec: nothing is started',
    input: decisionInput({ state: stateIn('NEW'), desired: SP, specInvalid: true }),
    step: { kind: 'wait', requeue: 'steady' },
    error: null,
  },
  {
    name: 'NEW and suspended: nothing is started',
    input: decisionInput({ state: stateIn('NEW'), desired: spec({ state: 'suspended' }) }),
    step: { kind: 'wait', requeue: 'steady' },
    error: null,
  },

  // ---- DEPLOYING / ROLLING_BACK / STOPPED / SUSPENDING ----
  {
    name: 'DEPLOYING with a pinned job id: apply it',
    input: decisionInput({ state: stateIn('DEPLOYING', SP, { jobIdToSubmit: JOB_B }) }),
    step: { kind: 'apply-pinned' },
  },
  {
    name: 'ROLLING_BACK with a pinned job id: apply it',
    input: decisionInput({ state: stateIn('ROLLING_BACK', SP, { jobIdToSubmit: JOB_B, lastStableSpec: SP }) }),
    step: { kind: 'apply-pinned' },
  },
  {
    name: 'STOPPED: the upgrade deploys from the stop savepoint (upgradeSavepointPath)',
    input: decisionInput({
      state: stateIn('STOPPED', SP, { upgradeSavepointPath: STOP_SAVEPOINT, savepointHistory: HISTORY }),
      desired: newImage(SP),
      generation: 2,
    }),
    step: { kind: 'deploy', intent: { phase: 'DEPLOYING', generation: 2, restoreFrom: STOP_SAVEPOINT, keepJobId: undefined, spec: { image: 'flink:1.20.1' } } },
  },
  {
    name: 'STOPPED with a suspended desired spec: the suspend is finished with the stop savepoint',
    input: decisionInput({ state: stateIn('STOPPED', SP, { upgradeSavepointPath: STOP_SAVEPOINT }), desired: suspendedSpec(SP), generation: 2 }),
    step: { kind: 'suspend', generation: 2, savepoint: STOP_SAVEPOINT, spec: { job: { state: 'suspended' } } },
  },
  {
    name: 'STOPPED, stateless: the new job starts without state',
    input: decisionInput({ state: stateIn('STOPPED', SL, { savepointHistory: HISTORY }), desired: newImage(SL), generation: 2 }),
    step: { kind: 'deploy', intent: { phase: 'DEPLOYING', restoreFrom: undefined, keepJobId: undefined } },
  },
  {
    name: 'SUSPENDING: the cluster is shut down, then SUSPENDED',
    input: decisionInput({ state: stateIn('SUSPENDING', SP) }),
    step: { kind: 'shut-down', then: 'SUSPENDED' },
  },

  // ---- SUSPENDED ----
  {
    name: 'SUSPENDED and still suspended: wait',
    input: decisionInput({ state: stateIn('SUSPENDED', SP) }),
    step: { kind: 'wait', requeue: 'steady' },
    error: null,
  },
  {
    name: 'SUSPENDED, the suspended spec changed: acknowledged, nothing started',
    input: decisionInput({ state: stateIn('SUSPENDED', SP), desired: suspendedSpec(newImage(SP)), generation: 2 }),
    step: { kind: 'acknowledge', generation: 2, spec: { image: 'flink:1.20.1' } },
  },
  {
    name: 'SUSPENDED + resume, last-state: Flink HA is asked first',
    input: decisionInput({ state: stateIn('SUSPENDED', LS, { savepointHistory: HISTORY }), desired: resumedSpec(LS), generation: 2 }),
    step: { kind: 'gather', fact: 'ha' },
  },
  {
    name: 'SUSPENDED + resume, last-state, HA holds the job with a checkpoint: the same job id, no savepoint',
    input: decisionInput({ state: stateIn('SUSPENDED', LS, { savepointHistory: HISTORY }), desired: resumedSpec(LS), generation: 2 }),
    facts: { ha: HA_HOLDS },
    gathered: ['ha'],
    step: { kind: 'deploy', intent: { phase: 'DEPLOYING', generation: 2, keepJobId: JOB_A, restoreFrom: undefined, spec: { job: { state: 'running' } } } },
    announce: 'SpecChanged',
  },
  {
    name: 'SUSPENDED + resume, last-state, no HA metadata: a new job from the newest savepoint',
    input: decisionInput({ state: stateIn('SUSPENDED', LS, { savepointHistory: HISTORY }), desired: resumedSpec(LS), generation: 2 }),
    facts: { ha: null },
    gathered: ['ha'],
    step: { kind: 'deploy', intent: { keepJobId: undefined, restoreFrom: NEWEST_SAVEPOINT } },
  },
  {
    name: 'SUSPENDED + resume, last-state, HA holds the job graph but no checkpoint: the newest savepoint',
    input: decisionInput({ state: stateIn('SUSPENDED', LS, { savepointHistory: HISTORY }), desired: resumedSpec(LS), generation: 2 }),
    facts: { ha: HA_GRAPH_ONLY },
    gathered: ['ha'],
    step: { kind: 'deploy', intent: { keepJobId: undefined, restoreFrom: NEWEST_SAVEPOINT } },
  },
  {
    name: 'SUSPENDED + resume, savepoint mode: the suspend savepoint, HA not asked',
    input: decisionInput({
      state: stateIn('SUSPENDED', SP, { upgradeSavepointPath: STOP_SAVEPOINT, savepointHistory: HISTORY }),
      desired: resumedSpec(SP),
      generation: 2,
    }),
    step: { kind: 'deploy', intent: { keepJobId: undefined, restoreFrom: STOP_SAVEPOINT } },
  },

  // ---- DEPLOYED / RUNNING: promotion, upgrades ----
  {
    name: 'DEPLOYED + job RUNNING: promoted to RUNNING',
    input: decisionInput({ state: stateIn('DEPLOYED', SP), observed: jobRunning() }),
    step: { kind: 'mark-running' },
  },
  {
    name: 'DEPLOYED, JobManager still starting: wait for progress',
    input: decisionInput({ state: stateIn('DEPLOYED', SP), observed: { jobManager: 'DEPLOYING', savepointsAwaitingDisposal: 0 } }),
    step: { kind: 'wait', requeue: 'progress' },
    error: null,
  },
  {
    name: 'RUNNING, nothing to do: wait steady',
    input: decisionInput({ state: stateIn('RUNNING', SP), observed: jobRunning() }),
    step: { kind: 'wait', requeue: 'steady', wakeUpInMs: undefined },
    error: null,
  },
  {
    name: 'RUNNING, image change, savepoint mode, job RUNNING: stop with a savepoint',
    input: decisionInput({ state: stateIn('RUNNING', SP), desired: newImage(SP), generation: 2, observed: jobRunning() }),
    step: { kind: 'start-savepoint', request: { triggerType: 'UPGRADE', stopJob: true, jobId: JOB_A, spec: { image: 'flink:1.20.1' } } },
    announce: 'SpecChanged',
  },
  {
    name: 'RUNNING, image change, stateless: a new job without state',
    input: decisionInput({ state: stateIn('RUNNING', SL, { savepointHistory: HISTORY }), desired: newImage(SL), generation: 2, observed: jobRunning() }),
    step: { kind: 'deploy', intent: { phase: 'DEPLOYING', generation: 2, keepJobId: undefined, restoreFrom: undefined } },
  },
  {
    name: 'RUNNING, image change, last-state, HA holds the job: the same job id',
    input: decisionInput({ state: stateIn('RUNNING', LS), desired: newImage(LS), generation: 2, observed: jobRunning() }),
    facts: { ha: HA_HOLDS },
    gathered: ['ha'],
    step: { kind: 'deploy', intent: { phase: 'DEPLOYING', keepJobId: JOB_A, restoreFrom: undefined } },
  },
  {
    name: 'last-state, newest checkpoint older than max.allowed.checkpoint.age: stop with a savepoint instead',
    input: decisionInput({
      state: stateIn('RUNNING', LS_MAX_AGE),
      desired: newImage(LS_MAX_AGE),
      generation: 2,
      observed: jobRunning(),
    }),
    facts: { ha: HA_HOLDS, checkpoints: { completedCount: 3, newestCompletedAckAt: NOW - 10 * MINUTE } },
    gathered: ['ha', 'checkpoints'],
    step: { kind: 'start-savepoint', request: { triggerType: 'UPGRADE', stopJob: true, jobId: JOB_A } },
  },
  {
    name: 'last-state, newest checkpoint within max.allowed.checkpoint.age: the same job id',
    input: decisionInput({
      state: stateIn('RUNNING', LS_MAX_AGE),
      desired: newImage(LS_MAX_AGE),
      generation: 2,
      observed: jobRunning(),
    }),
    facts: { ha: HA_HOLDS, checkpoints: { completedCount: 3, newestCompletedAckAt: NOW - MINUTE } },
    gathered: ['ha', 'checkpoints'],
    step: { kind: 'deploy', intent: { keepJobId: JOB_A, restoreFrom: undefined } },
  },
  {
    name: 'savepoint mode, job not running, HA holds it, last-state fallback on (default): upgraded through HA',
    input: decisionInput({
      state: stateIn('RUNNING', SP_HA),
      desired: newImage(SP_HA),
      generation: 2,
      observed: { jobManager: 'DEPLOYING', savepointsAwaitingDisposal: 0 },
    }),
    facts: { ha: HA_HOLDS },
    gathered: ['ha'],
    step: { kind: 'deploy', intent: { phase: 'DEPLOYING', keepJobId: JOB_A, restoreFrom: undefined } },
    announce: 'SpecChanged',
  },
  {
    name: 'savepoint mode, job not running, last-state fallback off: wait, naming the setting',
    input: decisionInput({
      state: stateIn('RUNNING', spec({ ha: true, config: { 'kubernetes.operator.job.upgrade.last-state-fallback.enabled': 'false' } })),
      desired: newImage(spec({ ha: true, config: { 'kubernetes.operator.job.upgrade.last-state-fallback.enabled': 'false' } })),
      generation: 2,
      observed: { jobManager: 'DEPLOYING', savepointsAwaitingDisposal: 0 },
    }),
    facts: { ha: HA_HOLDS },
    step: { kind: 'wait', requeue: 'progress' },
    error: /kubernetes\.operator\.job\.upgrade\.last-state-fallback\.enabled: "true"/,
  },
  {
    name: 'the JobManager never started (no HA): the fix is deployed from what the broken deployment restored from',
    input: decisionInput({
      state: stateIn(
        'DEPLOYED',
        changed(SP, (s) => {
          s.image = 'flink:does-not-exist';
        }),
        { deployedFrom: 'file:///flink-data/savepoints/deployed-from', savepointHistory: HISTORY },
      ),
      desired: SP,
      generation: 2,
      observed: { jobManager: 'ERROR', jobManagerError: 'ImagePullBackOff', jobManagerNeverStarted: true, savepointsAwaitingDisposal: 0 },
    }),
    step: {
      kind: 'deploy',
      intent: {
        phase: 'DEPLOYING',
        generation: 2,
        restoreFrom: 'file:///flink-data/savepoints/deployed-from',
        keepJobId: undefined,
        spec: { image: 'flink:1.20' },
      },
    },
    announce: 'SpecChanged',
  },
  {
    name: 'job FAILED during an upgrade: its checkpoints are asked for first',
    input: decisionInput({ state: stateIn('RUNNING', SP, { savepointHistory: HISTORY }), desired: newImage(SP), generation: 2, observed: jobIn('FAILED') }),
    step: { kind: 'gather', fact: 'checkpoints' },
  },
  {
    name: 'job FAILED during an upgrade: the new job restores from its newest checkpoint',
    input: decisionInput({ state: stateIn('RUNNING', SP, { savepointHistory: HISTORY }), desired: newImage(SP), generation: 2, observed: jobIn('FAILED') }),
    facts: { checkpoints: CHECKPOINT },
    gathered: ['checkpoints'],
    step: { kind: 'deploy', intent: { phase: 'DEPLOYING', generation: 2, restoreFrom: CHECKPOINT.newestRestorePoint.path, keepJobId: undefined } },
  },
  {
    name: 'SCALE (standalone, reactive): rescaled without a restart',
    input: decisionInput({
      state: stateIn(
        'RUNNING',
        changed(withConfig({ 'scheduler-mode': 'reactive' }), (s) => {
          s.taskManager = { ...s.taskManager, replicas: 2 };
        }),
      ),
      desired: changed(withConfig({ 'scheduler-mode': 'reactive' }), (s) => {
        s.taskManager = { ...s.taskManager, replicas: 3 };
      }),
      generation: 2,
      observed: jobRunning(),
    }),
    step: { kind: 'rescale', generation: 2, spec: { taskManager: { replicas: 3 } } },
  },

  // ---- in-place scaling (job.upgrade.inplace-scaling.enabled; Apache NativeFlinkService.scale) ----
  {
    name: 'SCALE (native, Flink 1.18, adaptive scheduler, overrides changed, job RUNNING): rescaled in place',
    input: decisionInput({ state: stateIn('RUNNING', OVERRIDES_2), desired: overridesSpec(4), generation: 2, observed: jobRunning() }),
    step: { kind: 'scale-in-place', generation: 2, spec: { flinkConfiguration: { 'pipeline.jobvertex-parallelism-overrides': `${VERTEX}:4` } } },
    announce: 'SpecChanged',
  },
  {
    name: 'SCALE on Flink 1.17 (no resource-requirements API): the full upgrade',
    input: decisionInput({
      state: stateIn('RUNNING', overridesSpec(2, { flinkVersion: 'v1_17' })),
      desired: overridesSpec(4, { flinkVersion: 'v1_17' }),
      generation: 2,
      observed: jobRunning(),
    }),
    step: { kind: 'start-savepoint', request: { triggerType: 'UPGRADE', stopJob: true, jobId: JOB_A } },
  },
  {
    name: 'SCALE without the adaptive scheduler: the full upgrade',
    input: decisionInput({
      state: stateIn('RUNNING', overridesSpec(2, { config: { 'jobmanager.scheduler': 'default' } })),
      desired: overridesSpec(4, { config: { 'jobmanager.scheduler': 'default' } }),
      generation: 2,
      observed: jobRunning(),
    }),
    step: { kind: 'start-savepoint', request: { triggerType: 'UPGRADE', stopJob: true, jobId: JOB_A } },
  },
  {
    name: 'SCALE with the adaptive scheduler from the operator defaults: rescaled in place',
    input: {
      ...decisionInput({
        state: stateIn('RUNNING', withoutScheduler(overridesSpec(2))),
        desired: withoutScheduler(overridesSpec(4)),
        generation: 2,
        observed: jobRunning(),
      }),
      configurationDefaults: { 'jobmanager.scheduler': 'Adaptive' },
    },
    step: { kind: 'scale-in-place', generation: 2 },
  },
  {
    name: 'SCALE with kubernetes.operator.job.upgrade.inplace-scaling.enabled: false: the full upgrade',
    input: decisionInput({
      state: stateIn('RUNNING', overridesSpec(2, { config: INPLACE_OFF })),
      desired: overridesSpec(4, { config: INPLACE_OFF }),
      generation: 2,
      observed: jobRunning(),
    }),
    step: { kind: 'start-savepoint', request: { triggerType: 'UPGRADE', stopJob: true, jobId: JOB_A } },
  },
  {
    name: 'SCALE while the job is RESTARTING: still in place (Apache refuses only terminal and RECONCILING jobs)',
    input: decisionInput({ state: stateIn('RUNNING', OVERRIDES_2), desired: overridesSpec(4), generation: 2, observed: jobIn('RESTARTING') }),
    step: { kind: 'scale-in-place', generation: 2 },
  },
  {
    name: 'SCALE while the JobManager does not answer: the full upgrade path (which waits for the job)',
    input: decisionInput({
      state: stateIn('RUNNING', OVERRIDES_2),
      desired: overridesSpec(4),
      generation: 2,
      observed: { jobManager: 'DEPLOYED_NOT_READY', savepointsAwaitingDisposal: 0 },
    }),
    step: { kind: 'wait' },
  },
  {
    name: "SCALE removing a vertex's override: the full upgrade (Apache: an override removed falls back)",
    input: decisionInput({
      state: stateIn('RUNNING', overridesSpec(2, { config: { 'pipeline.jobvertex-parallelism-overrides': `${VERTEX}:2,${'e'.repeat(32)}:3` } })),
      desired: overridesSpec(4),
      generation: 2,
      observed: jobRunning(),
    }),
    step: { kind: 'start-savepoint', request: { triggerType: 'UPGRADE', stopJob: true, jobId: JOB_A } },
  },
  {
    name: 'SCALE whose in-place rescale Flink refused (this generation): the full upgrade',
    input: decisionInput({
      state: stateIn('RUNNING', OVERRIDES_2, { inPlaceScaling: { generation: 2, jobId: JOB_A, refused: 'Flink refused the new resource requirements' } }),
      desired: overridesSpec(4),
      generation: 2,
      observed: jobRunning(),
    }),
    step: { kind: 'start-savepoint', request: { triggerType: 'UPGRADE', stopJob: true, jobId: JOB_A } },
  },
  {
    name: 'SCALE after a refusal of an older generation: in place again',
    input: decisionInput({
      state: stateIn('RUNNING', OVERRIDES_2, { inPlaceScaling: { generation: 2, jobId: JOB_A, refused: 'refused' } }),
      desired: overridesSpec(5),
      generation: 3,
      observed: jobRunning(),
    }),
    step: { kind: 'scale-in-place', generation: 3 },
  },
  {
    name: 'an in-place rescale recorded and not settled (a crash, a lost answer): followed first, not sent again',
    input: decisionInput({
      state: stateIn('RUNNING', OVERRIDES_2, {
        inPlaceScaling: { generation: 2, jobId: JOB_A, requirements: { [VERTEX]: { lowerBound: 1, upperBound: 4 } }, spec: overridesSpec(4) },
      }),
      desired: overridesSpec(4),
      generation: 2,
      observed: jobRunning(),
    }),
    step: { kind: 'follow-in-place-scaling' },
  },
  {
    name: 'overrides changed in standalone mode: UPGRADE (Apache scales them only in native mode)',
    input: decisionInput({
      state: stateIn(
        'RUNNING',
        changed(OVERRIDES_2, (s) => (s.mode = 'standalone')),
      ),
      desired: changed(overridesSpec(4), (s) => (s.mode = 'standalone')),
      generation: 2,
      observed: jobRunning(),
    }),
    step: { kind: 'start-savepoint', request: { triggerType: 'UPGRADE', stopJob: true, jobId: JOB_A } },
  },
  {
    name: "SCALE whose fallback upgrade's stop-with-savepoint failed: the generation stays undeployed",
    input: decisionInput({
      state: stateIn('RUNNING', OVERRIDES_2, {
        inPlaceScaling: { generation: 2, jobId: JOB_A, refused: 'refused' },
        failedUpgrade: { generation: 2, reason: 'savepoint failed', at: iso(NOW - MINUTE) },
      }),
      desired: overridesSpec(4),
      generation: 2,
      observed: jobRunning(),
    }),
    step: { kind: 'wait' },
    error: /Generation 2 is not deployed: savepoint failed/,
  },

  // ---- a missing JobManager (jm-deployment-recovery) ----
  {
    name: 'RUNNING, JobManager MISSING, stateless: recreated with a new job id',
    input: decisionInput({ state: stateIn('RUNNING', SL), observed: jobManagerMissing() }),
    step: {
      kind: 'deploy',
      intent: { phase: 'DEPLOYING', generation: 1, keepJobId: undefined, restoreFrom: undefined, spec: { job: { upgradeMode: 'stateless' } } },
    },
    announce: 'RecoverDeployment',
  },
  {
    name: 'RUNNING, JobManager MISSING, last-state, HA unknown: HA is asked',
    input: decisionInput({ state: stateIn('RUNNING', LS), observed: jobManagerMissing() }),
    step: { kind: 'gather', fact: 'ha' },
  },
  {
    name: 'RUNNING, JobManager MISSING, HA holds the job (graph is enough): recreated with the same job id',
    input: decisionInput({ state: stateIn('RUNNING', LS), observed: jobManagerMissing() }),
    facts: { ha: HA_GRAPH_ONLY },
    gathered: ['ha'],
    step: { kind: 'deploy', intent: { phase: 'DEPLOYING', keepJobId: JOB_A, restoreFrom: undefined } },
    announce: 'RecoverDeployment',
  },
  {
    name: 'RUNNING, JobManager MISSING, HA metadata gone: not recreated, said so',
    input: decisionInput({ state: stateIn('RUNNING', LS, { savepointHistory: HISTORY }), observed: jobManagerMissing() }),
    facts: { ha: null },
    gathered: ['ha'],
    step: { kind: 'wait', requeue: 'progress' },
    error: new RegExp(`it is not recreated: Flink's HA metadata of job ${JOB_A} is gone.*job\\.initialSavepointPath: ${NEWEST_SAVEPOINT}`),
  },
  {
    name: 'RUNNING, JobManager MISSING, savepoint mode without HA: not recreated, said so',
    input: decisionInput({ state: stateIn('RUNNING', SP), observed: jobManagerMissing() }),
    step: { kind: 'wait', requeue: 'progress' },
    error: /is not recreated: Flink HA is off/,
  },
  {
    name: 'RUNNING, JobManager MISSING, recovery disabled: not recreated, naming jm-deployment-recovery.enabled',
    input: decisionInput({ state: stateIn('RUNNING', withConfig(RECOVERY_OFF, { upgradeMode: 'stateless' })), observed: jobManagerMissing() }),
    step: { kind: 'wait', requeue: 'progress' },
    error: /kubernetes\.operator\.jm-deployment-recovery\.enabled is false/,
  },
  {
    name: 'DEPLOYED, JobManager MISSING within the appearance grace: not recovered (the informer may lag the apply)',
    input: decisionInput({
      state: stateIn('DEPLOYED', SL, { reconciliationTimestamp: iso(NOW - JOB_MANAGER_APPEARANCE_GRACE_MS + 2 * SECOND) }),
      observed: jobManagerMissing(),
    }),
    step: { kind: 'wait', requeue: 'progress' },
  },
  {
    name: 'DEPLOYED, JobManager MISSING past the appearance grace, stateless: recovered',
    input: decisionInput({
      state: stateIn('DEPLOYED', SL, { reconciliationTimestamp: iso(NOW - JOB_MANAGER_APPEARANCE_GRACE_MS - SECOND) }),
      observed: jobManagerMissing(),
    }),
    step: { kind: 'deploy', intent: { phase: 'DEPLOYING', keepJobId: undefined } },
  },
  {
    // Fails (see the report): missingJobManagerError (decide.ts) ignores the grace decideRecovery honours.
    name: 'DEPLOYED, JobManager MISSING within the appearance grace, stateless: the status does not say it will not be recreated',
    input: decisionInput({ state: stateIn('DEPLOYED', SL, { reconciliationTimestamp: iso(NOW - 2 * SECOND) }), observed: jobManagerMissing() }),
    step: { kind: 'wait', requeue: 'progress', error: undefined },
  },

  // ---- a finished job ----
  {
    name: 'job FINISHED, before jm-deployment.shutdown-ttl (1 d): wait until the TTL is over',
    input: decisionInput({ state: stateIn('RUNNING', SP), observed: jobIn('FINISHED', {}, JOB_A, NOW - HOUR) }),
    step: { kind: 'wait', requeue: 'steady', wakeUpInMs: 23 * HOUR },
  },
  {
    name: 'job FINISHED, after jm-deployment.shutdown-ttl: the cluster is shut down, then FINISHED',
    input: decisionInput({
      state: stateIn('RUNNING', withConfig({ 'kubernetes.operator.jm-deployment.shutdown-ttl': '30 min' })),
      observed: jobIn('FINISHED', {}, JOB_A, NOW - HOUR),
    }),
    step: { kind: 'shut-down', then: 'FINISHED' },
  },
  {
    name: 'FINISHED phase, nothing changed: wait',
    input: decisionInput({ state: stateIn('FINISHED', SP, { savepointHistory: HISTORY }) }),
    step: { kind: 'wait', requeue: 'steady' },
    error: null,
  },
  {
    name: 'FINISHED phase, a new spec: deployed from the newest savepoint',
    input: decisionInput({ state: stateIn('FINISHED', SP, { savepointHistory: HISTORY }), desired: newImage(SP), generation: 2 }),
    step: { kind: 'deploy', intent: { phase: 'DEPLOYING', generation: 2, restoreFrom: NEWEST_SAVEPOINT } },
  },

  // ---- health check, failed jobs, rollback ----
  {
    name: 'health check on: its verdict is gathered',
    input: decisionInput({ state: stateIn('RUNNING', withConfig(HEALTH_ON, { upgradeMode: 'stateless' })), observed: jobRunning() }),
    step: { kind: 'gather', fact: 'health' },
  },
  {
    name: 'health check unhealthy, stateless: the running cluster is replaced',
    input: decisionInput({ state: stateIn('RUNNING', withConfig(HEALTH_ON, { upgradeMode: 'stateless' })), observed: jobRunning() }),
    facts: { health: { healthy: false, reason: 'Restart count hit threshold: 64' } },
    gathered: ['health'],
    step: { kind: 'deploy', intent: { phase: 'DEPLOYING', replaceRunningCluster: true, keepJobId: undefined, restoreFrom: undefined } },
    announce: 'RestartUnhealthyJob',
  },
  {
    name: 'health check unhealthy, last-state, HA holds the job: replaced keeping the job id',
    input: decisionInput({ state: stateIn('RUNNING', withConfig(HEALTH_ON, { upgradeMode: 'last-state', ha: true })), observed: jobRunning() }),
    facts: { health: { healthy: false, reason: 'No checkpoint completed' }, ha: HA_GRAPH_ONLY },
    gathered: ['health', 'ha'],
    step: { kind: 'deploy', intent: { replaceRunningCluster: true, keepJobId: JOB_A } },
  },
  {
    name: 'health check unhealthy, savepoint mode without HA: reported, not restarted',
    input: decisionInput({ state: stateIn('RUNNING', withConfig(HEALTH_ON)), observed: jobRunning() }),
    facts: { health: { healthy: false, reason: 'Restart count hit threshold: 64' } },
    gathered: ['health'],
    step: { kind: 'wait', requeue: 'progress' },
    error: /unhealthy \(Restart count hit threshold: 64\) but is not restarted: Flink HA is off/,
  },
  {
    name: 'health check healthy: steady',
    input: decisionInput({ state: stateIn('RUNNING', withConfig(HEALTH_ON)), observed: jobRunning() }),
    facts: { health: { healthy: true } },
    gathered: ['health'],
    step: { kind: 'wait', requeue: 'steady' },
    error: null,
  },
  {
    name: 'job FAILED, job.restart.failed off: reported',
    input: decisionInput({ state: stateIn('RUNNING', SP), observed: jobIn('FAILED') }),
    step: { kind: 'report-failed-job', jobId: JOB_A },
  },
  {
    name: 'job FAILED, job.restart.failed on: restarted from its newest checkpoint with a new job id',
    input: decisionInput({ state: stateIn('RUNNING', withConfig(RESTART_FAILED), { savepointHistory: HISTORY }), observed: jobIn('FAILED') }),
    facts: { checkpoints: CHECKPOINT },
    gathered: ['checkpoints'],
    step: {
      kind: 'deploy',
      intent: { phase: 'DEPLOYING', generation: 1, restoreFrom: CHECKPOINT.newestRestorePoint.path, keepJobId: undefined, replaceRunningCluster: undefined },
    },
    announce: 'RestartFailedJob',
  },
  {
    name: 'job FAILED, job.restart.failed on, stateless: restarted without state',
    input: decisionInput({
      state: stateIn('RUNNING', withConfig(RESTART_FAILED, { upgradeMode: 'stateless' }), { savepointHistory: HISTORY }),
      observed: jobIn('FAILED'),
    }),
    facts: { checkpoints: CHECKPOINT },
    gathered: ['checkpoints'],
    step: { kind: 'deploy', intent: { restoreFrom: undefined, keepJobId: undefined } },
  },
  {
    name: 'ROLLED_BACK, job FAILED and restarted: the rolled-back spec stays (ROLLING_BACK)',
    input: decisionInput({
      state: stateIn('ROLLED_BACK', withConfig(RESTART_FAILED), { lastReconciledSpec: newImage(withConfig(RESTART_FAILED)), lastReconciledGeneration: 2 }),
      observed: jobIn('FAILED'),
    }),
    facts: { checkpoints: CHECKPOINT },
    gathered: ['checkpoints'],
    step: { kind: 'deploy', intent: { phase: 'ROLLING_BACK', spec: undefined, restoreFrom: CHECKPOINT.newestRestorePoint.path } },
  },
  {
    name: 'DEPLOYED, not ready past deployment.readiness.timeout, rollback on: rolled back to the stable spec from the newest savepoint',
    input: decisionInput({
      state: stateIn('DEPLOYED', newImage(withConfig(ROLLBACK_ON)), {
        lastReconciledGeneration: 2,
        lastStableSpec: withConfig(ROLLBACK_ON),
        lastStableGeneration: 1,
        reconciliationTimestamp: iso(NOW - 6 * MINUTE),
        savepointHistory: HISTORY,
      }),
      observed: { jobManager: 'DEPLOYING', savepointsAwaitingDisposal: 0 },
    }),
    step: { kind: 'deploy', intent: { phase: 'ROLLING_BACK', spec: undefined, generation: undefined, restoreFrom: NEWEST_SAVEPOINT } },
    announce: 'Rollback',
  },
  {
    name: 'DEPLOYED, not ready but within deployment.readiness.timeout: wait',
    input: decisionInput({
      state: stateIn('DEPLOYED', newImage(withConfig(ROLLBACK_ON)), {
        lastReconciledGeneration: 2,
        lastStableSpec: withConfig(ROLLBACK_ON),
        lastStableGeneration: 1,
        reconciliationTimestamp: iso(NOW - 4 * MINUTE),
        savepointHistory: HISTORY,
      }),
      observed: { jobManager: 'DEPLOYING', savepointsAwaitingDisposal: 0 },
    }),
    step: { kind: 'wait', requeue: 'progress' },
  },

  // ---- drift ----
  {
    name: 'drift: the JobManager runs another job id: a savepoint stop of the job that runs there',
    input: decisionInput({
      state: stateIn('RUNNING', SP),
      observed: { jobManager: 'READY', savepointsAwaitingDisposal: 0, pinnedJobId: JOB_C, jobs: [jobOverview(JOB_C, 'RUNNING')] },
    }),
    step: { kind: 'start-savepoint', request: { triggerType: 'UPGRADE', stopJob: true, jobId: JOB_C } },
    error: new RegExp(`runs job id ${JOB_C}, but the operator deployed job ${JOB_A}`),
    announce: 'ClusterDrift',
  },
  {
    name: 'drift, stateless: redeployed without a savepoint',
    input: decisionInput({
      state: stateIn('RUNNING', SL, { savepointHistory: HISTORY }),
      observed: { jobManager: 'READY', savepointsAwaitingDisposal: 0, pinnedJobId: JOB_C, jobs: [jobOverview(JOB_C, 'RUNNING')] },
    }),
    step: { kind: 'deploy', intent: { phase: 'DEPLOYING', restoreFrom: undefined, keepJobId: undefined } },
    error: /not the one the operator deployed/,
  },
  {
    // Fails (see the report): decide.ts driftOf compares upgradeMode with 'stateless' without the default.
    name: 'drift, upgradeMode unset (stateless by default): redeployed without a savepoint',
    input: decisionInput({
      state: stateIn(
        'RUNNING',
        changed(SL, (s) => {
          if (s.job) delete s.job.upgradeMode;
        }),
      ),
      observed: { jobManager: 'READY', savepointsAwaitingDisposal: 0, pinnedJobId: JOB_C, jobs: [jobOverview(JOB_C, 'RUNNING')] },
    }),
    step: { kind: 'deploy', intent: { restoreFrom: undefined } },
  },

  // ---- savepoints, history, acknowledgements ----
  {
    name: 'a new savepointTriggerNonce: a MANUAL savepoint, the job keeps running',
    input: decisionInput({ state: stateIn('RUNNING', SP), desired: spec({ savepointTriggerNonce: 7 }), generation: 2, observed: jobRunning() }),
    step: { kind: 'start-savepoint', request: { triggerType: 'MANUAL', stopJob: false, nonce: 7, jobId: JOB_A } },
  },
  {
    name: 'periodic savepoint interval elapsed: a PERIODIC savepoint',
    input: decisionInput({
      state: stateIn('RUNNING', withConfig({ 'kubernetes.operator.periodic.savepoint.interval': '1 h' }), { lastPeriodicSavepointTimestamp: NOW - 2 * HOUR }),
      observed: jobRunning(),
    }),
    step: { kind: 'start-savepoint', request: { triggerType: 'PERIODIC', stopJob: false, nonce: undefined, jobId: JOB_A } },
  },
  {
    name: 'periodic savepoint not due yet: wait steady, woken when it is due',
    input: decisionInput({
      state: stateIn('RUNNING', withConfig({ 'kubernetes.operator.periodic.savepoint.interval': '1 h' }), {
        lastPeriodicSavepointTimestamp: NOW - 20 * MINUTE,
      }),
      observed: jobRunning(),
    }),
    step: { kind: 'wait', requeue: 'steady', wakeUpInMs: 40 * MINUTE },
  },
  // ---- FlinkStateSnapshot resources (issue 19, design/011) ----
  {
    name: 'an owed FlinkStateSnapshot write is carried out first, before following a pending savepoint',
    input: decisionInput({
      state: stateIn('RUNNING', SP, { pendingSavepoint: pendingSavepoint(), snapshotResourceWrites: [OWED_WRITE] }),
      observed: jobRunning(),
    }),
    step: { kind: 'publish-snapshot-resource' },
  },
  {
    name: "a user's FlinkStateSnapshot (savepoint) not yet taken: a MANUAL savepoint for it, into its spec.savepoint.path",
    input: decisionInput({ state: stateIn('RUNNING', SP), observed: jobRunning({ userSnapshots: [USER_SAVEPOINT] }) }),
    step: {
      kind: 'start-savepoint',
      request: { triggerType: 'MANUAL', stopJob: false, jobId: JOB_A, snapshotResource: USER_SAVEPOINT.ref, targetDirectory: 's3://team/savepoints' },
    },
  },
  {
    name: "a user's FlinkStateSnapshot IN_PROGRESS that no state follows (its ConfigMap lost): adopted with its trigger id, not triggered anew",
    input: decisionInput({
      state: stateIn('RUNNING', SP),
      observed: jobRunning({ userSnapshots: [{ ...USER_SAVEPOINT, inFlight: { triggerId: 'trigger-9', triggeredAt: NOW - MINUTE } }] }),
    }),
    step: {
      kind: 'start-savepoint',
      request: { triggerType: 'MANUAL', snapshotResource: USER_SAVEPOINT.ref, inFlight: { triggerId: 'trigger-9', triggeredAt: NOW - MINUTE } },
    },
  },
  {
    name: "a user's FlinkStateSnapshot (checkpoint) on Flink 1.18: refused with the reason (no trigger Flink cannot take)",
    input: decisionInput({
      state: stateIn('RUNNING', { ...SP, flinkVersion: 'v1_18' }),
      observed: jobRunning({ userSnapshots: [{ ref: USER_SAVEPOINT.ref, snapshotType: 'CHECKPOINT' }] }),
    }),
    step: { kind: 'refuse-user-snapshot', snapshotType: 'CHECKPOINT', error: /needs Flink 1.19 or newer/ },
  },
  {
    name: "the operator's checkpoint resources beyond state.checkpoints.num-retained (1): the oldest are deleted",
    input: decisionInput({ state: stateIn('RUNNING', SP), observed: jobRunning({ ownCheckpointResources: ['c-1', 'c-2', 'c-3'] }) }),
    step: { kind: 'trim-checkpoint-resources', names: ['c-1', 'c-2'] },
  },
  // ---- checkpoints and cron schedules (issue 19; Apache SnapshotUtils.shouldTriggerSnapshot) ----
  {
    name: 'a new checkpointTriggerNonce: a MANUAL checkpoint, not a silent acknowledgement',
    input: decisionInput({ state: stateIn('RUNNING', SP), desired: spec({ checkpointTriggerNonce: 3 }), generation: 2, observed: jobRunning() }),
    step: { kind: 'start-checkpoint', request: { triggerType: 'MANUAL', nonce: 3, jobId: JOB_A, checkpointType: 'FULL' } },
  },
  {
    name: 'periodic.checkpoint.interval elapsed: a PERIODIC checkpoint (of kubernetes.operator.checkpoint.type)',
    input: decisionInput({
      state: stateIn(
        'RUNNING',
        withConfig({ 'kubernetes.operator.periodic.checkpoint.interval': '10 min', 'kubernetes.operator.checkpoint.type': 'incremental' }),
        { lastPeriodicCheckpointTimestamp: NOW - 11 * MINUTE },
      ),
      observed: jobRunning(),
    }),
    step: { kind: 'start-checkpoint', request: { triggerType: 'PERIODIC', nonce: undefined, jobId: JOB_A, checkpointType: 'INCREMENTAL' } },
  },
  {
    name: 'periodic checkpoint not due yet: woken when it is due (the sooner of savepoint and checkpoint)',
    input: decisionInput({
      state: stateIn(
        'RUNNING',
        withConfig({ 'kubernetes.operator.periodic.checkpoint.interval': '10 min', 'kubernetes.operator.periodic.savepoint.interval': '1 h' }),
        { lastPeriodicCheckpointTimestamp: NOW - 4 * MINUTE, lastPeriodicSavepointTimestamp: NOW - 20 * MINUTE },
      ),
      observed: jobRunning(),
    }),
    step: { kind: 'wait', requeue: 'steady', wakeUpInMs: 6 * MINUTE },
  },
  {
    name: 'a pending checkpoint is followed',
    input: decisionInput({
      state: stateIn('RUNNING', SP, { pendingCheckpoint: { ...pendingSavepoint(), kind: 'checkpoint', triggerType: 'MANUAL' } }),
      observed: jobRunning(),
    }),
    step: { kind: 'follow-checkpoint' },
  },
  {
    name: 'a Quartz cron periodic savepoint whose time came (every 6 h, last at 10:00, now 12:00): a PERIODIC savepoint',
    input: decisionInput({
      state: stateIn('RUNNING', withConfig({ 'kubernetes.operator.periodic.savepoint.interval': '0 0 */6 ? * *' }), {
        lastPeriodicSavepointTimestamp: NOW - 2 * HOUR,
      }),
      observed: jobRunning(),
    }),
    step: { kind: 'start-savepoint', request: { triggerType: 'PERIODIC', stopJob: false, jobId: JOB_A } },
  },
  {
    name: 'a Quartz cron periodic savepoint taken at 12:00 (now): woken at its next time (18:00)',
    input: decisionInput({
      state: stateIn('RUNNING', withConfig({ 'kubernetes.operator.periodic.savepoint.interval': '0 0 */6 ? * *' }), {
        lastPeriodicSavepointTimestamp: NOW,
      }),
      observed: jobRunning(),
    }),
    step: { kind: 'wait', requeue: 'steady', wakeUpInMs: 6 * HOUR },
  },
  {
    name: 'more savepoints than savepoint.history.max.count: the history is trimmed',
    input: decisionInput({
      state: stateIn('RUNNING', SP, {
        savepointHistory: Array.from({ length: 12 }, (_, i) => savepoint(`file:///flink-data/savepoints/sp-${i}`, NOW - (12 - i) * MINUTE)),
      }),
      observed: jobRunning(),
    }),
    step: { kind: 'trim-history' },
  },
  {
    name: 'an ignored change (a kubernetes.operator.* key): acknowledged without a redeploy',
    input: decisionInput({
      state: stateIn('RUNNING', SP),
      desired: withConfig({ 'kubernetes.operator.savepoint.history.max.count': '5' }),
      generation: 2,
      observed: jobRunning(),
    }),
    step: { kind: 'acknowledge', generation: 2, spec: { flinkConfiguration: { 'kubernetes.operator.savepoint.history.max.count': '5' } } },
  },
  {
    name: 'a new generation with the same spec: acknowledged',
    input: decisionInput({ state: stateIn('RUNNING', SP), desired: SP, generation: 2, observed: jobRunning() }),
    step: { kind: 'acknowledge', generation: 2 },
  },
  {
    name: 'TaskManager Deployment replicas differ from the deployed spec: scaled back',
    input: decisionInput({ state: stateIn('RUNNING', SP), observed: jobRunning({ taskManagerDeploymentReplicas: 3 }) }),
    step: { kind: 'scale-task-managers', replicas: 1 },
  },
  {
    name: 'a failed upgrade of the desired generation: steady on the old spec, with the error',
    input: decisionInput({
      state: stateIn('RUNNING', SP, {
        failedUpgrade: { generation: 2, reason: 'UPGRADE savepoint of job failed: Checkpoint was declined', at: iso(NOW - MINUTE) },
      }),
      desired: newImage(SP),
      generation: 2,
      observed: jobRunning(),
    }),
    step: { kind: 'wait', requeue: 'steady' },
    error: /^Generation 2 is not deployed: UPGRADE savepoint of job failed: Checkpoint was declined$/,
  },
  {
    name: 'a failed upgrade of an older generation: the next change is tried again',
    input: decisionInput({
      state: stateIn('RUNNING', SP, { failedUpgrade: { generation: 2, reason: 'declined', at: iso(NOW - MINUTE) } }),
      desired: newImage(SP),
      generation: 3,
      observed: jobRunning(),
    }),
    step: { kind: 'start-savepoint', request: { triggerType: 'UPGRADE', stopJob: true, jobId: JOB_A } },
  },
];

describe('decide: one step per situation', () => {
  for (const row of rows) {
    test(row.name, () => {
      const { decision, gathered } = decideGathering(row.input, row.facts);
      assert.deepEqual(gathered, row.gathered ?? [], 'facts gathered on the way');
      assertMatches(decision.step, row.step);
      const error = (decision.step.kind === 'wait' ? decision.step.error : undefined) ?? decision.error;
      if (row.error === null) assert.equal(error, undefined, 'no status error');
      else if (row.error) assertMatches(error, row.error, 'error');
      if (row.announce) assert.equal(decision.announce?.reason, row.announce, `announces ${row.announce}`);
    });
  }

  test('a pending savepoint is followed first, in every phase', () => {
    for (const phase of DEPLOYMENT_PHASES) {
      const state = stateIn(phase, SP, { pendingSavepoint: pendingSavepoint(), jobIdToSubmit: phase === 'DEPLOYING' ? JOB_B : undefined });
      const { decision } = decideGathering(decisionInput({ state, desired: newImage(SP), generation: 2, observed: jobRunning() }));
      assert.deepEqual(decision.step, { kind: 'follow-savepoint' }, phase);
    }
  });

  test('the drift decision counts a drift', () => {
    const { decision } = decideGathering(
      decisionInput({
        state: stateIn('RUNNING', SP),
        observed: { jobManager: 'READY', savepointsAwaitingDisposal: 0, pinnedJobId: JOB_C, jobs: [jobOverview(JOB_C, 'RUNNING')] },
      }),
    );
    assert.equal(decision.count, 'drift');
  });

  test('the same input gives the same decision, and decide does not change its input', () => {
    const input = decisionInput({ state: stateIn('RUNNING', SP, { savepointHistory: HISTORY }), desired: newImage(SP), generation: 2, observed: jobRunning() });
    const before = structuredClone(input);
    assert.deepEqual(decideGathering(input).decision, decideGathering(input).decision);
    assert.deepEqual(input, before);
  });
});

describe('ClusterHealthEvaluator (injected clock)', () => {
  const RESTARTS: ClusterHealthSettings = { enabled: true, restartsWindowMs: 2 * MINUTE, restartsThreshold: 3, checkpointProgressWindowMs: undefined };
  const CHECKPOINTS: ClusterHealthSettings = { ...RESTARTS, checkpointProgressWindowMs: MINUTE };
  const clocked = () => {
    const clock = { now: NOW };
    return { clock, evaluator: new ClusterHealthEvaluator(() => clock.now) };
  };

  test('more restarts than the threshold within the window: unhealthy', () => {
    const { clock, evaluator } = clocked();
    assert.deepEqual(evaluator.evaluate('uid-1', { jobId: JOB_A, restarts: 0 }, RESTARTS), { healthy: true }, 'the first sample starts the window');
    clock.now += 30 * SECOND;
    const verdict = evaluator.evaluate('uid-1', { jobId: JOB_A, restarts: 4 }, RESTARTS);
    assert.equal(verdict.healthy, false);
    assert.match(verdict.reason ?? '', /Restart count hit threshold: 3 restarts within 120 s/);
  });

  test('restarts up to the threshold, or spread over more than the window: healthy', () => {
    const { clock, evaluator } = clocked();
    evaluator.evaluate('uid-1', { jobId: JOB_A, restarts: 0 }, RESTARTS);
    clock.now += 30 * SECOND;
    assert.equal(evaluator.evaluate('uid-1', { jobId: JOB_A, restarts: 3 }, RESTARTS).healthy, true, 'exactly the threshold');
    const other = clocked();
    other.evaluator.evaluate('uid-2', { jobId: JOB_A, restarts: 0 }, RESTARTS);
    other.clock.now += 10 * MINUTE;
    assert.equal(other.evaluator.evaluate('uid-2', { jobId: JOB_A, restarts: 10 }, RESTARTS).healthy, true, '10 restarts in 10 min scale to 2 per 2 min');
  });

  test('a restart count that drops (a new JobManager) starts anew from the lower count', () => {
    const { clock, evaluator } = clocked();
    evaluator.evaluate('uid-1', { jobId: JOB_A, restarts: 10 }, RESTARTS);
    clock.now += 100 * SECOND;
    assert.equal(evaluator.evaluate('uid-1', { jobId: JOB_A, restarts: 0 }, RESTARTS).healthy, true, 'a drop is no verdict');
    clock.now += 30 * SECOND;
    const verdict = evaluator.evaluate('uid-1', { jobId: JOB_A, restarts: 5 }, RESTARTS);
    assert.equal(verdict.healthy, false, '5 restarts since the drop 30 s ago: counted from 0, not from the old 10');
  });

  test('checkpoints not growing for longer than the progress window: unhealthy', () => {
    const { clock, evaluator } = clocked();
    assert.equal(evaluator.evaluate('uid-1', { jobId: JOB_A, restarts: 0, completedCheckpoints: 5 }, CHECKPOINTS).healthy, true);
    clock.now += 30 * SECOND;
    assert.equal(evaluator.evaluate('uid-1', { jobId: JOB_A, restarts: 0, completedCheckpoints: 5 }, CHECKPOINTS).healthy, true, 'within the window');
    clock.now += 31 * SECOND;
    const verdict = evaluator.evaluate('uid-1', { jobId: JOB_A, restarts: 0, completedCheckpoints: 5 }, CHECKPOINTS);
    assert.equal(verdict.healthy, false);
    assert.match(verdict.reason ?? '', /No checkpoint completed within 60 s \(kubernetes\.operator\.cluster\.health-check\.checkpoint-progress\.window\)/);
  });

  test('checkpoints growing: healthy; the window counts from the last growth', () => {
    const { clock, evaluator } = clocked();
    evaluator.evaluate('uid-1', { jobId: JOB_A, restarts: 0, completedCheckpoints: 5 }, CHECKPOINTS);
    for (const count of [6, 7, 8]) {
      clock.now += 50 * SECOND;
      assert.equal(evaluator.evaluate('uid-1', { jobId: JOB_A, restarts: 0, completedCheckpoints: count }, CHECKPOINTS).healthy, true, `grew to ${count}`);
    }
    clock.now += 59 * SECOND;
    assert.equal(evaluator.evaluate('uid-1', { jobId: JOB_A, restarts: 0, completedCheckpoints: 8 }, CHECKPOINTS).healthy, true, '59 s since the last growth');
    clock.now += 2 * SECOND;
    assert.equal(evaluator.evaluate('uid-1', { jobId: JOB_A, restarts: 0, completedCheckpoints: 8 }, CHECKPOINTS).healthy, false, '61 s since the last growth');
    clock.now += SECOND;
    assert.equal(
      evaluator.evaluate('uid-1', { jobId: JOB_A, restarts: 0, completedCheckpoints: 1 }, CHECKPOINTS).healthy,
      true,
      'a count that went down (restored job) starts the window anew',
    );
  });

  test('a new job id, or a forgotten deployment, starts over', () => {
    const { clock, evaluator } = clocked();
    evaluator.evaluate('uid-1', { jobId: JOB_A, restarts: 0 }, RESTARTS);
    clock.now += 10 * SECOND;
    assert.equal(evaluator.evaluate('uid-1', { jobId: JOB_A, restarts: 9 }, RESTARTS).healthy, false);
    assert.equal(evaluator.evaluate('uid-1', { jobId: JOB_B, restarts: 9 }, RESTARTS).healthy, true, 'another job: a first sample');
    clock.now += 10 * SECOND;
    assert.equal(evaluator.evaluate('uid-1', { jobId: JOB_B, restarts: 20 }, RESTARTS).healthy, false);
    evaluator.forget('uid-1');
    assert.equal(evaluator.evaluate('uid-1', { jobId: JOB_B, restarts: 20 }, RESTARTS).healthy, true, 'forgotten: a first sample');
  });
});
