/**
 * `flink-operator inspect [TYPE/]NAME | TYPE NAME [-n NS] [--kubeconfig F] [-o json]`: one
 * FlinkDeployment or FlinkSessionJob as the operator sees it:
 * - the user-facing status (v1);
 * - the internal state from the companion ConfigMap (`<name>-operator-state`, or
 *   `<name>.sessionjob-state` for a session job): revision, phase, pending operation, savepoints;
 * - whether the status lags the state (status.stateRef.revision < the ConfigMap's revision: the
 *   operator has recorded a decision whose status update has not landed yet), or the state is older
 *   than the status (an older copy was put back: the operator refuses it);
 * - the pending spec change: the difference lastReconciledSpec → current spec (fast-json-patch),
 *   i.e. what the operator will act on next;
 * - whether the status still carries the Apache operator's legacy fields (not migrated yet);
 * - for a session job also its session cluster (spec.deploymentName: found, a session or an
 *   application cluster, being deleted), its last reconciled and stable specs, and whether the job
 *   id in the status is the one the state records;
 * - the effective flinkConfiguration: every key, its value and where it came from
 *   (effective-configuration-view.ts, the operator's defaults from `--operator-config`).
 *
 * Which resource: TYPE is what kubectl accepts for either CRD (kind, plural, singular or short name,
 * any case, optionally with `.flink.apache.org`): `flinkdeployment`, `flinkdeployments`, `flinkdep`,
 * `flinksessionjob`, `flinksessionjobs`, `sessionjob`; `TYPE/NAME` (`kubectl describe
 * sessionjob/orders`) and `TYPE NAME` (`kubectl get sessionjob orders`) mean the same. A bare NAME
 * is the FlinkDeployment of that name when there is one (what `inspect NAME` meant before session
 * jobs, so scripts keep their meaning), else the FlinkSessionJob; when both exist a note on stderr
 * names the other.
 *
 * Guarantees
 * - Read-only: GETs only.
 * - FlinkDeployments are inspected as before without the FlinkSessionJob CRD: a bare NAME looks at
 *   flinksessionjobs only for the note (any error there is ignored) or when no FlinkDeployment has
 *   that name (a 404, which is what a missing CRD answers too, is "not found").
 * - Exit status 1 when the resource does not exist, 2 for a usage error, 0 otherwise: a missing,
 *   foreign, misplaced or corrupt ConfigMap is shown, not an error of the command.
 * Assumptions: the state is read as the operator's store reads it (src/state: the controller
 *   ownerReference, the owner named in the content, the codec's validation); v1 may be unserved
 *   during an upgrade (crds/upgrade/), the v1beta1 object stands in for it then.
 * Caveats
 * - The pending spec change is the raw difference, including what the operator rewrites in the
 *   reconciled spec (e.g. `job.state: running` when the spec leaves it out).
 * - There is no listing mode: one resource per call (`kubectl get flink` lists both kinds).
 */
