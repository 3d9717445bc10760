/**
 * `flink-operator inspect NAME [-n NS] [--kubeconfig F] [-o json]`: one FlinkDeployment as the
 * operator sees it:
 * - the user-facing status (v1);
 * - the internal state from the companion ConfigMap: revision, reconciliation state, pending
 *   operation, savepoints;
 * - whether the status lags the state (status.stateRef.revision < the ConfigMap's revision: the
 *   operator has recorded a decision whose status update has not landed yet);
 * - the pending spec change: the difference lastReconciledSpec → current spec (fast-json-patch),
 *   i.e. what the operator will act on next;
 * - whether the status still carries the Apache operator's legacy fields (not migrated yet).
 *
 * Read-only: GETs only. Exit status 1 when the deployment does not exist, 0 otherwise (a missing,
 * foreign or corrupt ConfigMap is shown, not an error of the command).
 */
import type { V1ConfigMap } from '@kubernetes/client-node';
import type { Command } from 'commander';
import jsonPatch, { type Operation } from 'fast-json-patch';
import type { FlinkDeploymentV1, FlinkDeploymentV1beta1 } from '../api/flink-deployment.js';
import type { FlinkDeploymentStatusV1 } from '../api/flink-deployment-status.js';
import type { InternalState } from '../api/internal-state.js';
import { hasLegacyFields } from '../api/legacy-status-codec.js';
import { toKubeApiError } from '../kube/api-errors.js';
import { KubeConfigMapClient, type ConfigMapClient } from '../kube/configmap-client.js';
import { KubeFlinkDeploymentClient, type FlinkDeploymentClient } from '../kube/flink-deployment-client.js';
import { assertOwnedBy, decodeStateConfigMap } from '../state/state-configmap-codec.js';
import { stateConfigMapName } from '../state/state-store.js';
import { LEGACY_STATUS_ANNOTATION, readLegacyStatusArchive } from '../state/legacy-migration.js';
import { describeJsonPatch } from '../state/json-patch-text.js';
import { contextNamespace, loadKubeConfig } from './migrate-command.js';

/** What `inspect` found (the `-o json` document). */
export interface Inspection {
  readonly resource: string;
  readonly generation?: number;
  readonly status: FlinkDeploymentStatusV1 | null;
  readonly configMap: { readonly name: string; readonly resourceVersion?: string; readonly writtenBy?: string; readonly leader?: string } | null;
  /** The decoded state. */
  readonly state: InternalState | null;
  /** Why the state is missing or unreadable, when it is. */
  readonly stateError: string | null;
  readonly legacyStatusArchived: boolean;
  readonly stateRevision: number | null;
  readonly statusRevision: number | null;
  /** true / false; null when either revision is unknown. */
  readonly statusLagsState: boolean | null;
  /** lastReconciledSpec → spec (RFC 6902); null when there is no lastReconciledSpec. */
  readonly pendingSpecChange: Operation[] | null;
  /** The status still has Apache operator fields (run `flink-operator migrate`). */
  readonly legacyStatus: boolean;
}

export interface InspectClients {
  readonly configMaps: ConfigMapClient;
  readonly deployments: FlinkDeploymentClient;
}

export class DeploymentNotFoundError extends Error {
  constructor(readonly resource: string) {
    super(`FlinkDeployment ${resource} not found`);
    this.name = 'DeploymentNotFoundError';
  }
}

