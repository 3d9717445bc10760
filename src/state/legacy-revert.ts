/**
 * The way back to the Apache operator: `flink-operator migrate --revert` writes each
 * FlinkDeployment's status in the Apache layout again (v1beta1: internal state inside `status`),
 * from the CURRENT state ConfigMap, then deletes that ConfigMap.
 *
 * Steps for one deployment (read through v1beta1):
 * 1. status without `stateRef` and no state ConfigMap → `unchanged` (never migrated, or reverted);
 * 2. read and decode the ConfigMap (`<name>-operator-state` or the one `stateRef` names); foreign,
 *    corrupt or missing while `stateRef` names it → `refused`, nothing written;
 * 3. the status already has legacy fields and no `stateRef`, and they are what step 4 would write
 *    from this ConfigMap → an earlier revert stopped after its status write: delete the ConfigMap
 *    (`resumed`); legacy fields that do not match → `refused`;
 * 4. the legacy status = {@link revertedLegacyStatus} of the state and the user-facing status;
 *    refused when the state holds an operation in flight the Apache layout cannot express;
 * 5. PUT the v1beta1 status (locked on the resourceVersion read); only once that succeeded,
 *    DELETE the ConfigMap (after checking it is still the revision reverted from).
 *
 * Guarantees
 * - Lossless where nothing changed since the migration: when the current state and user status
 *   are the ones the archived original status decodes to, the archive is written back verbatim.
 *   Where the operator has moved on, the current state's values are written, and every legacy
 *   field whose decoded value is unchanged keeps its original text (spec strings with their
 *   envelope and number formatting, `lastStableSpec`'s firstDeployment, savepoint entries with
 *   their original enum values and nonces).
 * - The ConfigMap is deleted only after the status write landed; an interruption between the two is
 *   finished by a rerun (step 3). `dryRun` writes nothing and describes the status it would write.
 * Assumptions
 * - This operator is stopped (else it would migrate the reverted status again), and the CRD in
 *   place still declares the legacy fields (this operator's CRD does; re-apply the Apache CRD after).
 * Caveats
 * - State with no Apache counterpart is not written: `deployedFrom`, `failedUpgrade` (the Apache
 *   operator will try a failed upgrade again), `formatVersion`, `lastWriter`, `revision`.
 */
import { isDeepStrictEqual } from 'node:util';
import type { FlinkDeploymentV1, FlinkDeploymentV1beta1 } from '../api/flink-deployment.js';
import type { FlinkDeploymentStatusV1, FlinkDeploymentStatusV1beta1, LegacySavepoint } from '../api/flink-deployment-status.js';
import type { InternalState } from '../api/internal-state.js';
import { decodeLegacyStatus, encodeLegacyStatus, hasLegacyFields, LegacyStatusError } from '../api/legacy-status-codec.js';
import { isConflict, isTransient, toKubeApiError } from '../kube/api-errors.js';
import type { ConfigMapClient } from '../kube/configmap-client.js';
import type { FlinkDeploymentClient } from '../kube/flink-deployment-client.js';
import { describeJsonDiff } from './json-patch-text.js';
import { readLegacyStatusArchive } from './legacy-migration.js';
import { assertOwnedBy, decodeStateConfigMap } from './state-configmap-codec.js';
import { stateConfigMapName } from './state-store.js';

export interface RevertDependencies {
  readonly configMaps: ConfigMapClient;
  readonly deployments: FlinkDeploymentClient;
  readonly dryRun: boolean;
}

interface OutcomeBase {
  readonly resource: string;
  readonly message: string;
}

export type RevertOutcome =
  | (OutcomeBase & { readonly kind: 'reverted'; readonly configMapName: string; readonly verbatim: boolean })
  | (OutcomeBase & { readonly kind: 'resumed'; readonly configMapName: string })
  | (OutcomeBase & { readonly kind: 'unchanged' })
  | (OutcomeBase & { readonly kind: 'would-revert'; readonly configMapName: string; readonly diff: string; readonly status: FlinkDeploymentStatusV1beta1 })
  | (OutcomeBase & { readonly kind: 'refused' })
  | (OutcomeBase & { readonly kind: 'failed'; readonly error: unknown });

