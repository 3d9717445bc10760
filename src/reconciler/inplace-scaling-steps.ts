/**
 * In-place scaling (Apache `kubernetes.operator.job.upgrade.inplace-scaling.enabled`, default true;
 * Apache's NativeFlinkService.scale): a SCALE change in native mode (only
 * `pipeline.jobvertex-parallelism-overrides` changed, spec-diff.ts) is applied through Flink's
 * resource-requirements API: the job keeps running as the same job (same id, no new submission)
 * and Flink's adaptive scheduler restarts it with the new parallelism. When it cannot be, the
 * change goes through the full upgrade (decide.ts), as in the Apache operator.
 *
 * When it can (inPlaceScalingRefusal): the setting is on, the deployed Flink is 1.18 or newer, its
 * scheduler is adaptive (`jobmanager.scheduler: adaptive`), the deployed job is observed and not
 * terminal or RECONCILING, and no vertex's override was removed.
 *
 * The new bounds, per vertex Flink lists (Apache's rule): an override's vertex gets upper bound =
 * the override, lower bound = min(override, its current lower bound) (a lower bound raised to the
 * target could fail the job when the resources do not come); vertices without an override keep theirs.
 *
 * One side effect per pass, intent first (the state ConfigMap's `pendingOperation.inPlaceScaling`):
 * - scale-in-place: GET the bounds (a read); the same as planned: the spec is recorded as
 *   reconciled, nothing sent; else the intent (bounds, spec) is written, the PUT sent once, and
 *   the spec recorded as reconciled when Flink accepts it;
 * - Flink answers the PUT (or the GET) with an error: `refused` is recorded and the next pass
 *   upgrades; no answer (lost, timed out): the intent stays;
 * - follow-in-place-scaling (an intent left by a lost answer or a crash): GET the bounds again;
 *   Flink shows them: settled as accepted; it does not, or the job is gone: refused (a full
 *   upgrade). The PUT is never sent again for the same intent.
 */
import { effectiveFlatConfiguration } from '../api/default-flink-configuration.js';
import { flattenFlinkConfiguration } from '../api/flink-configuration.js';
import type { FlinkDeploymentSpec } from '../api/flink-deployment-spec.js';
import type { InternalState } from '../api/internal-state.js';
import { isFlinkVersionAtLeast } from '../flink/flink-config-builder.js';
import { FlinkRestError } from '../flink/flink-rest-error.js';
import { type FlinkJobResourceRequirements, TERMINAL_JOB_STATES } from '../flink/flink-rest-types.js';
import type { DecisionInput } from './decide.js';
import { deployedSpecOf, withRunningState } from './deployment-specs.js';
import type { StepResult } from './reconcile-step.js';
import { PARALLELISM_OVERRIDES_KEY } from './spec-diff.js';
import type { StepContext } from './step-context.js';

type InPlaceScaling = NonNullable<InternalState['inPlaceScaling']>;
type Bounds = { lowerBound: number; upperBound: number };

/**
 * `pipeline.jobvertex-parallelism-overrides` of a spec's own configuration, vertex id → parallelism:
 * Flink's map form `id:value,id:value`, or nested keys (`…overrides.<id>: value`); undefined when a
 * value is not a positive integer.
 */
export function parallelismOverrides(spec: Pick<FlinkDeploymentSpec, 'flinkConfiguration'> | undefined): Map<string, number> | undefined {
  const entries: Array<[string, string]> = [];
  for (const [key, value] of Object.entries(flattenFlinkConfiguration(spec?.flinkConfiguration))) {
    if (key === PARALLELISM_OVERRIDES_KEY) {
      for (const pair of value.split(',')) {
        if (pair.trim() === '') continue;
        const at = pair.indexOf(':');
        entries.push(at < 0 ? [pair.trim(), ''] : [pair.slice(0, at).trim(), pair.slice(at + 1).trim()]);
      }
    } else if (key.startsWith(`${PARALLELISM_OVERRIDES_KEY}.`)) {
      entries.push([key.slice(PARALLELISM_OVERRIDES_KEY.length + 1), value.trim()]);
    }
  }
  const overrides = new Map<string, number>();
  for (const [vertex, value] of entries) {
    const n = Number(value);
    if (vertex === '' || !/^\d+$/.test(value) || n < 1) return undefined;
    overrides.set(vertex.toLowerCase(), n);
  }
  return overrides;
}

