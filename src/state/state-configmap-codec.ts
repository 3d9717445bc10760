/**
 * InternalState ⇄ the companion ConfigMap `<name>-operator-state` (the user-facing contract,
 * documented key by key in README.md, "Operator state").
 *
 * Readability: every value is plain text a user can read in `kubectl get configmap -o yaml`:
 * numbers and enums as they are, specs / pending operation / history as multi-line YAML (never a
 * one-line escaped JSON string).
 *
 * Size rules (the API server rejects a ConfigMap over 1 MiB):
 * 1. a value larger than `compressThresholdBytes` (256 KiB) moves to `binaryData["<key>.gz"]`,
 *    gzip + base64 (as Flink's autoscaler does);
 * 2. if the total is still over `maxTotalBytes` (1,000,000), the savepoint history is trimmed,
 *    oldest first, as little as needed: k records go where k fits and k − 1 does not (both
 *    checked by their real encoded size). That k is the smallest that fits provided a shorter
 *    history never encodes larger in the same form (plain or gzipped) — true for plain YAML, and
 *    gzip's size, not strictly monotone, is assumed to follow it.
 *    The returned state shows the trim; `trimmedRecords` are the records dropped (their savepoints
 *    are no longer remembered: dispose of them), `trimmedSavepoints` their count;
 * 3. if it is still over, StateTooLargeError naming the sizes: never a silently truncated spec.
 *
 * Guarantees: `decodeStateConfigMap(encodeStateConfigMap(s).configMap)` deep-equals the returned
 * `state`; a returned ConfigMap is within `maxTotalBytes` (`totalBytes`: keys plus values, as the
 * rules count); `[...trimmedRecords, ...state.savepointHistory]` is the input's history; decode
 * never guesses: any unparsable or schema-invalid key is a CorruptStateError naming it.
 * Cost: the history is serialized to YAML once per call (records of plain strings and integers by
 * a direct writer, byte-identical to the yaml library's output — tested —, others by the library);
 * a candidate trim is a slice of those bytes. Plain candidates are sized by sums, without gzip; a
 * gzipped history costs one gzip of it plus, when trimmed, a few gzips of candidates (interpolated
 * from the sizes measured so far; bisection after 8 probes). `work` reports the counts.
 * Assumptions: only this operator writes the keys it owns; other labels/annotations are kept.
 * Caveats: keys unknown to this format version are ignored on read and dropped on the next write;
 * a history holding one record object twice writes it twice in full (not as a YAML anchor and
 * alias); it decodes to the same records.
 */
import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import type { V1ConfigMap, V1OwnerReference } from '@kubernetes/client-node';
import YAML from 'yaml';
import {
  COMPRESSED_SUFFIX,
  HISTORY_KEY,
  HistoryCandidates,
  type PlacedValue,
  placeValue,
  recordsToDrop,
  type WorkCounter,
  yaml,
} from './state-value-packing.js';
import { FLINK_GROUP, API_VERSION_V1 } from '../api/flink-deployment.js';
import { phaseFromReconciliationState, type DeploymentPhase } from '../api/deployment-phase.js';
import type { FlinkDeploymentSpec } from '../api/flink-deployment-spec.js';
import { RECONCILIATION_STATES, type ReconciliationState } from '../api/flink-deployment-status.js';
import { canonicalJson, sameValue } from '../api/canonical-json.js';
import { INTERNAL_STATE_FORMAT_VERSION, type AnyInternalState, type InternalState, type SavepointRecord } from '../api/internal-state.js';
import { formatFencingToken, LEADER_ANNOTATION, storedFencingToken } from '../runtime/fencing-token.js';
import { OPERATOR_WRITER } from './operator-version.js';
import { CorruptStateError, ForeignStateError, MisplacedStateError, StateTooLargeError } from './state-errors.js';
import { FLINK_DEPLOYMENT_STATE, type StateKind, type StateOwner } from './state-kinds.js';

