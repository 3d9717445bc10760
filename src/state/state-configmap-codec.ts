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
 *    oldest first, as little as needed (the returned state shows the trim);
 * 3. if it is still over, StateTooLargeError naming the sizes: never a silently truncated spec.
 *
 * Guarantees: `decodeStateConfigMap(encodeStateConfigMap(s).configMap)` deep-equals the returned
 * `state`; decode never guesses: any unparsable or schema-invalid key is a CorruptStateError naming it.
 * Assumptions: only this operator writes the keys it owns; other labels/annotations are kept.
 * Caveats: keys unknown to this format version are ignored on read and dropped on the next write.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import type { V1ConfigMap, V1OwnerReference } from '@kubernetes/client-node';
import YAML from 'yaml';
import { FLINK_DEPLOYMENT_KIND, FLINK_GROUP, API_VERSION_V1, type FlinkDeploymentV1 } from '../api/flink-deployment.js';
import { INTERNAL_STATE_FORMAT_VERSION, type InternalState } from '../api/internal-state.js';
import { validateInternalStateSchema } from '../api/schema-validator.js';
import { formatFencingToken, LEADER_ANNOTATION, storedFencingToken } from '../runtime/fencing-token.js';
import { OPERATOR_WRITER } from './operator-version.js';
import { CorruptStateError, ForeignStateError, StateTooLargeError } from './state-errors.js';
import { stateConfigMapName } from './state-store.js';

export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const COMPONENT_LABEL = 'app.kubernetes.io/component';
export const DEPLOYMENT_LABEL = 'flink.apache.org/deployment';
export const MANAGED_BY_VALUE = 'flink-operator';
export const COMPONENT_VALUE = 'operator-state';
export const WRITTEN_BY_ANNOTATION = 'flink-operator.io/written-by';
/** Label selector matching every state ConfigMap (for the informer). */
export const STATE_CONFIGMAP_SELECTOR = `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE},${COMPONENT_LABEL}=${COMPONENT_VALUE}`;

export const DEFAULT_COMPRESS_THRESHOLD_BYTES = 256 * 1024;
export const DEFAULT_MAX_TOTAL_BYTES = 1_000_000;
const COMPRESSED_SUFFIX = '.gz';

/** The data keys, in the order they are written. */
export const STATE_KEYS = [
  'formatVersion',
  'revision',
  'reconciliationState',
  'reconciliationTimestamp',
  'lastReconciledGeneration',
  'lastReconciledSpec',
  'lastStableGeneration',
  'lastStableSpec',
  'lastStableFirstDeployment',
  'firstDeployment',
  'pendingOperation',
  'deployedJobId',
  'savepointHistory',
  'lastPeriodicSavepointTimestamp',
  'lastPeriodicCheckpointTimestamp',
] as const;
export type StateKey = (typeof STATE_KEYS)[number];

/** InternalState fields stored together under `pendingOperation`. */
const PENDING_FIELDS = ['upgradeSavepointPath', 'jobIdToSubmit', 'pendingSavepoint', 'pendingCheckpoint'] as const;

export interface EncodeOptions {
  /** The owner; its uid goes into the controller ownerReference. */
  readonly deployment: FlinkDeploymentV1;
  /** The object being replaced (its resourceVersion locks the write; its extra labels/annotations are kept). */
  readonly existing?: V1ConfigMap;
  readonly compressThresholdBytes?: number;
  readonly maxTotalBytes?: number;
}

export interface EncodeResult {
  readonly configMap: V1ConfigMap;
  /** The state as encoded (savepointHistory possibly trimmed). */
  readonly state: InternalState;
  readonly trimmedSavepoints: number;
  readonly compressedKeys: readonly string[];
  readonly totalBytes: number;
}

function yaml(value: unknown): string {
  return YAML.stringify(value, { lineWidth: 0 });
}