export type RevertOutcomeKind = RevertOutcome['kind'];

/** JSON-normalised copy (undefined properties dropped), for comparisons. */
function norm(value: unknown): unknown {
  return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
}

const same = (a: unknown, b: unknown) => isDeepStrictEqual(norm(a), norm(b));

/** The state without the store's bookkeeping. */
function content(state: InternalState): unknown {
  const { revision: _r, lastWriter: _w, formatVersion: _f, ...rest } = norm(state) as InternalState;
  return rest;
}

/** The user-facing status without stateRef. */
function userPart(status: FlinkDeploymentStatusV1 | FlinkDeploymentStatusV1beta1 | undefined): FlinkDeploymentStatusV1 {
  const { stateRef: _s, ...rest } = (norm(status ?? {}) ?? {}) as FlinkDeploymentStatusV1;
  return rest;
}

/**
 * State the Apache layout cannot hold that would change what happens next (a revert would lose an
 * operation in flight): the field names, empty when none.
 */
export function inexpressibleInFlight(state: InternalState): string[] {
  const out: string[] = [];
  if (state.jobIdToSubmit !== undefined) out.push(`jobIdToSubmit (a deployment of job ${state.jobIdToSubmit} is being applied)`);
  if (state.replaceJobManagerUid !== undefined) out.push('replaceJobManagerUid (a JobManager restart is in progress)');
  if (state.pendingSavepoint && !state.pendingSavepoint.triggerId) out.push('pendingSavepoint (requested, not yet accepted by Flink)');
  if (state.pendingCheckpoint && !state.pendingCheckpoint.triggerId) out.push('pendingCheckpoint (requested, not yet accepted by Flink)');
  return out;
}

/**
 * The Apache-layout status for `state` and the user-facing `userStatus` (encodeLegacyStatus), with
 * the original text of every legacy field whose value did not change since the migration taken
 * from `archive` (the original status JSON), or the archive itself when nothing changed.
 */
export function revertedLegacyStatus(
  state: InternalState,
  userStatus: FlinkDeploymentStatusV1,
  archive: string | undefined,
  resource = '',
): { status: FlinkDeploymentStatusV1beta1; verbatim: boolean } {
  const user = userPart(userStatus);
  const encoded = encodeLegacyStatus(state, user);
  if (archive === undefined) return { status: encoded, verbatim: false };
  let original: FlinkDeploymentStatusV1beta1;
  let decoded: ReturnType<typeof decodeLegacyStatus>;
  try {
    original = JSON.parse(archive) as FlinkDeploymentStatusV1beta1;
    decoded = decodeLegacyStatus(original, resource, 'archive');
  } catch (error) {
    if (error instanceof SyntaxError || error instanceof LegacyStatusError) return { status: encoded, verbatim: false };
    throw error;
  }
  const was = decoded.state;
  if (same(content(was), content(state)) && same(userPart(decoded.userStatus), user)) return { status: original, verbatim: true };

  // Field by field: the original text where the decoded value is unchanged.
  const out = structuredClone(encoded);
  const rs = out.reconciliationStatus;
  const ors = original.reconciliationStatus;
  if (rs && ors) {
    if (
      ors.lastReconciledSpec !== undefined &&
      same(was.lastReconciledSpec, state.lastReconciledSpec) &&
      same(was.lastReconciledGeneration, state.lastReconciledGeneration) &&
      same(was.firstDeployment, state.firstDeployment)
    )
      rs.lastReconciledSpec = ors.lastReconciledSpec;
    if (ors.lastStableSpec !== undefined && same(was.lastStableSpec, state.lastStableSpec) && same(was.lastStableGeneration, state.lastStableGeneration))
      rs.lastStableSpec = ors.lastStableSpec;
    if (ors.reconciliationTimestamp !== undefined && same(was.reconciliationTimestamp, state.reconciliationTimestamp))
      rs.reconciliationTimestamp = ors.reconciliationTimestamp;
  }
  const osp = original.jobStatus?.savepointInfo;
  const sp = out.jobStatus?.savepointInfo;
  if (sp && osp) {
    const originals = osp.savepointHistory ?? [];
    const key = (s: LegacySavepoint) => `${s.location ?? ''}\u0000${s.timeStamp ?? 0}`;
    sp.savepointHistory = (sp.savepointHistory ?? []).map((entry, i) => {
      const candidate = originals.find((o) => key(o) === key(entry));
      const record = state.savepointHistory[i];
      const wasRecord = was.savepointHistory.find((r) => record && r.location === record.location && r.timeStamp === record.timeStamp);
      return candidate && wasRecord && same(wasRecord, record) ? structuredClone(candidate) : entry;
    });
    if (sp.lastSavepoint && osp.lastSavepoint && key(sp.lastSavepoint) === key(osp.lastSavepoint)) sp.lastSavepoint = structuredClone(osp.lastSavepoint);
  }
  const ocp = original.jobStatus?.checkpointInfo;
  const cp = out.jobStatus?.checkpointInfo;
  if (
    cp &&
    ocp?.lastCheckpoint !== undefined &&
    same(was.lastPeriodicCheckpointTimestamp, state.lastPeriodicCheckpointTimestamp) &&
    same(was.pendingCheckpoint, state.pendingCheckpoint)
  )
    cp.lastCheckpoint = structuredClone(ocp.lastCheckpoint);
  return { status: out, verbatim: false };
}