export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const COMPONENT_LABEL = 'app.kubernetes.io/component';
export { DEPLOYMENT_LABEL } from './state-kinds.js';
export const MANAGED_BY_VALUE = 'flink-operator';
export const COMPONENT_VALUE = 'operator-state';
export const WRITTEN_BY_ANNOTATION = 'flink-operator.io/written-by';
/** The digest of the content (`data` + `binaryData`) the operator wrote: content without its digest was written by someone else (foreign-state-write.ts). */
export const STATE_DIGEST_ANNOTATION = 'flink-operator.io/state-digest';
/** Label selector matching every state ConfigMap (for the informer). */
export const STATE_CONFIGMAP_SELECTOR = `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE},${COMPONENT_LABEL}=${COMPONENT_VALUE}`;

export const DEFAULT_COMPRESS_THRESHOLD_BYTES = 256 * 1024;
export const DEFAULT_MAX_TOTAL_BYTES = 1_000_000;

/** The data keys, in the order they are written. */
export const STATE_KEYS = [
  'formatVersion',
  'revision',
  'deployment',
  'deploymentUid',
  'phase',
  'reconciliationTimestamp',
  'lastReconciledGeneration',
  'lastReconciledSpec',
  'lastStableGeneration',
  'lastStableSpec',
  'lastStableFirstDeployment',
  'firstDeployment',
  'pendingOperation',
  'deployedJobId',
  'deployedFrom',
  'savepointHistory',
  'lastPeriodicSavepointTimestamp',
  'lastPeriodicCheckpointTimestamp',
  'lastCheckpoint',
  'takenSnapshots',
  'failedUpgrade',
] as const;
export type StateKey = (typeof STATE_KEYS)[number];

/** The keys naming the owner of a session job's state (in place of `deployment` / `deploymentUid`). */
export const SESSION_JOB_OWNER_KEYS = ['sessionJob', 'sessionJobUid'] as const;

/** The two keys naming whose state it is (`namespace/name`, uid), by kind. */
function ownerKeys(kind: StateKind): readonly [string, string] {
  return kind === FLINK_DEPLOYMENT_STATE ? ['deployment', 'deploymentUid'] : SESSION_JOB_OWNER_KEYS;
}

/** The data keys of a kind, in the order they are written. */
function keyOrder(kind: StateKind): readonly string[] {
  const [nameKey, uidKey] = ownerKeys(kind);
  return STATE_KEYS.map((key) => (key === 'deployment' ? nameKey : key === 'deploymentUid' ? uidKey : key));
}

/** InternalState fields stored together under `pendingOperation`. */
const PENDING_FIELDS = [
  'upgradeSavepointPath',
  'jobIdToSubmit',
  'replaceJobManagerUid',
  'pendingSavepoint',
  'pendingCheckpoint',
  'snapshotResourceWrites',
  'inPlaceScaling',
] as const;

export interface EncodeOptions {
  /** The owner (a FlinkDeployment, or a FlinkSessionJob with `kind`); its uid goes into the controller ownerReference. */
  readonly deployment: StateOwner;
  /** Whose state it is; FlinkDeployment's by default. */
  readonly kind?: StateKind;
  /** The object being replaced (its resourceVersion locks the write; its extra labels/annotations are kept). */
  readonly existing?: V1ConfigMap;
  readonly compressThresholdBytes?: number;
  readonly maxTotalBytes?: number;
}

export interface EncodeResult<State extends AnyInternalState = InternalState> {
  readonly configMap: V1ConfigMap;
  /** The state as encoded (savepointHistory possibly trimmed). */
  readonly state: State;
  /** How many records were trimmed from the history (`trimmedRecords.length`). */
  readonly trimmedSavepoints: number;
  /** The records trimmed from the history for size, oldest first: their savepoints are no longer remembered. */
  readonly trimmedRecords: SavepointRecord[];
  readonly compressedKeys: readonly string[];
  readonly totalBytes: number;
  /** What this call did, deterministic (tests and bench/state-encode-cost.ts read it). */
  readonly work: EncodeWork;
}

export interface EncodeWork {
  /** YAML serializations of the savepoint history (1: every candidate trim is a slice of it). */
  readonly historySerializations: number;
  /** gzip calls, for every key (the history's trim search included). */
  readonly gzipCalls: number;
  /** Bytes those gzip calls read. */
  readonly gzippedBytes: number;
}