function encodeEntries(state: InternalState): Map<StateKey, string> {
  const entries = new Map<StateKey, string>();
  const put = (key: StateKey, value: string | undefined) => {
    if (value !== undefined) entries.set(key, value);
  };
  const num = (value: number | undefined) => (value === undefined ? undefined : String(value));
  put('formatVersion', String(state.formatVersion));
  put('revision', String(state.revision));
  put('reconciliationState', state.reconciliationState);
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
  put('savepointHistory', yaml(state.savepointHistory));
  put('lastPeriodicSavepointTimestamp', num(state.lastPeriodicSavepointTimestamp));
  put('lastPeriodicCheckpointTimestamp', num(state.lastPeriodicCheckpointTimestamp));
  return entries;
}

interface Placed {
  data: Record<string, string>;
  binaryData: Record<string, string>;
  sizes: Record<string, number>;
  total: number;
  compressed: string[];
}

function place(entries: Map<StateKey, string>, threshold: number): Placed {
  const placed: Placed = { data: {}, binaryData: {}, sizes: {}, total: 0, compressed: [] };
  for (const [key, value] of entries) {
    const bytes = Buffer.byteLength(value, 'utf8');
    if (bytes > threshold) {
      const packed = gzipSync(Buffer.from(value, 'utf8')).toString('base64');
      const packedKey = key + COMPRESSED_SUFFIX;
      placed.binaryData[packedKey] = packed;
      placed.sizes[packedKey] = packedKey.length + packed.length;
      placed.compressed.push(key);
    } else {
      placed.data[key] = value;
      placed.sizes[key] = key.length + bytes;
    }
  }
  placed.total = Object.values(placed.sizes).reduce((a, b) => a + b, 0);
  return placed;
}

/** The controller ownerReference a state ConfigMap carries. */
export function stateOwnerReference(deployment: FlinkDeploymentV1): V1OwnerReference {
  const { name, uid } = deployment.metadata;
  if (!name || !uid) throw new Error('a FlinkDeployment without name or uid cannot own operator state');
  return { apiVersion: `${FLINK_GROUP}/${API_VERSION_V1}`, kind: FLINK_DEPLOYMENT_KIND, name, uid, controller: true, blockOwnerDeletion: true };
}

/** Encodes `state` as the ConfigMap for `options.deployment`; throws StateTooLargeError. */
export function encodeStateConfigMap(state: InternalState, options: EncodeOptions): EncodeResult {
  const threshold = options.compressThresholdBytes ?? DEFAULT_COMPRESS_THRESHOLD_BYTES;
  const max = options.maxTotalBytes ?? DEFAULT_MAX_TOTAL_BYTES;
  const deploymentName = options.deployment.metadata.name ?? '';
  const name = stateConfigMapName(deploymentName);
  let encoded = state;
  let placed = place(encodeEntries(state), threshold);
  let trimmed = 0;
  if (placed.total > max && state.savepointHistory.length > 0) {
    // smallest number of oldest entries to drop so that it fits (binary search; size grows with the history)
    const withHistory = (drop: number): InternalState => ({ ...state, savepointHistory: state.savepointHistory.slice(drop) });
    let lo = 1;
    let hi = state.savepointHistory.length;
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      if (place(encodeEntries(withHistory(mid)), threshold).total <= max) hi = mid;
      else lo = mid + 1;
    }
    trimmed = lo;
    encoded = withHistory(lo);
    placed = place(encodeEntries(encoded), threshold);
  }
  if (placed.total > max) throw new StateTooLargeError(name, placed.total, max, placed.sizes);

  const existing = options.existing?.metadata;
  const annotations: Record<string, string> = { ...(existing?.annotations ?? {}), [WRITTEN_BY_ANNOTATION]: OPERATOR_WRITER };
  if (encoded.lastWriter) annotations[LEADER_ANNOTATION] = formatFencingToken(encoded.lastWriter);
  else delete annotations[LEADER_ANNOTATION];
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
        [DEPLOYMENT_LABEL]: deploymentName,
      },
      annotations,
      ownerReferences: [
        ...(existing?.ownerReferences ?? []).filter((ref) => !ref.controller),
        stateOwnerReference(options.deployment),
      ],
      ...(existing?.resourceVersion ? { resourceVersion: existing.resourceVersion } : {}),
    },
    data: placed.data,
    ...(placed.compressed.length > 0 ? { binaryData: placed.binaryData } : {}),
  };
  return { configMap, state: encoded, trimmedSavepoints: trimmed, compressedKeys: placed.compressed, totalBytes: placed.total };
}