import type { V1ConfigMap, V1ObjectMeta } from '@kubernetes/client-node';
import type { Command } from 'commander';
import jsonPatch, { type Operation } from 'fast-json-patch';
import { isDeepStrictEqual } from 'node:util';
import {
  FLINK_DEPLOYMENT_KIND,
  FLINK_DEPLOYMENT_PLURAL,
  FLINK_DEPLOYMENT_SHORT_NAMES,
  FLINK_DEPLOYMENT_SINGULAR,
  FLINK_GROUP,
} from '../api/flink-deployment.js';
import type { FlinkDeploymentStatusV1 } from '../api/flink-deployment-status.js';
import { FLINK_SESSION_JOB_KIND, FLINK_SESSION_JOB_PLURAL, FLINK_SESSION_JOB_SHORT_NAMES, FLINK_SESSION_JOB_SINGULAR } from '../api/flink-session-job.js';
import type { FlinkSessionJobSpec } from '../api/flink-session-job-spec.js';
import type { FlinkSessionJobStatusV1 } from '../api/flink-session-job-status.js';
import { type AnyInternalState, type InternalState, restorePathRole, type SessionJobInternalState } from '../api/internal-state.js';
import { hasLegacyFields } from '../api/legacy-status-codec.js';
import {
  DEFAULT_OPERATOR_CONFIG_MAP_REF,
  effectiveConfigurationOfResource,
  formatEffectiveConfiguration,
  parseOperatorConfigMapRef,
} from './effective-configuration-view.js';
import { KubeApiError, toKubeApiError } from '../kube/api-errors.js';
import { KubeConfigMapClient, type ConfigMapClient } from '../kube/configmap-client.js';
import {
  KubeFlinkDeploymentClient,
  KubeFlinkSessionJobClient,
  type FlinkDeploymentClient,
  type FlinkResourceClient,
  type FlinkSessionJobClient,
} from '../kube/flink-deployment-client.js';
import { LEADER_ANNOTATION } from '../runtime/fencing-token.js';
import { assertOwnedBy, assertStateBelongsTo, decodeStateConfigMap, WRITTEN_BY_ANNOTATION } from '../state/state-configmap-codec.js';
import { FLINK_DEPLOYMENT_STATE, FLINK_SESSION_JOB_STATE, type StateKind } from '../state/state-kinds.js';
import { LEGACY_STATUS_ANNOTATION, readLegacyStatusArchive } from '../state/legacy-status-archive.js';
import { describeJsonPatch } from '../state/json-patch-text.js';
import { contextNamespace, loadKubeConfig } from './migrate-command.js';

/** The kinds `inspect` shows. */
export type InspectedKind = typeof FLINK_DEPLOYMENT_KIND | typeof FLINK_SESSION_JOB_KIND;

/** The state ConfigMap as found (null in an inspection when it does not exist). */
export interface ConfigMapSummary {
  readonly name: string;
  readonly resourceVersion?: string;
  readonly writtenBy?: string;
  readonly leader?: string;
}

/** What `inspect` found for either kind (the `-o json` document). */
interface InspectionOf<Kind extends InspectedKind, Status, State extends AnyInternalState> {
  readonly kind: Kind;
  readonly resource: string;
  readonly generation?: number;
  readonly status: Status | null;
  readonly configMap: ConfigMapSummary | null;
  /** The decoded state. */
  readonly state: State | null;
  /** Why the state is missing or unreadable, when it is. */
  readonly stateError: string | null;
  readonly legacyStatusArchived: boolean;
  readonly stateRevision: number | null;
  readonly statusRevision: number | null;
  /** true / false; null when either revision is unknown. */
  readonly statusLagsState: boolean | null;
  /** The state's revision is below status.stateRef.revision (an older copy was put back; the operator refuses it); null when either is unknown. */
  readonly stateOlderThanStatus: boolean | null;
  /** lastReconciledSpec → spec (RFC 6902); null when there is no lastReconciledSpec. */
  readonly pendingSpecChange: Operation[] | null;
  /** The status still has Apache operator fields (run `flink-operator migrate`). */
  readonly legacyStatus: boolean;
}

/** A FlinkDeployment's inspection. */
export type Inspection = InspectionOf<typeof FLINK_DEPLOYMENT_KIND, FlinkDeploymentStatusV1, InternalState>;

/** The FlinkDeployment a session job's spec.deploymentName names, as found. */
export interface SessionClusterSummary {
  /** spec.deploymentName; null when the spec names none. */
  readonly name: string | null;
  /**
   * `session`: a FlinkDeployment without spec.job; `application`: one with spec.job (it runs no
   * session jobs); `missing`: none of that name; `unreadable`: the GET failed (`readError`); null: no name.
   */
  readonly found: 'session' | 'application' | 'missing' | 'unreadable' | null;
  /** It has a deletionTimestamp (its deletion waits while session jobs exist, unless configured otherwise). */
  readonly deleting: boolean;
  readonly lifecycleState: string | null;
  readonly jobManagerDeploymentStatus: string | null;
  readonly readError?: string;
}