/** The entries of every key but savepointHistory, in key order; the owner keys (`deployment`/`deploymentUid` for a FlinkDeployment) name whose state it is. */
function encodeEntries(state: AnyInternalState, deployment: StateOwner, kind: StateKind): Map<string, string> {
  const entries = new Map<string, string>();
  const [nameKey, uidKey] = ownerKeys(kind);
  const put = (key: StateKey | (typeof SESSION_JOB_OWNER_KEYS)[number], value: string | undefined) => {
    if (value !== undefined) entries.set(key, value);
  };
  const num = (value: number | undefined) => (value === undefined ? undefined : String(value));
  put('formatVersion', String(state.formatVersion));
  put('revision', String(state.revision));
  put(nameKey as StateKey, `${deployment.metadata.namespace ?? ''}/${deployment.metadata.name ?? ''}`);
  put(uidKey as StateKey, deployment.metadata.uid);
  put('phase', state.phase);
  put('reconciliationTimestamp', state.reconciliationTimestamp);
  put('lastReconciledGeneration', num(state.lastReconciledGeneration));
  put('lastReconciledSpec', state.lastReconciledSpec === undefined ? undefined : yaml(state.lastReconciledSpec));
  put('lastStableGeneration', num(state.lastStableGeneration));
  put('lastStableSpec', state.lastStableSpec === undefined ? undefined : yaml(state.lastStableSpec));
  const lastStableFirstDeployment = (state as { lastStableFirstDeployment?: boolean }).lastStableFirstDeployment;
  put('lastStableFirstDeployment', lastStableFirstDeployment === undefined ? undefined : String(lastStableFirstDeployment));
  put('firstDeployment', state.firstDeployment === undefined ? undefined : String(state.firstDeployment));
  const pending: Record<string, unknown> = {};
  for (const field of PENDING_FIELDS) if (state[field] !== undefined) pending[field] = state[field];
  put('pendingOperation', Object.keys(pending).length > 0 ? yaml(pending) : undefined);
  put('deployedJobId', state.deployedJobId);
  put('deployedFrom', state.deployedFrom);
  put('lastPeriodicSavepointTimestamp', num(state.lastPeriodicSavepointTimestamp));
  put('lastPeriodicCheckpointTimestamp', num(state.lastPeriodicCheckpointTimestamp));
  put('lastCheckpoint', state.lastCheckpoint === undefined ? undefined : yaml(state.lastCheckpoint));
  put('takenSnapshots', state.takenSnapshots === undefined ? undefined : yaml(state.takenSnapshots));
  put('failedUpgrade', state.failedUpgrade === undefined ? undefined : yaml(state.failedUpgrade));
  return entries;
}

/** The controller ownerReference a state ConfigMap carries. */
export function stateOwnerReference(deployment: StateOwner, kind: StateKind = FLINK_DEPLOYMENT_STATE): V1OwnerReference {
  const { name, uid } = deployment.metadata;
  if (!name || !uid) throw new Error(`a ${kind.ownerKind} without name or uid cannot own operator state`);
  return { apiVersion: `${FLINK_GROUP}/${API_VERSION_V1}`, kind: kind.ownerKind, name, uid, controller: true, blockOwnerDeletion: true };
}