/** Why the SCALE change of `input` cannot be applied in place (the caller upgrades then), or undefined: it can. */
export function inPlaceScalingRefusal(input: DecisionInput): string | undefined {
  const { state, desired, desiredGeneration, observed, settings } = input;
  if (!settings.inPlaceScaling) return 'kubernetes.operator.job.upgrade.inplace-scaling.enabled is false';
  if (state.inPlaceScaling?.refused !== undefined && state.inPlaceScaling.generation === desiredGeneration) return state.inPlaceScaling.refused;
  const deployed = deployedSpecOf(state);
  if (!deployed?.job || !state.deployedJobId) return 'no job is deployed';
  if (!isFlinkVersionAtLeast(deployed.flinkVersion, 'v1_18')) return `Flink ${deployed.flinkVersion ?? ''} has no resource-requirements API (Flink 1.18+)`;
  const scheduler = effectiveFlatConfiguration(deployed, input.configurationDefaults)['jobmanager.scheduler'];
  if (scheduler?.trim().toLowerCase() !== 'adaptive') return 'the job does not run with the adaptive scheduler (jobmanager.scheduler: adaptive)';
  const job = observed.job;
  if (observed.jobManager !== 'READY' || job?.jobId !== state.deployedJobId || TERMINAL_JOB_STATES.has(job.state) || job.state === 'RECONCILING')
    return `job ${state.deployedJobId} is not running (${job?.jobId === state.deployedJobId ? job.state : 'not observed'})`;
  const before = parallelismOverrides(deployed);
  const after = parallelismOverrides(desired);
  if (!before || !after) return `${PARALLELISM_OVERRIDES_KEY} has a value that is not a positive integer`;
  const removed = [...before.keys()].find((vertex) => !after.has(vertex));
  if (removed !== undefined) return `the parallelism override of job vertex ${removed} was removed`;
  return undefined;
}

/** The bounds to send: Apache's rule (see the header) over what Flink answered. */
export function plannedRequirements(current: FlinkJobResourceRequirements, overrides: ReadonlyMap<string, number>): FlinkJobResourceRequirements {
  const planned: FlinkJobResourceRequirements = {};
  for (const [vertex, { parallelism }] of Object.entries(current)) {
    const target = overrides.get(vertex.toLowerCase());
    planned[vertex] = {
      parallelism: target === undefined ? parallelism : { lowerBound: Math.min(target, parallelism.lowerBound), upperBound: target },
    };
  }
  return planned;
}

/** Flink shows exactly the bounds `expected` names (other vertices are not compared). */
function showsBounds(current: FlinkJobResourceRequirements, expected: Readonly<Record<string, Bounds>>): boolean {
  return Object.entries(expected).every(([vertex, bounds]) => {
    const shown = current[vertex]?.parallelism;
    return shown?.lowerBound === bounds.lowerBound && shown.upperBound === bounds.upperBound;
  });
}