/**
 * Throws ForeignStateError unless the ConfigMap is controlled by this deployment (an ownerReference
 * with controller: true and the deployment's uid). Call before reading or writing it.
 */
export function assertOwnedBy(configMap: V1ConfigMap, deployment: FlinkDeploymentV1): void {
  const name = configMap.metadata?.name ?? '';
  const namespace = configMap.metadata?.namespace ?? deployment.metadata.namespace ?? '';
  const controller = (configMap.metadata?.ownerReferences ?? []).find((ref) => ref.controller === true);
  const deploymentName = deployment.metadata.name ?? '';
  if (!controller) throw new ForeignStateError(name, namespace, deploymentName, 'it has no controller ownerReference');
  if (controller.kind !== FLINK_DEPLOYMENT_KIND || controller.uid !== deployment.metadata.uid) {
    throw new ForeignStateError(name, namespace, deploymentName, `its controller is ${controller.kind} ${controller.name} uid ${controller.uid}, this deployment's uid is ${deployment.metadata.uid}`);
  }
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

/** Decodes and validates the state in a ConfigMap; throws CorruptStateError naming the bad key. */
export function decodeStateConfigMap(configMap: V1ConfigMap): InternalState {
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
    if (!/^-?(0|[1-9][0-9]*)$/.test(trimmed) || !Number.isSafeInteger(Number(trimmed))) throw corrupt(key, `expected an integer, found ${JSON.stringify(value.slice(0, 40))}`);
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
    throw corrupt('formatVersion', `format ${formatVersion} was written by a newer operator; this one reads up to ${INTERNAL_STATE_FORMAT_VERSION} (upgrade the operator)`);
  }
  const revision = integer('revision');
  if (revision === undefined) throw corrupt('revision', 'missing');
  const reconciliationState = text('reconciliationState');
  if (reconciliationState === undefined) throw corrupt('reconciliationState', 'missing');
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
    formatVersion,
    revision,
    reconciliationState,
    reconciliationTimestamp: text('reconciliationTimestamp'),
    lastReconciledGeneration: integer('lastReconciledGeneration'),
    lastReconciledSpec: parsed('lastReconciledSpec'),
    lastStableGeneration: integer('lastStableGeneration'),
    lastStableSpec: parsed('lastStableSpec'),
    lastStableFirstDeployment: boolean('lastStableFirstDeployment'),
    firstDeployment: boolean('firstDeployment'),
    ...pendingFields,
    deployedJobId: text('deployedJobId'),
    savepointHistory: history === undefined || history === null ? [] : history,
    lastPeriodicSavepointTimestamp: integer('lastPeriodicSavepointTimestamp'),
    lastPeriodicCheckpointTimestamp: integer('lastPeriodicCheckpointTimestamp'),
    lastWriter: storedFencingToken(configMap.metadata ?? undefined),
  };
  for (const key of Object.keys(candidate)) if (candidate[key] === undefined) delete candidate[key];

  const errors = validateInternalStateSchema(candidate);
  if (errors.length > 0) {
    const first = errors[0]!;
    throw corrupt(keyOfField(first.field), `${first.field}: ${first.message}${errors.length > 1 ? ` (and ${errors.length - 1} more)` : ''}`);
  }
  return candidate as InternalState;
}

/** The ConfigMap key an InternalState field path (`/a/b`, `a.b`, `a[0]`) is stored under. */
function keyOfField(field: string): string {
  const top = field.replace(/^[./]+/, '').split(/[./[]/)[0] ?? '';
  if ((PENDING_FIELDS as readonly string[]).includes(top)) return 'pendingOperation';
  if (top === 'lastWriter') return LEADER_ANNOTATION;
  return top || 'data';
}