/** Encodes `state` as the ConfigMap for `options.deployment`; throws StateTooLargeError. */
export function encodeStateConfigMap<State extends AnyInternalState>(state: State, options: EncodeOptions): EncodeResult<State> {
  const threshold = options.compressThresholdBytes ?? DEFAULT_COMPRESS_THRESHOLD_BYTES;
  const max = options.maxTotalBytes ?? DEFAULT_MAX_TOTAL_BYTES;
  const kind = options.kind ?? FLINK_DEPLOYMENT_STATE;
  const deploymentName = options.deployment.metadata.name ?? '';
  const name = kind.configMapName(deploymentName);
  const work: WorkCounter = { historySerializations: 0, gzipCalls: 0, gzippedBytes: 0 };
  const rest = new Map<string, PlacedValue>();
  for (const [key, value] of encodeEntries(state, options.deployment, kind)) rest.set(key, placeValue(key, value, threshold, work));
  let restBytes = 0;
  for (const value of rest.values()) restBytes += value.size;
  const candidates = new HistoryCandidates(state.savepointHistory, threshold, work);
  const drop = recordsToDrop(candidates, max - restBytes);
  // in STATE_KEYS order, the history in its place (all of it dropped when nothing fits: the error's sizes)
  const values: PlacedValue[] = [];
  for (const key of keyOrder(kind)) {
    const value = key === HISTORY_KEY ? candidates.placed(drop ?? candidates.count) : rest.get(key);
    if (value) values.push(value);
  }
  const sizes: Record<string, number> = {};
  const data: Record<string, string> = {};
  const binaryData: Record<string, string> = {};
  const compressed: string[] = [];
  let total = 0;
  for (const value of values) {
    sizes[value.key] = value.size;
    total += value.size;
    if (value.compressed) {
      binaryData[value.key] = value.value;
      compressed.push(value.key.slice(0, -COMPRESSED_SUFFIX.length));
    } else {
      data[value.key] = value.value;
    }
  }
  if (drop === undefined || total > max) throw new StateTooLargeError(name, total, max, sizes);
  const trimmedRecords = state.savepointHistory.slice(0, drop);
  const encoded: State = drop === 0 ? state : { ...state, savepointHistory: state.savepointHistory.slice(drop) };

  const existing = options.existing?.metadata;
  const annotations: Record<string, string> = { ...(existing?.annotations ?? {}), [WRITTEN_BY_ANNOTATION]: OPERATOR_WRITER };
  if (encoded.lastWriter) annotations[LEADER_ANNOTATION] = formatFencingToken(encoded.lastWriter);
  else delete annotations[LEADER_ANNOTATION];
  annotations[STATE_DIGEST_ANNOTATION] = stateContentDigest({ data, binaryData });
  const configMap: V1ConfigMap = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name,
      namespace: options.deployment.metadata.namespace,
      labels: {
        ...(existing?.labels ?? {}),
        [MANAGED_BY_LABEL]: MANAGED_BY_VALUE,
        [COMPONENT_LABEL]: COMPONENT_VALUE,
        [kind.ownerLabel]: deploymentName,
      },
      annotations,
      ownerReferences: [...(existing?.ownerReferences ?? []).filter((ref) => !ref.controller), stateOwnerReference(options.deployment, kind)],
      ...(existing?.resourceVersion ? { resourceVersion: existing.resourceVersion } : {}),
    },
    data,
    ...(compressed.length > 0 ? { binaryData } : {}),
  };
  return { configMap, state: encoded, trimmedSavepoints: drop, trimmedRecords, compressedKeys: compressed, totalBytes: total, work };
}

/** The digest STATE_DIGEST_ANNOTATION records: sha256 of the canonical JSON of `data` + `binaryData` (base64 normalized, so a re-encoding by the server does not change it). */
export function stateContentDigest(configMap: Pick<V1ConfigMap, 'data' | 'binaryData'>): string {
  const binaryData: Record<string, string> = {};
  for (const [key, value] of Object.entries(configMap.binaryData ?? {})) binaryData[key] = Buffer.from(value, 'base64').toString('base64');
  const content = canonicalJson({ data: configMap.data ?? {}, binaryData });
  return `sha256:${createHash('sha256').update(content, 'utf8').digest('hex')}`;
}

/**
 * Throws ForeignStateError unless the ConfigMap is controlled by this deployment (an ownerReference
 * with controller: true and the deployment's uid). Call before reading or writing it.
 */
export function assertOwnedBy(configMap: V1ConfigMap, deployment: StateOwner, kind: StateKind = FLINK_DEPLOYMENT_STATE): void {
  const name = configMap.metadata?.name ?? '';
  const namespace = configMap.metadata?.namespace ?? deployment.metadata.namespace ?? '';
  const controller = (configMap.metadata?.ownerReferences ?? []).find((ref) => ref.controller === true);
  const deploymentName = deployment.metadata.name ?? '';
  if (!controller) throw new ForeignStateError(name, namespace, deploymentName, 'it has no controller ownerReference', kind.ownerKind);
  if (controller.kind !== kind.ownerKind || controller.uid !== deployment.metadata.uid) {
    throw new ForeignStateError(
      name,
      namespace,
      deploymentName,
      `its controller is ${controller.kind} ${controller.name} uid ${controller.uid}, this ${kind.ownerKind}'s uid is ${deployment.metadata.uid}`,
      kind.ownerKind,
    );
  }
}

/**
 * The content names the FlinkDeployment it was written for (`deploymentUid`, with `deployment` =
 * namespace/name for people): content copied from another deployment's ConfigMap is refused
 * (MisplacedStateError). A state without the key (written before it existed) is accepted.
 */