/** Gathers the inspection (GETs: the v1 object, the ConfigMap, the v1beta1 object). */
export async function inspectDeployment(clients: InspectClients, namespace: string, name: string): Promise<Inspection> {
  const resource = `${namespace}/${name}`;
  const legacy: FlinkDeploymentV1beta1 | undefined = await clients.deployments.getV1beta1(namespace, name).catch(() => undefined);
  // v1 is not served yet during an upgrade (crds/upgrade/): fall back to the v1beta1 object
  const deployment: FlinkDeploymentV1 | undefined = (await clients.deployments.get(namespace, name)) ?? (legacy as unknown as FlinkDeploymentV1 | undefined);
  if (!deployment) throw new DeploymentNotFoundError(resource);
  const configMapName = deployment.status?.stateRef?.configMapName ?? stateConfigMapName(name);
  const configMap: V1ConfigMap | undefined = await clients.configMaps.get(namespace, configMapName);

  let state: InternalState | null = null;
  let stateError: string | null = null;
  if (!configMap) {
    stateError = `ConfigMap ${namespace}/${configMapName} does not exist${hasLegacyFields(legacy?.status) ? ' (the status still has legacy fields: run `flink-operator migrate`)' : ' (the operator creates it on its first reconcile)'}`;
  } else {
    try {
      assertOwnedBy(configMap, deployment);
      state = decodeStateConfigMap(configMap);
    } catch (error) {
      stateError = (error as Error).message;
    }
  }
  const stateRevision = state ? state.revision : null;
  const statusRevision = deployment.status?.stateRef?.revision ?? null;
  const pendingSpecChange = state?.lastReconciledSpec ? jsonPatch.compare(state.lastReconciledSpec as object, (deployment.spec ?? {}) as object) : null;
  return {
    resource,
    ...(deployment.metadata.generation !== undefined ? { generation: deployment.metadata.generation } : {}),
    status: deployment.status ?? null,
    configMap: configMap
      ? {
          name: configMapName,
          ...(configMap.metadata?.resourceVersion ? { resourceVersion: configMap.metadata.resourceVersion } : {}),
          ...(configMap.metadata?.annotations?.['flink-operator.io/written-by']
            ? { writtenBy: configMap.metadata.annotations['flink-operator.io/written-by'] }
            : {}),
          ...(configMap.metadata?.annotations?.['flink-operator.io/leader'] ? { leader: configMap.metadata.annotations['flink-operator.io/leader'] } : {}),
        }
      : null,
    state,
    stateError,
    legacyStatusArchived: readLegacyStatusArchive(configMap) !== undefined,
    stateRevision,
    statusRevision,
    statusLagsState: stateRevision !== null && statusRevision !== null ? statusRevision < stateRevision : null,
    pendingSpecChange,
    legacyStatus: hasLegacyFields(legacy?.status),
  };
}

/** Phases in which `upgradeSavepointPath` is what the next deployment restores from. */
const RESTORE_PENDING_PHASES: ReadonlySet<InternalState['phase']> = new Set(['NEW', 'DEPLOYING', 'STOPPING', 'STOPPED', 'ROLLING_BACK']);

/**
 * What `upgradeSavepointPath` means now: `pending` (a deployment is pinned or about to be: it
 * restores from it), `on-resume` (suspended: a resume restores from it), `spent` (a job is
 * deployed: the path is left over, e.g. from an Apache operator status, where it stays after the
 * upgrade), `none`.
 */
export function restorePathRole(state: InternalState): 'pending' | 'on-resume' | 'spent' | 'none' {
  if (!state.upgradeSavepointPath) return 'none';
  if (state.jobIdToSubmit || RESTORE_PENDING_PHASES.has(state.phase)) return 'pending';
  if (state.phase === 'SUSPENDING' || state.phase === 'SUSPENDED') return 'on-resume';
  return 'spent';
}

function time(ms: number | undefined): string {
  return ms === undefined ? '-' : `${new Date(ms).toISOString()} (${ms})`;
}