/** A FlinkSessionJob's inspection. */
export interface SessionJobInspection extends InspectionOf<typeof FLINK_SESSION_JOB_KIND, FlinkSessionJobStatusV1, SessionJobInternalState> {
  readonly sessionCluster: SessionClusterSummary;
  /** status.jobStatus.jobId. */
  readonly statusJobId: string | null;
  /** The job id the state records: the one about to be submitted (jobIdToSubmit), else the deployed one; the status is built from it. */
  readonly stateJobId: string | null;
  /** statusJobId === stateJobId; null when the state is unreadable. */
  readonly statusJobIdAgrees: boolean | null;
}

export type AnyInspection = Inspection | SessionJobInspection;

export interface InspectClients {
  readonly configMaps: ConfigMapClient;
  readonly deployments: FlinkDeploymentClient;
  /** Without it only FlinkDeployments are looked up. */
  readonly sessionJobs?: FlinkSessionJobClient;
}

/** No resource of the kinds looked up has that name. */
export class ResourceNotFoundError extends Error {
  constructor(
    readonly kinds: readonly InspectedKind[],
    readonly resource: string,
  ) {
    super(`${kinds[0]} ${resource} not found${kinds.length > 1 ? ` (nor a ${kinds.slice(1).join(' or ')} of that name)` : ''}`);
    this.name = 'ResourceNotFoundError';
  }
}

export class DeploymentNotFoundError extends ResourceNotFoundError {
  constructor(resource: string) {
    super([FLINK_DEPLOYMENT_KIND], resource);
    this.name = 'DeploymentNotFoundError';
  }
}

/** The command line named no resource `inspect` can show (exit status 2). */
export class InspectUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InspectUsageError';
  }
}

/** Which resource to inspect: `kind` undefined for a bare name. */
export interface InspectTarget {
  readonly kind?: InspectedKind;
  readonly name: string;
}

const TYPE_NAMES: ReadonlyMap<string, InspectedKind> = new Map([
  ...[FLINK_DEPLOYMENT_KIND, FLINK_DEPLOYMENT_PLURAL, FLINK_DEPLOYMENT_SINGULAR, ...FLINK_DEPLOYMENT_SHORT_NAMES].map(
    (n) => [n.toLowerCase(), FLINK_DEPLOYMENT_KIND] as const,
  ),
  ...[FLINK_SESSION_JOB_KIND, FLINK_SESSION_JOB_PLURAL, FLINK_SESSION_JOB_SINGULAR, ...FLINK_SESSION_JOB_SHORT_NAMES].map(
    (n) => [n.toLowerCase(), FLINK_SESSION_JOB_KIND] as const,
  ),
]);

/** `NAME`, `TYPE/NAME` or `TYPE NAME` (the command's one or two arguments). */
export function parseInspectTarget(first: string, second?: string): InspectTarget {
  const [type, name] =
    second !== undefined
      ? [first, second]
      : first.includes('/')
        ? [first.slice(0, first.indexOf('/')), first.slice(first.indexOf('/') + 1)]
        : [undefined, first];
  if (!name || name.includes('/'))
    throw new InspectUsageError(`"${[first, second].filter((a) => a !== undefined).join(' ')}" names no resource: give NAME, TYPE/NAME or TYPE NAME`);
  if (type === undefined) return { name };
  const lower = type.toLowerCase();
  const kind = TYPE_NAMES.get(lower.endsWith(`.${FLINK_GROUP}`) ? lower.slice(0, -FLINK_GROUP.length - 1) : lower);
  if (!kind) throw new InspectUsageError(`unknown resource type "${type}": use flinkdeployment (flinkdep) or flinksessionjob (sessionjob)`);
  return { kind, name };
}