function resourceOf(object: FlinkDeploymentV1beta1): string {
  return `${object.metadata.namespace ?? ''}/${object.metadata.name ?? ''}`;
}

function failed(resource: string, error: unknown, context: string): RevertOutcome {
  return { kind: 'failed', resource, error, message: `${resource}: ${context}: ${toKubeApiError(error).message}; rerun migrate --revert (it resumes)` };
}

/** Reverts one FlinkDeployment (see the module comment). Never throws for API failures. */
export async function revertDeployment(object: FlinkDeploymentV1beta1, deps: RevertDependencies, attempts = 3): Promise<RevertOutcome> {
  let current = object;
  for (let attempt = 1; ; attempt++) {
    try {
      return await revertOnce(current, deps);
    } catch (error) {
      if (!(isConflict(error) || isTransient(error)) || attempt >= attempts) return failed(resourceOf(object), error, 'an API request failed');
      const reread = await deps.deployments.getV1beta1(object.metadata.namespace ?? '', object.metadata.name ?? '').catch(() => undefined);
      if (!reread || reread.metadata.uid !== object.metadata.uid) return failed(resourceOf(object), error, 'the FlinkDeployment was deleted or recreated');
      current = reread;
    }
  }
}

async function revertOnce(object: FlinkDeploymentV1beta1, deps: RevertDependencies): Promise<RevertOutcome> {
  const resource = resourceOf(object);
  const namespace = object.metadata.namespace ?? '';
  const status = object.status ?? {};
  const ref = status.stateRef;
  const configMapName = ref?.configMapName ?? stateConfigMapName(object.metadata.name ?? '');
  const configMap = await deps.configMaps.get(namespace, configMapName);
  const legacy = hasLegacyFields(status);
  if (!configMap) {
    if (!ref) {
      return {
        kind: 'unchanged',
        resource,
        message: `${resource}: no state ConfigMap and no stateRef${legacy ? ' (the status is in the Apache layout already)' : ''}; nothing to do`,
      };
    }
    return {
      kind: 'refused',
      resource,
      message: `${resource}: status.stateRef names ConfigMap ${configMapName}, which does not exist: there is no state to revert from; left untouched`,
    };
  }
  let state: InternalState;
  try {
    assertOwnedBy(configMap, object as unknown as FlinkDeploymentV1);
    state = decodeStateConfigMap(configMap);
  } catch (error) {
    return { kind: 'refused', resource, message: `${resource}: ${(error as Error).message}; left untouched` };
  }
  const archive = readLegacyStatusArchive(configMap);

  if (legacy && !ref) {
    // An earlier revert wrote the status and stopped before deleting the ConfigMap?
    let user: FlinkDeploymentStatusV1;
    try {
      user = decodeLegacyStatus(status, resource, configMapName).userStatus;
    } catch (error) {
      return { kind: 'refused', resource, message: `${(error as Error).message}; left untouched` };
    }
    const expected = revertedLegacyStatus(state, user, archive, resource).status;
    if (!same(expected, status)) {
      return {
        kind: 'refused',
        resource,
        message:
          `${resource}: the status already has Apache operator fields that differ from ConfigMap ${configMapName} (is the Apache operator running?); ` +
          `left untouched: delete the ConfigMap to keep the status, or remove the legacy status fields and rerun`,
      };
    }
    if (deps.dryRun) {
      return {
        kind: 'would-revert',
        resource,
        configMapName,
        status,
        diff: `ConfigMap ${namespace}/${configMapName}: delete (the status was already written back)`,
        message: `${resource}: would finish an interrupted revert by deleting ConfigMap ${configMapName}`,
      };
    }
    await deps.configMaps.delete(namespace, configMapName);
    return {
      kind: 'resumed',
      resource,
      configMapName,
      message: `${resource}: finished an interrupted revert (status already in the Apache layout; ConfigMap ${configMapName} deleted)`,
    };
  }

  const inFlight = inexpressibleInFlight(state);
  if (inFlight.length > 0) {
    return {
      kind: 'refused',
      resource,
      message:
        `${resource}: the state holds an operation in flight that the Apache operator's status cannot express: ${inFlight.join(', ')}; ` +
        `left untouched: let this operator finish it (start it, wait for inspect to show no pending operation, stop it), then rerun`,
    };
  }
  const { status: reverted, verbatim } = revertedLegacyStatus(state, status, archive, resource);
  if (deps.dryRun) {
    const diff = [
      `FlinkDeployment ${resource} status (v1beta1 PUT .../status${verbatim ? ', the archived original verbatim' : ', from the current state'}):`,
      ...describeJsonDiff(status, reverted, { prefix: 'status' }).map((l) => `  ${l}`),
      `ConfigMap ${namespace}/${configMapName} (revision ${state.revision}): delete after the status write`,
    ].join('\n');
    return {
      kind: 'would-revert',
      resource,
      configMapName,
      status: reverted,
      diff,
      message: `${resource}: would write the Apache operator status from ConfigMap ${configMapName} (revision ${state.revision}) and delete it`,
    };
  }
  await deps.deployments.replaceStatusV1beta1({ ...object, status: reverted });
  // The status is written: only now may the ConfigMap go (if it still is the revision reverted from).
  const again = await deps.configMaps.get(namespace, configMapName);
  if (again && again.metadata?.resourceVersion !== configMap.metadata?.resourceVersion) {
    return {
      kind: 'failed',
      resource,
      error: undefined,
      message: `${resource}: status written back, but ConfigMap ${configMapName} changed meanwhile (is this operator still running?): not deleted; stop the operator and rerun`,
    };
  }
  try {
    await deps.configMaps.delete(namespace, configMapName);
  } catch (error) {
    return failed(resource, error, `status written back, deleting ConfigMap ${configMapName} failed`);
  }
  return {
    kind: 'reverted',
    resource,
    configMapName,
    verbatim,
    message: `${resource}: reverted (status written in the Apache layout from ConfigMap ${configMapName} revision ${state.revision}${verbatim ? ', unchanged since the migration: the original status verbatim' : ''}; ConfigMap deleted)`,
  };
}
