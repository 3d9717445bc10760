/**
 * The FlinkDeployment's Ingress (spec.ingress, rendered by src/flink/flink-ingress.ts) follows the
 * spec the operator records as reconciled: every step that records a new lastReconciledSpec
 * (deploy, acknowledge, suspend, rescale; cluster-steps.ts) first brings the Ingress in line with
 * it, through `syncIngress`:
 * - created or updated on every deployment of a spec with an ingress (as the Apache operator's
 *   ApplicationReconciler/SessionReconciler call IngressUtils.reconcileIngress on deploy), and by
 *   the step that records an ingress-only change (an `ingress` change is no upgrade: spec-diff.ts),
 *   so the job is not redeployed;
 * - deleted when the recorded spec drops `ingress` (only an Ingress this FlinkDeployment owns);
 * - `kubernetes.operator.ingress.manage: false`: nothing is created, changed or deleted; a spec
 *   with an ingress gets Apache's Warning event (reason IngressManagement) once per generation.
 *
 * Guarantees: the Ingress is written before the state records the spec it belongs to, and the
 * write is idempotent (the applier compares the rendered hash), so a crash between the two is
 * repaired by the next pass deciding the same step again. A pass whose recorded spec does not
 * change the Ingress sends no request for it (no GET either): a periodic reconcile of an unchanged
 * deployment stays at 0 API requests (design/performance.md). Every write is fenced with the pass's
 * SideEffectFence and refused over an Ingress a newer leadership term wrote (flink-cluster-applier.ts).
 * Caveats: there is no Ingress informer; an Ingress edited or deleted by hand is put back at the
 * next deployment or ingress change, not at once. A rollback keeps the Ingress of the user's spec
 * (it is not part of what is rolled back). Deleting the FlinkDeployment leaves the Ingress to the
 * garbage collector (it is owned by the FlinkDeployment).
 */
import { sameValue } from '../api/canonical-json.js';
import { withConfigurationDefaults } from '../api/default-flink-configuration.js';
import { flattenFlinkConfiguration } from '../api/flink-configuration.js';
import type { FlinkDeploymentSpec } from '../api/flink-deployment-spec.js';
import { buildIngress, ingressName } from '../flink/flink-ingress.js';
import { clusterModeOf, deploymentKey } from '../flink/flink-resource-naming.js';
import { restPortOf } from '../flink/flink-rest-access.js';
import { deploymentOperatorSettings } from './deployment-operator-settings.js';
import type { StepContext } from './step-context.js';

/** What the Ingress needs when the recorded spec goes from `from` to `to`. */
export type IngressAction = 'none' | 'apply' | 'delete' | 'unmanaged';

/** Why the Ingress is synced: a deployment (apply whenever the spec has an ingress) or another recorded change (apply only what changed). */
export type IngressOccasion = 'deploy' | 'change';

/** Apache's message (IngressUtils.INGRESS_MANAGEMENT_OFF_BUT_SPEC_SET), with what to do. */
export const INGRESS_UNMANAGED_MESSAGE =
  'Ingress management is turned off but ingress set in spec (kubernetes.operator.ingress.manage: false): the operator neither creates nor changes the Ingress; set it to true, or remove spec.ingress';

/** What the Ingress is rendered from: the ingress itself, the REST port its backend names and the cluster mode its labels carry. */
function renderedFrom(spec: FlinkDeploymentSpec): unknown {
  return { ingress: spec.ingress, restPort: flattenFlinkConfiguration(spec.flinkConfiguration)['rest.port']?.trim(), mode: clusterModeOf(spec) };
}

/**
 * Pure: what to do with the Ingress when `to` is recorded over `from` (undefined: nothing was
 * recorded yet, so no Ingress of ours exists). `manage.from`/`manage.to`: `ingress.manage` of each.
 */
export function ingressAction(
  from: FlinkDeploymentSpec | undefined,
  to: FlinkDeploymentSpec,
  manage: { from: boolean; to: boolean },
  occasion: IngressOccasion,
): IngressAction {
  if (!manage.to) return to.ingress ? 'unmanaged' : 'none';
  // Management just turned on: what the spec says is not known to be in place.
  const unknown = from !== undefined && !manage.from;
  if (to.ingress) {
    if (occasion === 'deploy' || unknown || from === undefined || !sameValue(renderedFrom(from), renderedFrom(to))) return 'apply';
    return 'none';
  }
  // `ingress: null` (a spec decoded from the Apache operator's status) is no ingress.
  return from !== undefined && (Boolean(from.ingress) || unknown) ? 'delete' : 'none';
}

/**
 * Brings the Ingress in line with `to`, the spec about to be recorded over `from` (the recorded
 * one), before the step records it. Nothing without an Ingress writer (unit tests' fakes).
 */
export async function syncIngress(ctx: StepContext, from: FlinkDeploymentSpec | undefined, to: FlinkDeploymentSpec, occasion: IngressOccasion): Promise<void> {
  const writer = ctx.deps.ingresses;
  if (!writer) return;
  // Read over the operator's default configuration, as the cluster is rendered (rest.port, ingress.manage may come from there).
  const effectiveFrom = from ? withConfigurationDefaults(from, ctx.configurationDefaults) : undefined;
  const effectiveTo = withConfigurationDefaults(to, ctx.configurationDefaults);
  const manageFrom = effectiveFrom ? deploymentOperatorSettings(effectiveFrom).manageIngress : true;
  const action = ingressAction(effectiveFrom, effectiveTo, { from: manageFrom, to: ctx.settings.manageIngress }, occasion);
  const { namespace, name } = deploymentKey(ctx.deployment);
  switch (action) {
    case 'none':
      return;
    case 'unmanaged':
      ctx.announceOnce('Warning', 'IngressManagement', `ingress-unmanaged-${ctx.deployment.metadata.generation ?? 0}`, INGRESS_UNMANAGED_MESSAGE);
      return;
    case 'apply': {
      const ingress = buildIngress(ctx.deployment, effectiveTo, restPortOf({ ...ctx.deployment, spec: effectiveTo }));
      if (ingress && (await writer.apply(ingress, ctx.fence))) ctx.deps.log.info({ ingress: `${namespace}/${ingressName(name)}` }, 'Ingress applied');
      return;
    }
    case 'delete': {
      const uid = ctx.deployment.metadata.uid ?? '';
      if (await writer.delete(namespace, ingressName(name), uid, ctx.fence))
        ctx.deps.log.info({ ingress: `${namespace}/${ingressName(name)}` }, 'Ingress deleted');
      return;
    }
  }
}