interface FlinkObject<Spec, Status> {
  metadata: V1ObjectMeta;
  spec?: Spec;
  status?: Status;
}

/** The v1 object (the v1beta1 one while v1 is not served) and the v1beta1 one (its legacy fields), each possibly absent. */
async function readBothVersions<V1 extends FlinkObject<unknown, unknown>, V1beta1 extends FlinkObject<unknown, unknown>>(
  client: FlinkResourceClient<V1, V1beta1>,
  namespace: string,
  name: string,
): Promise<{ object: V1 | undefined; legacy: V1beta1 | undefined }> {
  const legacy = await client.getV1beta1(namespace, name).catch(() => undefined);
  const object = (await client.get(namespace, name)) ?? (legacy as unknown as V1 | undefined);
  return { object, legacy };
}

/** The part of an inspection every kind has: the state ConfigMap read as the operator's store reads it, and the consistency checks. */
async function inspectState<Kind extends InspectedKind, Spec, Status extends FlinkDeploymentStatusV1 | FlinkSessionJobStatusV1, State extends AnyInternalState>(
  configMaps: ConfigMapClient,
  kind: Kind,
  stateKind: StateKind<State>,
  namespace: string,
  object: FlinkObject<Spec, Status>,
  legacyStatus: boolean,
): Promise<InspectionOf<Kind, Status, State>> {
  const name = object.metadata.name ?? '';
  const configMapName = object.status?.stateRef?.configMapName ?? stateKind.configMapName(name);
  const configMap: V1ConfigMap | undefined = await configMaps.get(namespace, configMapName);
  let state: State | null = null;
  let stateError: string | null = null;
  if (!configMap) {
    stateError = `ConfigMap ${namespace}/${configMapName} does not exist${legacyStatus ? ' (the status still has legacy fields: run `flink-operator migrate`)' : ' (the operator creates it on its first reconcile)'}`;
  } else {
    try {
      assertOwnedBy(configMap, object, stateKind);
      assertStateBelongsTo(configMap, object, stateKind);
      state = decodeStateConfigMap(configMap, stateKind);
    } catch (error) {
      stateError = (error as Error).message;
    }
  }
  const stateRevision = state ? state.revision : null;
  const statusRevision = object.status?.stateRef?.revision ?? null;
  const annotations = configMap?.metadata?.annotations ?? {};
  return {
    kind,
    resource: `${namespace}/${name}`,
    ...(object.metadata.generation !== undefined ? { generation: object.metadata.generation } : {}),
    status: object.status ?? null,
    configMap: configMap
      ? {
          name: configMapName,
          ...(configMap.metadata?.resourceVersion ? { resourceVersion: configMap.metadata.resourceVersion } : {}),
          ...(annotations[WRITTEN_BY_ANNOTATION] ? { writtenBy: annotations[WRITTEN_BY_ANNOTATION] } : {}),
          ...(annotations[LEADER_ANNOTATION] ? { leader: annotations[LEADER_ANNOTATION] } : {}),
        }
      : null,
    state,
    stateError,
    legacyStatusArchived: readLegacyStatusArchive(configMap) !== undefined,
    stateRevision,
    statusRevision,
    statusLagsState: stateRevision !== null && statusRevision !== null ? statusRevision < stateRevision : null,
    stateOlderThanStatus: stateRevision !== null && statusRevision !== null ? stateRevision < statusRevision : null,
    pendingSpecChange: state?.lastReconciledSpec ? jsonPatch.compare(state.lastReconciledSpec as object, object.spec ?? {}) : null,
    legacyStatus,
  };
}