function boundsOf(requirements: FlinkJobResourceRequirements): Record<string, Bounds> {
  return Object.fromEntries(Object.entries(requirements).map(([vertex, { parallelism }]) => [vertex, { ...parallelism }]));
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** scale-in-place: read the bounds, record the intent, send the new bounds once, record the result. */
export async function scaleInPlace(ctx: StepContext, desired: FlinkDeploymentSpec, generation: number): Promise<StepResult> {
  const jobId = ctx.state().deployedJobId!;
  const { api } = ctx;
  if (!api.getResourceRequirements || !api.updateResourceRequirements)
    return refuse(ctx, generation, jobId, 'the Flink REST API in use has no resource-requirements calls');
  let current: FlinkJobResourceRequirements;
  try {
    current = await api.getResourceRequirements(jobId);
  } catch (error) {
    return refuse(ctx, generation, jobId, `Flink's resource requirements could not be read: ${messageOf(error)}`);
  }
  const planned = plannedRequirements(current, parallelismOverrides(desired) ?? new Map<string, number>());
  const spec = withRunningState(desired);
  if (showsBounds(current, boundsOf(planned))) {
    // Apache: "Vertex resources requirements already match target": the spec counts as deployed.
    await ctx.save((s) => reconciled(s, spec, generation));
    return { requeue: 'continue' };
  }
  const intent: InPlaceScaling = { generation, jobId, requirements: boundsOf(planned), spec };
  // An unsettled intent is followed (decide.ts), never overwritten: this one is written only over none, or over a refusal.
  const saved = await ctx.save((s) => (s.inPlaceScaling && s.inPlaceScaling.refused === undefined ? s : { ...s, inPlaceScaling: intent }));
  if (saved.inPlaceScaling?.generation !== generation || saved.inPlaceScaling.refused !== undefined) return { requeue: 'continue' };
  try {
    await api.updateResourceRequirements(jobId, planned);
  } catch (error) {
    if (error instanceof FlinkRestError && error.source === 'flink')
      return refuse(ctx, generation, jobId, `Flink refused the new resource requirements: ${error.message}`);
    // No answer: the PUT may have arrived. The next pass reads the bounds back (follow-in-place-scaling).
    return {
      requeue: 'progress',
      error: `In-place rescale of job ${jobId} not confirmed (${messageOf(error)}); it is settled by reading Flink's resource requirements back`,
    };
  }
  return settle(ctx, intent);
}

/** follow-in-place-scaling: Flink shows the recorded bounds (accepted) or not (refused: a full upgrade). */
export async function followInPlaceScaling(ctx: StepContext): Promise<StepResult> {
  const intent = ctx.state().inPlaceScaling!;
  const { jobManager } = ctx.observed;
  if (!intent.requirements || !intent.spec) return refuse(ctx, intent.generation, intent.jobId, 'the recorded in-place rescale is incomplete');
  if (jobManager === 'MISSING' || jobManager === 'ERROR')
    return refuse(ctx, intent.generation, intent.jobId, `the JobManager is ${jobManager === 'MISSING' ? 'gone' : 'failing'}`);
  if (!ctx.api.getResourceRequirements) return refuse(ctx, intent.generation, intent.jobId, 'the Flink REST API in use has no resource-requirements calls');
  if (jobManager !== 'READY') return { requeue: 'progress' };
  let current: FlinkJobResourceRequirements;
  try {
    current = await ctx.api.getResourceRequirements(intent.jobId);
  } catch (error) {
    if (error instanceof FlinkRestError && error.source === 'flink') return refuse(ctx, intent.generation, intent.jobId, `Flink: ${error.message}`);
    return { requeue: 'progress', error: `In-place rescale of job ${intent.jobId} not confirmed yet: ${messageOf(error)}` };
  }
  if (!showsBounds(current, intent.requirements))
    return refuse(
      ctx,
      intent.generation,
      intent.jobId,
      `Flink does not show the requested resource requirements of job ${intent.jobId} (the request was lost)`,
    );
  return settle(ctx, intent);
}

/** Flink took the bounds: the intent's spec is the reconciled one (and the stable one, in RUNNING), the intent is gone. */
async function settle(ctx: StepContext, intent: InPlaceScaling): Promise<StepResult> {
  await ctx.save((s) =>
    s.inPlaceScaling?.generation === intent.generation && s.inPlaceScaling.refused === undefined ? reconciled(s, intent.spec!, intent.generation) : s,
  );
  const targets = Object.entries(intent.requirements ?? {}).map(([vertex, b]) => `${vertex}: ${b.upperBound}`);
  ctx.deps.events.emit(ctx.deployment, 'Normal', 'Scaling', `In-place scaling triggered (job ${intent.jobId}, parallelism ${targets.join(', ')})`);
  return { requeue: 'progress' };
}

function reconciled(s: InternalState, spec: FlinkDeploymentSpec, generation: number): InternalState {
  return {
    ...s,
    lastReconciledSpec: spec,
    lastReconciledGeneration: generation,
    ...(s.phase === 'RUNNING' ? { lastStableSpec: spec, lastStableGeneration: generation } : {}),
    inPlaceScaling: undefined,
  };
}

/** Flink refused (or did not show) the rescale: recorded, so the next pass upgrades this generation the full way. */
async function refuse(ctx: StepContext, generation: number, jobId: string, reason: string): Promise<StepResult> {
  await ctx.save((s) => ({ ...s, inPlaceScaling: { generation, jobId, refused: reason } }));
  ctx.announceOnce('Warning', 'Scaling', `inplace-${generation}`, `In-place scaling not possible, upgrading instead: ${reason}`);
  return { requeue: 'continue' };
}