export function assertStateBelongsTo(configMap: V1ConfigMap, deployment: StateOwner, kind: StateKind = FLINK_DEPLOYMENT_STATE): void {
  const [nameKey, uidKey] = ownerKeys(kind);
  const uid = configMap.data?.[uidKey];
  if (uid === undefined || uid === deployment.metadata.uid) return;
  const owner = configMap.data?.[nameKey] ?? `another ${kind.ownerKind}`;
  throw new MisplacedStateError(
    configMap.metadata?.name ?? '',
    configMap.metadata?.namespace ?? '',
    deployment.metadata.name ?? '',
    `${owner} (uid ${uid})`,
    kind.ownerKind,
  );
}

function readValue(configMap: V1ConfigMap, key: StateKey): string | undefined {
  const name = configMap.metadata?.name ?? '';
  const namespace = configMap.metadata?.namespace ?? '';
  const plain = configMap.data?.[key];
  const packed = configMap.binaryData?.[key + COMPRESSED_SUFFIX];
  if (plain !== undefined && packed !== undefined) {
    throw new CorruptStateError(name, namespace, key, `both data["${key}"] and binaryData["${key}${COMPRESSED_SUFFIX}"] are present`);
  }
  if (packed === undefined) return plain;
  try {
    return gunzipSync(Buffer.from(packed, 'base64')).toString('utf8');
  } catch (error) {
    throw new CorruptStateError(name, namespace, key, `binaryData["${key}${COMPRESSED_SUFFIX}"] is not gzip+base64 (${(error as Error).message})`);
  }
}

/** Decodes and validates the state in a ConfigMap (a FlinkDeployment's, or `kind`'s); throws CorruptStateError naming the bad key. */
export function decodeStateConfigMap(configMap: V1ConfigMap): InternalState;
export function decodeStateConfigMap<State extends AnyInternalState>(configMap: V1ConfigMap, kind: StateKind<State>): State;
export function decodeStateConfigMap(configMap: V1ConfigMap, kind: StateKind = FLINK_DEPLOYMENT_STATE): AnyInternalState {
  const name = configMap.metadata?.name ?? '';
  const namespace = configMap.metadata?.namespace ?? '';
  const corrupt = (key: string, detail: string) => new CorruptStateError(name, namespace, key, detail);
  const raw = new Map<StateKey, string>();
  for (const key of STATE_KEYS) {
    const value = readValue(configMap, key);
    if (value !== undefined) raw.set(key, value);
  }
  const integer = (key: StateKey): number | undefined => {
    const value = raw.get(key);
    if (value === undefined) return undefined;
    const trimmed = value.trim();
    if (!/^-?(0|[1-9][0-9]*)$/.test(trimmed) || !Number.isSafeInteger(Number(trimmed)))
      throw corrupt(key, `expected an integer, found ${JSON.stringify(value.slice(0, 40))}`);
    return Number(trimmed);
  };
  const parsed = (key: StateKey): unknown => {
    const value = raw.get(key);
    if (value === undefined) return undefined;
    try {
      return YAML.parse(value) as unknown;
    } catch (error) {
      throw corrupt(key, `not valid YAML (${(error as Error).message.split('\n')[0]})`);
    }
  };
  const text = (key: StateKey): string | undefined => raw.get(key);

  const formatVersion = integer('formatVersion');
  if (formatVersion === undefined) throw corrupt('formatVersion', 'missing');
  if (formatVersion > INTERNAL_STATE_FORMAT_VERSION) {
    throw corrupt(
      'formatVersion',
      `format ${formatVersion} was written by a newer operator; this one reads up to ${INTERNAL_STATE_FORMAT_VERSION} (upgrade the operator)`,
    );
  }
  const revision = integer('revision');
  if (revision === undefined) throw corrupt('revision', 'missing');
  const boolean = (key: StateKey): boolean | undefined => {
    const value = raw.get(key);
    if (value === undefined) return undefined;
    if (value !== 'true' && value !== 'false') throw corrupt(key, `expected true or false, found ${JSON.stringify(value.slice(0, 40))}`);
    return value === 'true';
  };
  const pending = parsed('pendingOperation');
  if (pending !== undefined && pending !== null && (typeof pending !== 'object' || Array.isArray(pending))) {
    throw corrupt('pendingOperation', 'expected a mapping');
  }
  const pendingFields = (pending ?? {}) as Record<string, unknown>;
  for (const field of Object.keys(pendingFields)) {
    if (!(PENDING_FIELDS as readonly string[]).includes(field)) throw corrupt('pendingOperation', `unknown field "${field}"`);
  }
  const history = parsed('savepointHistory');

  const candidate: Record<string, unknown> = {
    formatVersion: INTERNAL_STATE_FORMAT_VERSION,
    revision,
    reconciliationTimestamp: text('reconciliationTimestamp'),
    lastReconciledGeneration: integer('lastReconciledGeneration'),
    lastReconciledSpec: parsed('lastReconciledSpec'),
    lastStableGeneration: integer('lastStableGeneration'),
    lastStableSpec: parsed('lastStableSpec'),
    lastStableFirstDeployment: boolean('lastStableFirstDeployment'),
    firstDeployment: boolean('firstDeployment'),
    ...pendingFields,
    deployedJobId: text('deployedJobId'),
    deployedFrom: text('deployedFrom'),
    savepointHistory: history === undefined || history === null ? [] : history,
    lastPeriodicSavepointTimestamp: integer('lastPeriodicSavepointTimestamp'),
    lastPeriodicCheckpointTimestamp: integer('lastPeriodicCheckpointTimestamp'),
    lastCheckpoint: parsed('lastCheckpoint'),
    takenSnapshots: parsed('takenSnapshots'),
    failedUpgrade: parsed('failedUpgrade'),
    lastWriter: storedFencingToken(configMap.metadata ?? undefined),
  };
  for (const key of Object.keys(candidate)) if (candidate[key] === undefined) delete candidate[key];
  candidate.phase = formatVersion >= 2 ? text('phase') : phaseOfFormat1(readValue(configMap, FORMAT_1_STATE_KEY as StateKey), candidate, corrupt);
  if (candidate.phase === undefined) throw corrupt(formatVersion >= 2 ? 'phase' : FORMAT_1_STATE_KEY, 'missing');

  const errors = kind.validate(candidate);
  if (errors.length > 0) {
    const first = errors[0];
    throw corrupt(keyOfField(first.field), `${first.field}: ${first.message}${errors.length > 1 ? ` (and ${errors.length - 1} more)` : ''}`);
  }
  return candidate as AnyInternalState;
}