/** Gathers a FlinkDeployment's inspection (GETs: the v1 object, the ConfigMap, the v1beta1 object). */
export async function inspectDeployment(clients: Pick<InspectClients, 'configMaps' | 'deployments'>, namespace: string, name: string): Promise<Inspection> {
  const { object, legacy } = await readBothVersions(clients.deployments, namespace, name);
  if (!object) throw new DeploymentNotFoundError(`${namespace}/${name}`);
  return inspectState(clients.configMaps, FLINK_DEPLOYMENT_KIND, FLINK_DEPLOYMENT_STATE, namespace, object, hasLegacyFields(legacy?.status));
}

async function sessionClusterOf(deployments: FlinkDeploymentClient, namespace: string, name: string | undefined): Promise<SessionClusterSummary> {
  const none = { deleting: false, lifecycleState: null, jobManagerDeploymentStatus: null };
  if (!name) return { name: null, found: null, ...none };
  try {
    const { object } = await readBothVersions(deployments, namespace, name);
    if (!object) return { name, found: 'missing', ...none };
    return {
      name,
      found: object.spec?.job ? 'application' : 'session',
      deleting: object.metadata.deletionTimestamp !== undefined,
      lifecycleState: object.status?.lifecycleState ?? null,
      jobManagerDeploymentStatus: object.status?.jobManagerDeploymentStatus ?? null,
    };
  } catch (error) {
    return { name, found: 'unreadable', ...none, readError: toKubeApiError(error).message };
  }
}

/** Gathers a FlinkSessionJob's inspection (GETs: the v1 and v1beta1 objects, the ConfigMap, the session cluster). */
export async function inspectSessionJob(
  clients: Pick<InspectClients, 'configMaps' | 'deployments'> & { readonly sessionJobs: FlinkSessionJobClient },
  namespace: string,
  name: string,
): Promise<SessionJobInspection> {
  const { object, legacy } = await readBothVersions(clients.sessionJobs, namespace, name);
  if (!object) throw new ResourceNotFoundError([FLINK_SESSION_JOB_KIND], `${namespace}/${name}`);
  const common = await inspectState(clients.configMaps, FLINK_SESSION_JOB_KIND, FLINK_SESSION_JOB_STATE, namespace, object, hasLegacyFields(legacy?.status));
  const statusJobId = object.status?.jobStatus?.jobId ?? null;
  const stateJobId = common.state ? (common.state.jobIdToSubmit ?? common.state.deployedJobId ?? null) : null;
  return {
    ...common,
    sessionCluster: await sessionClusterOf(clients.deployments, namespace, object.spec?.deploymentName),
    statusJobId,
    stateJobId,
    statusJobIdAgrees: common.state ? statusJobId === stateJobId : null,
  };
}

/** The inspection of `target`, and notes for stderr (a bare name both kinds have). */
export async function inspectResource(
  clients: InspectClients,
  namespace: string,
  target: InspectTarget,
): Promise<{ readonly inspection: AnyInspection; readonly notes: readonly string[] }> {
  const resource = `${namespace}/${target.name}`;
  const sessionJobs = clients.sessionJobs;
  if (target.kind === FLINK_SESSION_JOB_KIND) {
    if (!sessionJobs) throw new Error('inspecting a FlinkSessionJob needs a FlinkSessionJob client');
    return { inspection: await inspectSessionJob({ ...clients, sessionJobs }, namespace, target.name), notes: [] };
  }
  if (target.kind === FLINK_DEPLOYMENT_KIND || !sessionJobs) return { inspection: await inspectDeployment(clients, namespace, target.name), notes: [] };
  try {
    const inspection = await inspectDeployment(clients, namespace, target.name);
    const other = await readBothVersions(sessionJobs, namespace, target.name).catch(() => undefined);
    const notes = other?.object
      ? [`a ${FLINK_SESSION_JOB_KIND} ${resource} exists too: \`flink-operator inspect ${FLINK_SESSION_JOB_SHORT_NAMES[0]}/${target.name}\` shows it`]
      : [];
    return { inspection, notes };
  } catch (error) {
    if (!(error instanceof DeploymentNotFoundError)) throw error;
  }
  try {
    return { inspection: await inspectSessionJob({ ...clients, sessionJobs }, namespace, target.name), notes: [] };
  } catch (error) {
    if (error instanceof ResourceNotFoundError) throw new ResourceNotFoundError([FLINK_DEPLOYMENT_KIND, FLINK_SESSION_JOB_KIND], resource);
    const apiError = toKubeApiError(error);
    throw new KubeApiError(
      apiError.code,
      apiError.reason,
      `${FLINK_DEPLOYMENT_KIND} ${resource} not found, and ${FLINK_SESSION_JOB_KIND} ${resource} could not be read: ${apiError.message}`,
      { cause: error },
    );
  }
}