/** The human-readable form. */
export function formatInspection(i: Inspection): string {
  const lines: string[] = [];
  const s = i.status ?? {};
  lines.push(`FlinkDeployment ${i.resource}${i.generation !== undefined ? ` (generation ${i.generation})` : ''}`);
  if (i.legacyStatus) lines.push('  ! the status still carries Apache operator (v1beta1) internal fields: run `flink-operator migrate`');
  lines.push('', 'Status (user-facing):');
  lines.push(`  lifecycleState:             ${s.lifecycleState ?? '-'}`);
  lines.push(`  observedGeneration:         ${s.observedGeneration ?? '-'}`);
  lines.push(`  jobManagerDeploymentStatus: ${s.jobManagerDeploymentStatus ?? '-'}`);
  if (s.jobStatus) {
    const j = s.jobStatus;
    lines.push(`  job:                        ${j.state ?? '-'}${j.jobId ? `  id ${j.jobId}` : ''}${j.jobName ? `  name ${j.jobName}` : ''}`);
    if (j.lastSavepoint)
      lines.push(
        `  lastSavepoint:              ${j.lastSavepoint.location} at ${time(j.lastSavepoint.timeStamp)}${j.lastSavepoint.triggerType ? ` ${j.lastSavepoint.triggerType}` : ''}`,
      );
  }
  if (s.error) lines.push(`  error:                      ${s.error}`);
  for (const c of s.conditions ?? []) lines.push(`  condition ${c.type}=${c.status}: ${c.reason}${c.message ? ` (${c.message})` : ''}`);
  lines.push(`  stateRef:                   ${s.stateRef ? `${s.stateRef.configMapName} revision ${s.stateRef.revision}` : '-'}`);

  lines.push('', `Internal state (ConfigMap ${i.configMap ? i.configMap.name : '-'}):`);
  if (i.stateError) lines.push(`  ! ${i.stateError}`);
  const st = i.state;
  if (st) {
    lines.push(
      `  revision:                   ${st.revision}${i.configMap?.writtenBy ? `  written by ${i.configMap.writtenBy}` : ''}${i.configMap?.leader ? `, leader ${i.configMap.leader}` : ''}`,
    );
    lines.push(`  phase:                      ${st.phase}${st.reconciliationTimestamp ? ` since ${st.reconciliationTimestamp}` : ''}`);
    lines.push(`  lastReconciledGeneration:   ${st.lastReconciledGeneration ?? '-'}`);
    lines.push(`  lastStableGeneration:       ${st.lastStableGeneration ?? '-'}`);
    if (st.firstDeployment !== undefined) lines.push(`  firstDeployment:            ${st.firstDeployment}`);
    if (st.deployedJobId) lines.push(`  deployedJobId:              ${st.deployedJobId}`);
    const pending: string[] = [];
    const restore = restorePathRole(st);
    if (restore === 'pending') pending.push(`restore from ${st.upgradeSavepointPath}`);
    else if (restore === 'on-resume') pending.push(`restore from ${st.upgradeSavepointPath} when resumed`);
    else if (restore === 'spent')
      lines.push(`  upgradeSavepointPath:       ${st.upgradeSavepointPath} (what the running deployment was restored from or last upgraded with; not pending)`);
    if (st.jobIdToSubmit) pending.push(`submit job id ${st.jobIdToSubmit}`);
    for (const p of [st.pendingSavepoint, st.pendingCheckpoint]) {
      if (!p) continue;
      pending.push(
        `${p.kind} ${p.triggerType}${p.stopJob ? ' (stop job)' : ''} of job ${p.jobId}, requested ${time(p.requestedAt)}, ${p.triggerId ? `Flink trigger ${p.triggerId}` : 'not yet accepted by Flink'}`,
      );
    }
    lines.push(`  pending operation:          ${pending.length ? pending.join('; ') : 'none'}`);
    lines.push(`  savepoints:                 ${st.savepointHistory.length}${st.savepointHistory.length ? '' : ' (none)'}`);
    for (const sp of st.savepointHistory.slice(-5))
      lines.push(`    ${sp.location}  ${time(sp.timeStamp)}  ${sp.triggerType}${sp.formatType ? ` ${sp.formatType}` : ''}`);
    if (st.savepointHistory.length > 5) lines.push(`    … ${st.savepointHistory.length - 5} older`);
    if (i.legacyStatusArchived)
      lines.push(`  legacy status archive:      the original Apache operator status, verbatim (annotation ${LEGACY_STATUS_ANNOTATION})`);
  }

  lines.push('');
  if (i.statusLagsState === null) lines.push('Status lags state:            unknown (no stateRef or no readable state)');
  else if (i.statusLagsState)
    lines.push(
      `Status lags state:            yes: the status reflects revision ${i.statusRevision}, the state is at revision ${i.stateRevision} (an update is in flight)`,
    );
  else lines.push(`Status lags state:            no (both at revision ${i.stateRevision})`);

  lines.push('', 'Pending spec change (lastReconciledSpec → spec):');
  if (i.pendingSpecChange === null) lines.push('  unknown: no lastReconciledSpec (never deployed)');
  else if (i.pendingSpecChange.length === 0) lines.push('  none');
  else lines.push(...describeJsonPatch(i.pendingSpecChange, st?.lastReconciledSpec, { prefix: 'spec' }).map((l) => `  ${l}`));
  return lines.join('\n');
}

export function registerInspectCommand(program: Command): void {
  program
    .command('inspect')
    .description('show a FlinkDeployment: user-facing status, internal state from its ConfigMap, status lag, pending spec change')
    .argument('<name>', 'FlinkDeployment name')
    .option('-n, --namespace <ns>', "namespace (default: the kubeconfig context's namespace, else default)")
    .option('--kubeconfig <file>', 'kubeconfig file (default: $KUBECONFIG, ~/.kube/config, then in-cluster)')
    .option('-o, --output <format>', 'text or json', 'text')
    .action(async (name: string, opts: { namespace?: string; kubeconfig?: string; output: string }, command: Command) => {
      if (opts.output !== 'text' && opts.output !== 'json')
        command.error(`flink-operator inspect: -o must be text or json, got ${opts.output}`, { exitCode: 2 });
      const kc = loadKubeConfig(opts.kubeconfig);
      const clients = { configMaps: new KubeConfigMapClient(kc), deployments: new KubeFlinkDeploymentClient(kc) };
      try {
        const inspection = await inspectDeployment(clients, opts.namespace ?? contextNamespace(kc), name);
        process.stdout.write(`${opts.output === 'json' ? JSON.stringify(inspection, null, 2) : formatInspection(inspection)}\n`);
      } catch (error) {
        const message = error instanceof DeploymentNotFoundError ? error.message : toKubeApiError(error).message;
        process.stderr.write(`flink-operator inspect: ${message}\n`);
        process.exitCode = 1;
      }
    });
}
