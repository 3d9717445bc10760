/**
 * The metav1.Time and metav1.MicroTime fields of the kinds the emulator serves, and their
 * re-encoding on decode: the real server decodes a request body into the kind's Go struct, so
 * every such field is parsed by its UnmarshalJSON and written back by its MarshalJSON
 * (go-time-format.ts): `2024-05-01T10:00:00+02:00` is stored and returned as
 * `2024-05-01T08:00:00Z`, a Lease's `renewTime` keeps its six fractional digits.
 *
 * Field paths come from the Go types of k8s.io/api 1.32 (core/v1, apps/v1, coordination/v1) and
 * apiextensions/v1; ObjectMeta (creationTimestamp, deletionTimestamp, managedFields[].time) is part
 * of every kind. Pointer fields (`*metav1.Time`) given as null are dropped (nil, omitempty); value
 * fields keep null (Go's zero time is written as null).
 *
 * Guarantees:
 * - built-in kinds: a malformed time fails the decode. A request body answers 400 BadRequest
 *   `<Kind> in version "<v>" cannot be handled as a <Kind>: parsing time …` (handlers/rest.go
 *   transformDecodeError); a patch whose result does not decode answers 422 with the field `patch`
 *   (handlers/patch.go applyPatchToCurrentObject: `Invalid value: "<patched JSON>": parsing time …`).
 * - custom resources: only metadata is typed (apiextensions' objectmeta.GetObjectMetaWithOptions
 *   with DropMalformedFields): metadata times are re-encoded and a malformed one is dropped; every
 *   other field, `format: date-time` ones included, is JSON the server does not retype.
 * Caveats: absent value-type time fields are not added as null (the real encoder writes e.g.
 * `lastProbeTime: null` in every Pod condition and `creationTimestamp: null` in a pod template);
 * the patched JSON in a patch error is the emulator's key order; strategic-merge and apply patches
 * render that value differently on the real server (a Go map / a typed value).
 */
import { badRequest, invalid, invalidValue } from './errors.js';
import { formatGoTime, GoTimeParseError, parseGoTime, type GoTimeLayout } from './go-time-format.js';
import { isJsonObject, type JsonObject, type JsonValue } from './json-clone.js';
import type { ResourceType } from './resource-types.js';

interface TimeField {
  /** dotted path; `name[]` steps into every item of the list `name` */
  path: string[];
  layout: GoTimeLayout;
  /** a `*metav1.Time`/`*metav1.MicroTime` (null → field dropped) */
  pointer: boolean;
}

function field(path: string, layout: GoTimeLayout, pointer: boolean): TimeField {
  return { path: path.split('.'), layout, pointer };
}
const time = (path: string) => field(path, 'Time', false);
const timePointer = (path: string) => field(path, 'Time', true);
const microTime = (path: string) => field(path, 'MicroTime', false);
const microTimePointer = (path: string) => field(path, 'MicroTime', true);

/** ObjectMeta at `prefix` (e.g. `spec.template.metadata`). */
function objectMeta(prefix: string): TimeField[] {
  return [time(`${prefix}.creationTimestamp`), timePointer(`${prefix}.deletionTimestamp`), timePointer(`${prefix}.managedFields[].time`)];
}

function containerStatuses(list: string): TimeField[] {
  const states = ['state', 'lastState'];
  return states.flatMap((s) => [
    time(`status.${list}[].${s}.running.startedAt`),
    time(`status.${list}[].${s}.terminated.startedAt`),
    time(`status.${list}[].${s}.terminated.finishedAt`),
  ]);
}

const METADATA = objectMeta('metadata');

/** The time fields outside ObjectMeta, by group resource (as the store keys them). */
const KIND_TIME_FIELDS: Record<string, TimeField[]> = {
  '/namespaces': [time('status.conditions[].lastTransitionTime')],
  '/services': [time('status.conditions[].lastTransitionTime')],
  '/pods': [
    timePointer('status.startTime'),
    time('status.conditions[].lastProbeTime'),
    time('status.conditions[].lastTransitionTime'),
    ...containerStatuses('containerStatuses'),
    ...containerStatuses('initContainerStatuses'),
    ...containerStatuses('ephemeralContainerStatuses'),
  ],
  '/events': [time('firstTimestamp'), time('lastTimestamp'), microTime('eventTime'), microTime('series.lastObservedTime')],
  'apps/deployments': [...objectMeta('spec.template.metadata'), time('status.conditions[].lastUpdateTime'), time('status.conditions[].lastTransitionTime')],
  'apps/replicasets': [...objectMeta('spec.template.metadata'), time('status.conditions[].lastTransitionTime')],
  'coordination.k8s.io/leases': [microTimePointer('spec.acquireTime'), microTimePointer('spec.renewTime')],
  'apiextensions.k8s.io/customresourcedefinitions': [time('status.conditions[].lastTransitionTime')],
};