function time(ms: number | undefined): string {
  return ms === undefined ? '-' : `${new Date(ms).toISOString()} (${ms})`;
}

/** The user-facing status lines both kinds share; `jobManager` only for FlinkDeployments. */
function statusLines(s: FlinkDeploymentStatusV1 | FlinkSessionJobStatusV1, jobManager: string | undefined): string[] {
  const lines = ['Status (user-facing):'];
  lines.push(`  lifecycleState:             ${s.lifecycleState ?? '-'}`);
  lines.push(`  observedGeneration:         ${s.observedGeneration ?? '-'}`);
  if (jobManager !== undefined) lines.push(`  jobManagerDeploymentStatus: ${jobManager}`);
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
  return lines;
}

/** One line: what a session job's spec submits. */
function sessionJobSpecText(spec: FlinkSessionJobSpec): string {
  const j = spec.job ?? {};
  return [
    j.jarURI ?? 'no jarURI (entryClass from the cluster classpath)',
    j.entryClass !== undefined ? `entryClass ${j.entryClass}` : undefined,
    j.parallelism !== undefined ? `parallelism ${j.parallelism}` : undefined,
    j.upgradeMode !== undefined ? `upgradeMode ${j.upgradeMode}` : undefined,
    j.state !== undefined ? `state ${j.state}` : undefined,
  ]
    .filter((part) => part !== undefined)
    .join(', ');
}

/** The internal-state lines both kinds share; `specLines` says what of the reconciled and stable specs to show. */
function stateLines<State extends AnyInternalState>(i: InspectionOf<InspectedKind, unknown, State>, specLines: (st: State) => string[]): string[] {
  const lines = ['', `Internal state (ConfigMap ${i.configMap ? i.configMap.name : '-'}):`];
  if (i.stateError) lines.push(`  ! ${i.stateError}`);
  const st = i.state;
  if (!st) return lines;
  lines.push(
    `  revision:                   ${st.revision}${i.configMap?.writtenBy ? `  written by ${i.configMap.writtenBy}` : ''}${i.configMap?.leader ? `, leader ${i.configMap.leader}` : ''}`,
  );
  lines.push(`  phase:                      ${st.phase}${st.reconciliationTimestamp ? ` since ${st.reconciliationTimestamp}` : ''}`);
  lines.push(...specLines(st));
  if (st.firstDeployment !== undefined) lines.push(`  firstDeployment:            ${st.firstDeployment}`);
  if (st.deployedJobId) lines.push(`  deployedJobId:              ${st.deployedJobId}`);
  if (st.deployedFrom) lines.push(`  deployedFrom:               ${st.deployedFrom} (what the last deployment restored from)`);
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
  return lines;
}

