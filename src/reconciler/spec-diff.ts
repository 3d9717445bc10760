/**
 * Classifies the difference between the last reconciled spec and the desired spec, as the Apache
 * operator's `SpecDiff` does: each changed field has a type, and the most severe one wins
 * (IGNORE < SCALE < UPGRADE < SAVEPOINT_REDEPLOY).
 *
 * Ignored, as in the Apache operator: `job.upgradeMode`, `job.initialSavepointPath`,
 * `job.allowNonRestoredState`, the snapshot trigger nonces (they ask for a snapshot, not a
 * redeploy), `job.state` (suspend and resume are their own flows), and flinkConfiguration keys
 * under `kubernetes.operator.`, `job.autoscaler.` and `parallelism.default`.
 * Ignored here, unlike the Apache operator (whose SpecDiff counts `ingress` as UPGRADE): `ingress`.
 * The Ingress routes to the REST Service and changes nothing in the Flink cluster, so an
 * ingress-only change is acknowledged and the Ingress applied (ingress-steps.ts), without a redeploy.
 * SCALE: `taskManager.replicas` and `job.parallelism` when the deployment runs in standalone mode
 * with the reactive scheduler (only then can the job rescale without a restart), and, in native
 * mode, `pipeline.jobvertex-parallelism-overrides` (Apache's AbstractFlinkSpec SpecDiff entry;
 * decide.ts tries it in place through Flink's resource-requirements API, inplace-scaling-steps.ts).
 */
import type { FlinkDeploymentSpec } from '../api/flink-deployment-spec.js';
import { sameValue } from '../api/canonical-json.js';
import { flattenFlinkConfiguration } from '../api/flink-configuration.js';

export type DiffType = 'IGNORE' | 'SCALE' | 'UPGRADE' | 'SAVEPOINT_REDEPLOY';
const SEVERITY: Record<DiffType, number> = { IGNORE: 0, SCALE: 1, UPGRADE: 2, SAVEPOINT_REDEPLOY: 3 };

export interface SpecDiff {
  type: DiffType;
  /** Dotted paths of the fields that differ and are not ignored, e.g. `spec.image`. */
  changedFields: string[];
}

const IGNORED_JOB_FIELDS = new Set([
  'upgradeMode',
  'initialSavepointPath',
  'allowNonRestoredState',
  'savepointTriggerNonce',
  'checkpointTriggerNonce',
  'state',
]);
const IGNORED_CONFIG_PREFIXES = ['kubernetes.operator.', 'job.autoscaler.'];
const IGNORED_CONFIG_KEYS = new Set(['parallelism.default']);
/** Flink's PipelineOptions.PARALLELISM_OVERRIDES: job vertex id → parallelism. */
export const PARALLELISM_OVERRIDES_KEY = 'pipeline.jobvertex-parallelism-overrides';

function isIgnoredConfigKey(key: string): boolean {
  return IGNORED_CONFIG_KEYS.has(key) || IGNORED_CONFIG_PREFIXES.some((prefix) => key.startsWith(prefix));
}

/** True when the flattened configuration says the reactive scheduler is on. */
export function isReactive(spec: FlinkDeploymentSpec): boolean {
  return flattenFlinkConfiguration(spec.flinkConfiguration)['scheduler-mode']?.toUpperCase() === 'REACTIVE';
}

export function diffSpecs(reconciled: FlinkDeploymentSpec, desired: FlinkDeploymentSpec): SpecDiff {
  const changed: Array<{ field: string; type: DiffType }> = [];
  const scaleType: DiffType = desired.mode === 'standalone' && isReactive(desired) && isReactive(reconciled) ? 'SCALE' : 'UPGRADE';

  const keys = new Set([...Object.keys(reconciled), ...Object.keys(desired)]) as Set<keyof FlinkDeploymentSpec>;
  for (const key of keys) {
    if (key === 'job' || key === 'flinkConfiguration' || key === 'taskManager' || key === 'ingress') continue;
    if (!sameValue(reconciled[key], desired[key])) changed.push({ field: `spec.${key}`, type: 'UPGRADE' });
  }

  const oldJob = reconciled.job ?? {};
  const newJob = desired.job ?? {};
  if ((reconciled.job === undefined) !== (desired.job === undefined)) changed.push({ field: 'spec.job', type: 'UPGRADE' });
  for (const key of new Set([...Object.keys(oldJob), ...Object.keys(newJob)]) as Set<keyof typeof oldJob>) {
    if (IGNORED_JOB_FIELDS.has(key) || sameValue(oldJob[key], newJob[key])) continue;
    if (key === 'savepointRedeployNonce') changed.push({ field: `spec.job.${key}`, type: 'SAVEPOINT_REDEPLOY' });
    else if (key === 'parallelism') changed.push({ field: `spec.job.${key}`, type: scaleType });
    else changed.push({ field: `spec.job.${key}`, type: 'UPGRADE' });
  }

  const oldTm = reconciled.taskManager ?? {};
  const newTm = desired.taskManager ?? {};
  for (const key of new Set([...Object.keys(oldTm), ...Object.keys(newTm)]) as Set<keyof typeof oldTm>) {
    if (sameValue(oldTm[key], newTm[key])) continue;
    changed.push({ field: `spec.taskManager.${key}`, type: key === 'replicas' ? scaleType : 'UPGRADE' });
  }

  const oldConfig = flattenFlinkConfiguration(reconciled.flinkConfiguration);
  const newConfig = flattenFlinkConfiguration(desired.flinkConfiguration);
  for (const key of new Set([...Object.keys(oldConfig), ...Object.keys(newConfig)])) {
    if (isIgnoredConfigKey(key) || oldConfig[key] === newConfig[key]) continue;
    const scales = key.startsWith(PARALLELISM_OVERRIDES_KEY) && (desired.mode ?? 'native') === 'native';
    changed.push({ field: `spec.flinkConfiguration["${key}"]`, type: scales ? 'SCALE' : 'UPGRADE' });
  }

  const type = changed.reduce<DiffType>((max, c) => (SEVERITY[c.type] > SEVERITY[max] ? c.type : max), 'IGNORE');
  return { type, changedFields: changed.map((c) => c.field) };
}
