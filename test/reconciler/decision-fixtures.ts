/**
 * Builders for table tests of the reconciler's decision function (src/reconciler/decide.ts): specs
 * by upgrade mode, an InternalState per phase, Observations, a DecisionInput whose settings come
 * from the desired spec (as the reconciler makes them), and a runner that plays the reconciler's
 * gather loop with the facts a row supplies.
 */
import assert from 'node:assert/strict';
import type { DeploymentPhase } from '../../src/api/deployment-phase.js';
import { flinkDeployment } from '../../src/api/flink-deployment-builder.js';
import type { FlinkDeploymentSpec } from '../../src/api/flink-deployment-spec.js';
import type { FlinkJobState } from '../../src/api/flink-deployment-status.js';
import { emptyInternalState, type InternalState, type PendingSnapshot, type SavepointRecord } from '../../src/api/internal-state.js';
import type { FlinkJobOverview } from '../../src/flink/flink-rest-types.js';
import { decide, type DecisionInput } from '../../src/reconciler/decide.js';
import { deploymentOperatorSettings } from '../../src/reconciler/deployment-operator-settings.js';
import { withRunningState } from '../../src/reconciler/deployment-specs.js';
import type { GatherableFact, Observation } from '../../src/reconciler/observation.js';
import type { Decision } from '../../src/reconciler/reconcile-step.js';

export const NOW = Date.parse('2026-03-01T12:00:00.000Z');
export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;
export const iso = (epochMs: number): string => new Date(epochMs).toISOString();

/** The job the state says is deployed. */
export const JOB_A = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
/** A job id pinned for a submission. */
export const JOB_B = 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';
/** A job the operator did not deploy (drift). */
export const JOB_C = 'cccccccccccccccccccccccccccccccc';

export const HA_CONFIG = { 'high-availability.type': 'kubernetes', 'high-availability.storageDir': 'file:///flink-data/ha' };

export interface SpecOptions {
  upgradeMode?: 'stateless' | 'savepoint' | 'last-state';
  ha?: boolean;
  /** flinkConfiguration keys (the operator settings are `kubernetes.operator.*` keys). */
  config?: Record<string, string>;
  image?: string;
  state?: 'running' | 'suspended';
  initialSavepointPath?: string;
  savepointTriggerNonce?: number;
  checkpointTriggerNonce?: number;
}

/** The builder's default spec (standalone, savepoint mode, savepoint and checkpoint dirs) with `options`. */
export function spec(options: SpecOptions = {}): FlinkDeploymentSpec {
  return flinkDeployment('orders')
    .withSpec({
      ...(options.image ? { image: options.image } : {}),
      job: {
        upgradeMode: options.upgradeMode,
        state: options.state,
        initialSavepointPath: options.initialSavepointPath,
        savepointTriggerNonce: options.savepointTriggerNonce,
        ...(options.checkpointTriggerNonce !== undefined ? { checkpointTriggerNonce: options.checkpointTriggerNonce } : {}),
      },
    })
    .withFlinkConfiguration({ ...(options.ha ? HA_CONFIG : {}), ...options.config })
    .build().spec;
}

/** A job vertex id for `pipeline.jobvertex-parallelism-overrides` rows. */
export const VERTEX = 'dddddddddddddddddddddddddddddddd';

/**
 * What in-place scaling needs (inplace-scaling-steps.ts): native mode, Flink 1.18, the adaptive
 * scheduler, the override `parallelism` of VERTEX; `config` over it, `flinkVersion` instead of 1.18.
 */
export function overridesSpec(parallelism: number, options: { config?: Record<string, string>; flinkVersion?: FlinkDeploymentSpec['flinkVersion'] } = {}) {
  return changed(
    spec({ config: { 'jobmanager.scheduler': 'adaptive', 'pipeline.jobvertex-parallelism-overrides': `${VERTEX}:${parallelism}`, ...options.config } }),
    (s) => {
      s.mode = 'native';
      s.flinkVersion = options.flinkVersion ?? 'v1_18';
    },
  );
}