/** The status-vs-state revision line and the pending spec change, for both kinds. */
function consistencyLines(i: AnyInspection): string[] {
  const lines = [''];
  if (i.statusLagsState === null) lines.push('Status lags state:            unknown (no stateRef or no readable state)');
  else if (i.statusLagsState)
    lines.push(
      `Status lags state:            yes: the status reflects revision ${i.statusRevision}, the state is at revision ${i.stateRevision} (an update is in flight)`,
    );
  else if (i.stateOlderThanStatus)
    lines.push(
      `Status lags state:            no: the state (revision ${i.stateRevision}) is OLDER than the status (revision ${i.statusRevision}): an older copy of the ConfigMap was put back; the operator refuses it (status.error) until it is deleted, and then rebuilds it`,
    );
  else lines.push(`Status lags state:            no (both at revision ${i.stateRevision})`);
  if (i.kind === FLINK_SESSION_JOB_KIND && i.statusJobIdAgrees !== null) {
    if (i.statusJobIdAgrees) lines.push(`Status job id:                agrees with the state (${i.stateJobId ?? 'none yet'})`);
    else
      lines.push(
        `Status job id:                differs: the status shows ${i.statusJobId ?? 'none'}, the state records ${i.stateJobId ?? 'none'}${i.statusLagsState ? ' (the status lags: it catches up with its next write)' : '; the next status write sets it from the state'}`,
      );
  }
  lines.push('', 'Pending spec change (lastReconciledSpec → spec):');
  if (i.pendingSpecChange === null) lines.push('  unknown: no lastReconciledSpec (never deployed)');
  else if (i.pendingSpecChange.length === 0) lines.push('  none');
  else lines.push(...describeJsonPatch(i.pendingSpecChange, i.state?.lastReconciledSpec, { prefix: 'spec' }).map((l) => `  ${l}`));
  return lines;
}

function header(i: AnyInspection): string[] {
  const lines = [`${i.kind} ${i.resource}${i.generation !== undefined ? ` (generation ${i.generation})` : ''}`];
  if (i.legacyStatus) lines.push('  ! the status still carries Apache operator (v1beta1) internal fields: run `flink-operator migrate`');
  return lines;
}

/** A FlinkDeployment's human-readable form. */
export function formatInspection(i: Inspection): string {
  const s = i.status ?? {};
  return [
    ...header(i),
    '',
    ...statusLines(s, s.jobManagerDeploymentStatus ?? '-'),
    ...stateLines(i, (st) => [
      `  lastReconciledGeneration:   ${st.lastReconciledGeneration ?? '-'}`,
      `  lastStableGeneration:       ${st.lastStableGeneration ?? '-'}`,
    ]),
    ...consistencyLines(i),
  ].join('\n');
}

function sessionClusterText(c: SessionClusterSummary, namespace: string): string {
  if (c.name === null || c.found === null) return 'none: spec.deploymentName is not set';
  switch (c.found) {
    case 'missing':
      return `${c.name}: no FlinkDeployment ${c.name} in namespace ${namespace}; the job waits for it`;
    case 'unreadable':
      return `${c.name}: could not be read (${c.readError ?? 'unknown error'})`;
    case 'application':
      return `${c.name}: an application cluster (it has spec.job) and runs no session jobs; point spec.deploymentName at a session cluster`;
    case 'session':
      return `${c.name} (FlinkDeployment, ${c.lifecycleState ?? 'no lifecycle state yet'}, JobManager ${c.jobManagerDeploymentStatus ?? '-'}${c.deleting ? ', being deleted: waits while session jobs exist' : ''})`;
  }
}

/** A FlinkSessionJob's human-readable form. */
export function formatSessionJobInspection(i: SessionJobInspection): string {
  const namespace = i.resource.slice(0, i.resource.indexOf('/'));
  const generation = (g: number | undefined) => (g === undefined ? '' : `generation ${g}: `);
  const specLines = (st: SessionJobInternalState): string[] => {
    const reconciled = st.lastReconciledSpec;
    const stable = st.lastStableSpec;
    const lines = [`  lastReconciledSpec:         ${reconciled ? `${generation(st.lastReconciledGeneration)}${sessionJobSpecText(reconciled)}` : '-'}`];
    if (!stable) lines.push('  lastStableSpec:             - (no spec has run stably yet)');
    else if (isDeepStrictEqual(stable, reconciled) && st.lastStableGeneration === st.lastReconciledGeneration)
      lines.push(`  lastStableSpec:             ${st.lastStableGeneration === undefined ? '' : `generation ${st.lastStableGeneration}, `}the same spec`);
    else lines.push(`  lastStableSpec:             ${generation(st.lastStableGeneration)}${sessionJobSpecText(stable)}`);
    return lines;
  };
  return [
    ...header(i),
    '',
    `Session cluster:              ${sessionClusterText(i.sessionCluster, namespace)}`,
    '',
    ...statusLines(i.status ?? {}, undefined),
    ...stateLines(i, specLines),
    ...consistencyLines(i),
  ].join('\n');
}