/** What encoding/json reports for a non-string JSON value decoded into a Go string. */
function jsonKindOf(v: JsonValue): string {
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'object' && v !== null) return 'object';
  return typeof v === 'boolean' ? 'bool' : 'number';
}

/**
 * Re-encodings already computed, by layout and text: every write re-encodes the same few times
 * again (creationTimestamp, the managedFields times), and parse + format is a pure function of
 * them. Only successes are kept; cleared when full.
 */
const reencoded: Record<GoTimeLayout, Map<string, string | null>> = { Time: new Map(), MicroTime: new Map() };
const REENCODED_MAX = 10_000;

/** The value metav1.Time/MicroTime writes back for `value`, or Go's decode error text. */
export function reencodeTime(value: JsonValue, layout: GoTimeLayout): { value: string | null } | { error: string } {
  if (value === null) return { value: null };
  if (typeof value !== 'string') return { error: `json: cannot unmarshal ${jsonKindOf(value)} into Go value of type string` };
  const known = reencoded[layout];
  const cached = known.get(value);
  if (cached !== undefined) return { value: cached };
  try {
    const text = formatGoTime(parseGoTime(value, layout), layout);
    if (known.size >= REENCODED_MAX) known.clear();
    known.set(value, text);
    return { value: text };
  } catch (e) {
    if (e instanceof GoTimeParseError) return { error: e.message };
    throw e;
  }
}

/** Calls `visit(parent, key, value)` for every place `path` names inside `node`. */
function forEachPlace(node: JsonValue | undefined, path: string[], visit: (parent: JsonObject, key: string, value: JsonValue) => void): void {
  if (!isJsonObject(node) || path.length === 0) return;
  const [step, ...rest] = path;
  if (rest.length === 0) {
    const value = node[step];
    if (value !== undefined) visit(node, step, value);
    return;
  }
  if (step.endsWith('[]')) {
    const list = node[step.slice(0, -2)];
    if (Array.isArray(list)) for (const item of list) forEachPlace(item, rest, visit);
  } else forEachPlace(node[step], rest, visit);
}

/**
 * Re-encodes the time fields of a decoded request object in place. `source` tells how a decode
 * failure is answered: 'body' (create/update: 400) or 'patch' (the result of a patch: 422).
 */
export function reencodeTimeFields(groupResource: string, type: ResourceType, obj: JsonObject, source: 'body' | 'patch'): void {
  if (type.crd) {
    for (const f of METADATA) {
      forEachPlace(obj, f.path, (parent, key, value) => {
        const r = reencodeTime(value, f.layout);
        // a malformed ObjectMeta field of a custom resource is dropped whole (managedFields: the list)
        if ('error' in r) delete asMetadata(obj)[f.path[1].replace(/\[\]$/, '')];
        else if (r.value === null && f.pointer) delete parent[key];
        else parent[key] = r.value;
      });
    }
    return;
  }
  for (const f of [...METADATA, ...(KIND_TIME_FIELDS[groupResource] ?? [])]) {
    forEachPlace(obj, f.path, (parent, key, value) => {
      const r = reencodeTime(value, f.layout);
      if ('error' in r) {
        if (source === 'patch') throw invalid('', '', '', [invalidValue('patch', JSON.stringify(obj), r.error)]);
        throw badRequest(`${type.kind} in version "${type.version}" cannot be handled as a ${type.kind}: ${r.error}`);
      }
      if (r.value === null && f.pointer) delete parent[key];
      else parent[key] = r.value;
    });
  }
}

function asMetadata(obj: JsonObject): JsonObject {
  return isJsonObject(obj.metadata) ? obj.metadata : {};
}