/** A copy of `base` changed by `edit`. */
export function changed(base: FlinkDeploymentSpec, edit: (copy: FlinkDeploymentSpec) => void): FlinkDeploymentSpec {
  const copy = structuredClone(base);
  edit(copy);
  return copy;
}

export const newImage = (base: FlinkDeploymentSpec): FlinkDeploymentSpec =>
  changed(base, (s) => {
    s.image = 'flink:1.20.1';
  });
export const suspendedSpec = (base: FlinkDeploymentSpec): FlinkDeploymentSpec =>
  changed(base, (s) => {
    if (s.job) s.job.state = 'suspended';
  });
export const resumedSpec = (base: FlinkDeploymentSpec): FlinkDeploymentSpec =>
  changed(base, (s) => {
    if (s.job) s.job.state = 'running';
  });

export function savepoint(location: string, timeStamp: number, triggerType: SavepointRecord['triggerType'] = 'UPGRADE'): SavepointRecord {
  return { location, timeStamp, triggerType, jobId: JOB_A };
}
export const OLDER_SAVEPOINT = 'file:///flink-data/savepoints/savepoint-older';
export const NEWEST_SAVEPOINT = 'file:///flink-data/savepoints/savepoint-newest';
/** Two savepoints, the newest an hour old. */
export const HISTORY: SavepointRecord[] = [savepoint(OLDER_SAVEPOINT, NOW - 3 * HOUR, 'PERIODIC'), savepoint(NEWEST_SAVEPOINT, NOW - HOUR, 'MANUAL')];

export function pendingSavepoint(over: Partial<PendingSnapshot> = {}): PendingSnapshot {
  return { kind: 'savepoint', triggerType: 'UPGRADE', jobId: JOB_A, stopJob: true, requestedAt: NOW - 10 * SECOND, triggerId: 'd'.repeat(32), ...over };
}

/**
 * The state of a deployment in `phase` whose cluster runs (or ran) `deployed` as job JOB_A,
 * reconciled at generation 1 two hours ago; RUNNING, FINISHED and ROLLED_BACK also have it as the
 * stable spec. NEW is the empty state. `extra` overrides any field.
 */
export function stateIn(phase: DeploymentPhase, deployed: FlinkDeploymentSpec = spec(), extra: Partial<InternalState> = {}): InternalState {
  if (phase === 'NEW') return { ...emptyInternalState(), ...extra };
  const reconciled = phase === 'SUSPENDED' || phase === 'SUSPENDING' ? suspendedSpec(deployed) : withRunningState(deployed);
  const stable = phase === 'RUNNING' || phase === 'FINISHED' || phase === 'ROLLED_BACK';
  return {
    ...emptyInternalState(),
    revision: 4,
    phase,
    reconciliationTimestamp: iso(NOW - 2 * HOUR),
    lastReconciledSpec: reconciled,
    lastReconciledGeneration: 1,
    ...(stable ? { lastStableSpec: withRunningState(deployed), lastStableGeneration: 1 } : {}),
    firstDeployment: false,
    deployedJobId: JOB_A,
    ...extra,
  };
}

export function jobOverview(jid: string, state: FlinkJobState, endTime = -1): FlinkJobOverview {
  return { jid, name: 'StateMachineExample', state, 'start-time': NOW - 2 * HOUR, 'end-time': endTime, duration: 1, 'last-modification': NOW - HOUR };
}

/** No JobManager Deployment. */
export function jobManagerMissing(extra: Partial<Observation> = {}): Observation {
  return { jobManager: 'MISSING', savepointsAwaitingDisposal: 0, ...extra };
}