/** Format 1 kept the Apache operator's reconciliation state instead of the phase. */
const FORMAT_1_STATE_KEY = 'reconciliationState';

/** The phase of a format-1 state, from its reconciliationState and the fields that tell UPGRADING's cases apart. */
function phaseOfFormat1(
  value: string | undefined,
  fields: Record<string, unknown>,
  corrupt: (key: string, detail: string) => Error,
): DeploymentPhase | undefined {
  if (value === undefined) return undefined;
  if (!(RECONCILIATION_STATES as readonly string[]).includes(value))
    throw corrupt(FORMAT_1_STATE_KEY, `${JSON.stringify(value)} is not one of ${RECONCILIATION_STATES.join(', ')}`);
  const spec = (key: string) => fields[key] as FlinkDeploymentSpec | undefined;
  return phaseFromReconciliationState(value as ReconciliationState, {
    lastReconciledSpec: spec('lastReconciledSpec'),
    lastStableSpec: spec('lastStableSpec'),
    jobIdToSubmit: fields.jobIdToSubmit as string | undefined,
    deployedJobId: fields.deployedJobId as string | undefined,
    pendingSavepoint: fields.pendingSavepoint as { stopJob: boolean } | undefined,
    reconciledIsStable: spec('lastStableSpec') !== undefined && sameValue(spec('lastStableSpec'), spec('lastReconciledSpec')),
  });
}

/** The ConfigMap key an InternalState field path (`/a/b`, `a.b`, `a[0]`) is stored under. */
export function keyOfField(field: string): string {
  const top = field.replace(/^[./]+/, '').split(/[./[]/)[0] ?? '';
  if ((PENDING_FIELDS as readonly string[]).includes(top)) return 'pendingOperation';
  if (top === 'lastWriter') return LEADER_ANNOTATION;
  return top || 'data';
}