/** The human-readable form of either kind. */
export function formatAnyInspection(i: AnyInspection): string {
  return i.kind === FLINK_SESSION_JOB_KIND ? formatSessionJobInspection(i) : formatInspection(i);
}

export function registerInspectCommand(program: Command): void {
  program
    .command('inspect')
    .description(
      'show a FlinkDeployment or FlinkSessionJob: user-facing status, internal state from its ConfigMap, status lag, pending spec change (a bare NAME: the FlinkDeployment, else the FlinkSessionJob)',
    )
    .usage('[TYPE/]NAME | TYPE NAME [options]')
    .argument('<name>', 'NAME, TYPE/NAME, or TYPE (then NAME); TYPE: flinkdeployment (flinkdep) or flinksessionjob (sessionjob), as kubectl accepts them')
    .argument('[name]', 'the NAME, when the first argument is a TYPE')
    .option('-n, --namespace <ns>', "namespace (default: the kubeconfig context's namespace, else default)")
    .option('--kubeconfig <file>', 'kubeconfig file (default: $KUBECONFIG, ~/.kube/config, then in-cluster)')
    .option('-o, --output <format>', 'text or json', 'text')
    .option(
      '--operator-config <namespace/name>',
      "the operator's default-configuration ConfigMap (for the effective configuration)",
      DEFAULT_OPERATOR_CONFIG_MAP_REF,
    )
    .action(
      async (
        first: string,
        second: string | undefined,
        opts: { namespace?: string; kubeconfig?: string; output: string; operatorConfig: string },
        command: Command,
      ) => {
        if (opts.output !== 'text' && opts.output !== 'json')
          command.error(`flink-operator inspect: -o must be text or json, got ${opts.output}`, { exitCode: 2 });
        let target: InspectTarget;
        let operatorConfig: { namespace: string; name: string };
        try {
          target = parseInspectTarget(first, second);
          operatorConfig = parseOperatorConfigMapRef(opts.operatorConfig);
        } catch (error) {
          command.error(`flink-operator inspect: ${(error as Error).message}`, { exitCode: 2 });
        }
        const kc = loadKubeConfig(opts.kubeconfig);
        const clients: InspectClients = {
          configMaps: new KubeConfigMapClient(kc),
          deployments: new KubeFlinkDeploymentClient(kc),
          sessionJobs: new KubeFlinkSessionJobClient(kc),
        };
        try {
          const namespace = opts.namespace ?? contextNamespace(kc);
          const { inspection, notes } = await inspectResource(clients, namespace, target);
          const configuration = await effectiveConfigurationOfResource(clients, operatorConfig, inspection.kind, namespace, target.name);
          process.stdout.write(
            `${opts.output === 'json' ? JSON.stringify({ ...inspection, effectiveConfiguration: configuration }, null, 2) : [formatAnyInspection(inspection), ...formatEffectiveConfiguration(configuration)].join('\n')}\n`,
          );
          for (const note of notes) process.stderr.write(`flink-operator inspect: note: ${note}\n`);
        } catch (error) {
          const message = error instanceof ResourceNotFoundError ? error.message : toKubeApiError(error).message;
          process.stderr.write(`flink-operator inspect: ${message}\n`);
          process.exitCode = 1;
        }
      },
    );
}