/** The JobManager answers and lists `jobId` in `state` (the state's job, pinned on the JobManager Deployment). */
export function jobIn(state: FlinkJobState, extra: Partial<Observation> = {}, jobId = JOB_A, endTime?: number): Observation {
  return {
    jobManager: 'READY',
    savepointsAwaitingDisposal: 0,
    pinnedJobId: jobId,
    job: { jobId, name: 'StateMachineExample', state, startTime: NOW - 2 * HOUR, updateTime: NOW - HOUR, ...(endTime !== undefined ? { endTime } : {}) },
    jobs: [jobOverview(jobId, state, endTime)],
    ...extra,
  };
}

export const jobRunning = (extra: Partial<Observation> = {}): Observation => jobIn('RUNNING', extra);

export interface InputOptions {
  state: InternalState;
  /** Default: the state's lastReconciledSpec (nothing changed), else the default spec. */
  desired?: FlinkDeploymentSpec;
  /** Default: the state's lastReconciledGeneration, else 1. */
  generation?: number;
  specInvalid?: boolean;
  observed?: Observation;
  now?: number;
}

/** A DecisionInput with the settings of the desired spec (deploymentOperatorSettings), as the reconciler builds it. */
export function decisionInput(options: InputOptions): DecisionInput {
  const desired = options.desired ?? options.state.lastReconciledSpec ?? spec();
  return {
    state: options.state,
    desired,
    desiredGeneration: options.generation ?? options.state.lastReconciledGeneration ?? 1,
    specInvalid: options.specInvalid ?? false,
    observed: options.observed ?? jobManagerMissing(),
    settings: deploymentOperatorSettings(desired),
    configurationDefaults: {},
    now: options.now ?? NOW,
    resource: 'team-a/orders',
  };
}

/** The facts a gather step can add; a row supplies those the decision may ask for. */
export type Facts = Partial<Pick<Observation, 'ha' | 'checkpoints' | 'health'>>;

/**
 * Decides as the reconciler does: a `gather` step for a fact in `facts` adds it to the observation
 * and decides again; a gather for a fact not supplied is the result. Asking twice for one fact fails.
 */
export function decideGathering(input: DecisionInput, facts: Facts = {}): { decision: Decision; gathered: GatherableFact[] } {
  const gathered: GatherableFact[] = [];
  let observed = input.observed;
  for (;;) {
    const decision = decide({ ...input, observed });
    if (decision.step.kind !== 'gather' || !(decision.step.fact in facts)) return { decision, gathered };
    const fact = decision.step.fact;
    assert.ok(!gathered.includes(fact), `the decision asked twice for ${fact}`);
    gathered.push(fact);
    if (fact === 'ha') observed = { ...observed, ha: facts.ha };
    else if (fact === 'checkpoints') observed = { ...observed, checkpoints: facts.checkpoints };
    else observed = { ...observed, health: facts.health };
  }
}

/**
 * Asserts that `actual` has every member `expected` names, recursively: a RegExp matches a string,
 * `undefined` asserts the member is absent, other values are compared deeply. Members `expected`
 * does not name are not checked.
 */
export function assertMatches(actual: unknown, expected: unknown, path = 'step'): void {
  if (expected instanceof RegExp) {
    assert.equal(typeof actual, 'string', `${path}: expected a string matching ${expected}, got ${JSON.stringify(actual)}`);
    assert.match(actual as string, expected, path);
    return;
  }
  if (expected === undefined) {
    assert.equal(actual, undefined, `${path}: expected absent, got ${JSON.stringify(actual)}`);
    return;
  }
  if (typeof expected === 'object' && expected !== null && !Array.isArray(expected)) {
    assert.ok(typeof actual === 'object' && actual !== null, `${path}: expected an object, got ${JSON.stringify(actual)}`);
    for (const [key, value] of Object.entries(expected)) assertMatches((actual as Record<string, unknown>)[key], value, `${path}.${key}`);
    return;
  }
  assert.deepStrictEqual(actual, expected, path);
}
