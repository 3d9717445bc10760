/**
 * Field ownership on every write: the Update bookkeeping of non-apply writes and server-side
 * apply, as kube-apiserver 1.32's field manager does them (k8s.io/apimachinery
 * pkg/util/managedfields/internal: fieldmanager.go, structuredmerge.go, managedfieldsupdater.go,
 * stripmeta.go, capmanagers.go, lastappliedmanager.go, lastappliedupdater.go, conflict.go; and
 * sigs.k8s.io/structured-merge-diff/v4 merge/update.go).
 *
 * Guarantees:
 * - Update (create, PUT, non-apply PATCH): the writer's entry (manager, Update, apiVersion,
 *   subresource) gains the fields the write added or changed and loses those it removed; every other
 *   entry loses the fields the write changed or removed; the entry's time moves only when it gained
 *   fields; at most 10 Update entries are kept (the oldest merge into `ancient-changes`).
 *   managedFields sent with a main-resource write replace the stored ones (`[]` or `[{}]` resets
 *   them; an empty, absent or undecodable list keeps the stored ones); subresource writes ignore them.
 * - Apply: the configuration merges into the live object; the applier's entry becomes exactly the
 *   configuration's fields; fields of other managers whose value the apply changes are conflicts
 *   (409 with the real Status and message) unless `force`, which takes them over; fields the applier
 *   owned before and no longer applies are removed unless another manager owns them; applying the
 *   same value as another manager shares the field. Manager `kubectl` may take over fields that the
 *   client-side `kubectl.kubernetes.io/last-applied-configuration` still matches (the CSA → SSA
 *   upgrade) and keeps that annotation in step with what it applies.
 * - apiVersion, kind and the server-owned metadata (name, namespace, uid, resourceVersion,
 *   generation, creationTimestamp, managedFields) are never recorded; `status` is never owned through
 *   the main resource of a kind with a status subresource, and only `status` through /status.
 * Caveats: see field-types.ts for where the type knowledge is coarser than the OpenAPI models; an
 *   entry's set is not re-validated against a changed CRD schema (reconcileManagedFieldsWithSchemaChanges).
 */
import { applyConflict, badRequest, type StatusCause } from './errors.js';
import { emptyObjectFor, fieldTypeFor, type FieldType } from './field-types.js';
import {
  capUpdateManagers,
  decodeManagedFields,
  difference,
  encodeManagedFields,
  FieldSet,
  fieldElement,
  intersection,
  managerIdentity,
  memberPaths,
  pathText,
  recursiveDifference,
  setOfPaths,
  union,
  withNamedFieldsAsMembers,
  type ManagedFields,
  type ManagerEntry,
} from './managed-fields.js';
import { apiVersionOf, type ResourceType } from './resource-types.js';
import { compareValues, fieldSetOf, mergeValues, removeFields } from './typed-values.js';
import { cloneJson, isJsonObject, jsonEqual, parseJsonText, type JsonObject, type JsonValue } from './json-clone.js';

export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';
/** the manager whose applies upgrade client-side-apply ownership (lastappliedmanager.go) */
const KUBECTL_APPLY_MANAGER = 'kubectl';

/** What one write is, for its managedFields bookkeeping. */
export interface ManagedWrite {
  type: FieldType;
  /** the request's group/version, e.g. `apps/v1` */
  apiVersion: string;
  /** '' for the main resource, 'status' or 'scale' */
  subresource: string;
  /** the kind has a status subresource (then status is never owned through the main resource) */
  statusSubresource: boolean;
  /** RFC 3339 seconds */
  now: string;
}

/** stripmeta.go: never recorded (a plain, non-recursive difference). */
const STRIPPED = setOfPaths(
  [
    ['apiVersion'],
    ['kind'],
    ['metadata'],
    ...['name', 'namespace', 'creationTimestamp', 'selfLink', 'uid', 'clusterName', 'generation', 'managedFields', 'resourceVersion'].map((f) => [
      'metadata',
      f,
    ]),
  ].map((p) => p.map(fieldElement)),
);
const STATUS = setOfPaths([[fieldElement('status')]]);

/** The manager of a write without `fieldManager`: the User-Agent up to its first `/` (prefixFromUserAgent). */
export function defaultFieldManager(userAgent: string | undefined): string {
  return (userAgent ?? '').split('/')[0];
}

/** the manager of the server's own writes (the initial namespaces), as on a real cluster */
const SERVER_MANAGER = 'kube-apiserver';

/** An empty `fieldManager` counts as unset; `userAgent` undefined: a write the server makes itself, not an HTTP request. */
export function fieldManagerOf(opts: { fieldManager?: string; userAgent?: string }): string {
  if (opts.fieldManager) return opts.fieldManager;
  return opts.userAgent === undefined ? SERVER_MANAGER : defaultFieldManager(opts.userAgent);
}

export function managedWriteFor(type: ResourceType, subresource: string, now: string): ManagedWrite {
  return { type: fieldTypeFor(type), apiVersion: apiVersionOf(type), subresource, statusSubresource: type.statusSubresource, now };
}

/** How a write's managedFields come about: the entries an apply computed, or the Update rule for `subresource`. */
export interface ManagedFieldsPlan {
  applied?: JsonObject[];
  subresource?: string;
}

/** Sets (or clears) next.metadata.managedFields for a write of `next` over `live` (undefined: a create). */
export function recordManagedFields(
  type: ResourceType,
  live: JsonObject | undefined,
  next: JsonObject & { metadata: JsonObject },
  sent: JsonValue | undefined,
  manager: string,
  plan: ManagedFieldsPlan,
  now: string,
): void {
  const entries = plan.applied ?? managedFieldsAfterUpdate(live, emptyObjectFor(type), next, sent, manager, managedWriteFor(type, plan.subresource ?? '', now));
  if (entries.length) next.metadata.managedFields = entries;
  else delete next.metadata.managedFields;
}

/** The object without metadata.managedFields (a shallow copy; the input is not changed). */
export function withoutManagedFields(obj: JsonObject): JsonObject {
  if (!isJsonObject(obj.metadata) || obj.metadata.managedFields === undefined) return obj;
  const { managedFields: _dropped, ...meta } = obj.metadata;
  return { ...obj, metadata: meta };
}

function liveEntries(liveManaged: JsonValue | undefined): ManagedFields {
  try {
    return decodeManagedFields(liveManaged);
  } catch {
    return new Map();
  }
}

/** decodeManagedFields of fieldmanager.go: what the request sent, or the live object's entries. */
function entriesForUpdate(sent: JsonValue | undefined, liveManaged: JsonValue | undefined, subresource: string): ManagedFields {
  if (subresource) return liveEntries(liveManaged);
  if (Array.isArray(sent) && (sent.length === 0 || (sent.length === 1 && isJsonObject(sent[0]) && Object.keys(sent[0]).length === 0))) return new Map();
  // most writes send back the list they read: its decoding is the live list's, which is cached
  if (sent !== undefined && liveManaged !== undefined && jsonEqual(sent, liveManaged)) return liveEntries(liveManaged);
  try {
    const decoded = decodeManagedFields(sent);
    if (decoded.size) return decoded;
  } catch {
    // like the real server: fall back to the live object's entries
  }
  return liveEntries(liveManaged);
}

/** Fields this write may own at all (the strategy's reset fields are filtered out). */
function ownable(set: FieldSet, w: ManagedWrite): FieldSet {
  if (w.subresource === 'status') {
    const out = new FieldSet();
    const status = set.children.get(fieldElement('status'));
    if (status) out.children.set(fieldElement('status'), status);
    return out;
  }
  if (w.subresource === '' && w.statusSubresource) return recursiveDifference(set, STATUS);
  return set;
}

/**
 * managedFields after a non-apply write of `next` over `live` (undefined for a create, which is
 * compared with `empty`). `sent` is the managedFields the request carried.
 */
export function managedFieldsAfterUpdate(
  live: JsonObject | undefined,
  empty: JsonObject,
  next: JsonObject,
  sent: JsonValue | undefined,
  manager: string,
  w: ManagedWrite,
): JsonObject[] {
  const managed = entriesForUpdate(sent, live ? valueOfManagedFields(live) : undefined, w.subresource);
  const cmp = compareValues(withoutManagedFields(live ?? empty), withoutManagedFields(next), w.type);
  const changed = union(cmp.modified, cmp.added);
  for (const [id, e] of managed) {
    const fields = difference(difference(e.fields, changed), cmp.removed);
    if (fields.isEmpty()) managed.delete(id);
    else managed.set(id, { ...e, fields });
  }
  const own = difference(ownable(difference(changed, cmp.removed), w), STRIPPED);
  if (!own.isEmpty()) {
    const id = managerIdentity(manager, 'Update', w.apiVersion, w.subresource);
    const previous = managed.get(id);
    managed.set(id, {
      manager,
      operation: 'Update',
      apiVersion: w.apiVersion,
      subresource: w.subresource,
      time: w.now,
      fields: previous ? union(own, previous.fields) : own,
    });
  }
  capUpdateManagers(managed);
  return encodeManagedFields(managed);
}

function valueOfManagedFields(obj: JsonObject): JsonValue | undefined {
  return isJsonObject(obj.metadata) ? obj.metadata.managedFields : undefined;
}

export interface ApplyResult {
  /** the object after the apply, without managedFields */
  object: JsonObject;
  managedFields: JsonObject[];
}

interface Conflict {
  id: string;
  entry: ManagerEntry;
  fields: FieldSet;
}

/**
 * Server-side apply of `config` by `manager` to `live` (the object as the request's version reads
 * it, with its managedFields; `{}` when it does not exist yet). Throws the 409 Conflict or a 400.
 */
export function serverSideApply(live: JsonObject, config: JsonObject, manager: string, force: boolean, w: ManagedWrite): ApplyResult {
  const patchVersion = typeof config.apiVersion === 'string' ? config.apiVersion : '';
  if (patchVersion !== w.apiVersion) {
    throw badRequest(`Incorrect version specified in apply patch. Specified patch version: ${patchVersion}, expected: ${w.apiVersion}`);
  }
  if (isJsonObject(config.metadata) && config.metadata.managedFields !== undefined) throw badRequest('metadata.managedFields must be nil');
  const managed = liveEntries(valueOfManagedFields(live));
  const liveObj = withoutManagedFields(live);
  let outcome = applyOnce(liveObj, config, managed, manager, force, w);
  if ('conflicts' in outcome && manager === KUBECTL_APPLY_MANAGER) {
    const allowed = fieldsStillMatchingLastApplied(liveObj, w.type);
    if (allowed) {
      const remaining = outcome.conflicts.map((c) => ({ ...c, fields: difference(c.fields, allowed) })).filter((c) => !c.fields.isEmpty());
      outcome = remaining.length ? { conflicts: remaining } : applyOnce(liveObj, config, managed, manager, true, w);
    }
  }
  if ('conflicts' in outcome) throw conflictError(outcome.conflicts);
  // a no-op apply hands back the live object itself: the caller gets a copy it may change
  const object = cloneJson(outcome.object);
  if (manager === KUBECTL_APPLY_MANAGER && lastAppliedOf(liveObj) !== undefined) setLastApplied(object, config);
  return { object, managedFields: encodeManagedFields(outcome.managed) };
}

type Outcome = { object: JsonObject; managed: ManagedFields } | { conflicts: Conflict[] };

function applyOnce(live: JsonObject, config: JsonObject, liveManaged: ManagedFields, manager: string, force: boolean, w: ManagedWrite): Outcome {
  const managed: ManagedFields = new Map(liveManaged);
  const id = managerIdentity(manager, 'Apply', w.apiVersion, w.subresource);
  const previous = managed.get(id);
  const merged = mergeValues(live, config, w.type);
  const set = ownable(fieldSetOf(config, w.type), w);
  managed.set(id, { manager, operation: 'Apply', apiVersion: w.apiVersion, subresource: w.subresource, time: previous?.time, fields: set });
  const next = pruneDropped(isJsonObject(merged) ? merged : {}, managed, previous?.fields, w.type);
  // the strategy resets what this write may not own: such changes conflict with nobody (update.go IgnoreFilter)
  const cmp = compareValues(live, next, w.type);
  const changed = ownable(union(cmp.modified, cmp.added), w);
  const removed = ownable(cmp.removed, w);
  const conflicts: Conflict[] = [];
  for (const [otherId, e] of managed) {
    if (otherId === id) continue;
    const fields = intersection(e.fields, changed);
    if (!fields.isEmpty()) conflicts.push({ id: otherId, entry: e, fields });
  }
  if (!force && conflicts.length) return { conflicts };
  for (const [otherId, e] of managed) {
    if (otherId === id) continue;
    const fields = difference(difference(e.fields, changed), removed);
    if (fields.isEmpty()) managed.delete(otherId);
    else managed.set(otherId, { ...e, fields });
  }
  const unchanged = jsonEqual(live, next);
  const own = difference(set, STRIPPED);
  if (own.isEmpty()) managed.delete(id);
  else
    managed.set(id, {
      manager,
      operation: 'Apply',
      apiVersion: w.apiVersion,
      subresource: w.subresource,
      time: unchanged ? previous?.time : w.now,
      fields: own,
    });
  return { object: unchanged ? live : next, managed };
}

/** merge/update.go prune: what the applier owned before, no longer applies and nobody else owns goes. */
function pruneDropped(merged: JsonObject, managed: ManagedFields, lastSet: FieldSet | undefined, t: FieldType): JsonObject {
  if (!lastSet || lastSet.isEmpty()) return merged;
  let owned = new FieldSet();
  for (const e of managed.values()) owned = union(owned, withNamedFieldsAsMembers(e.fields));
  const dropped = difference(difference(withNamedFieldsAsMembers(lastSet), owned), STRIPPED);
  const kept = removeFields(merged, dropped, t);
  return isJsonObject(kept) ? kept : {};
}

function lastAppliedOf(obj: JsonObject): string | undefined {
  const annotations = isJsonObject(obj.metadata) ? obj.metadata.annotations : undefined;
  const v = isJsonObject(annotations) ? annotations[LAST_APPLIED_ANNOTATION] : undefined;
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** allowedConflictsFromLastApplied: the last-applied fields whose value the live object still has. */
function fieldsStillMatchingLastApplied(live: JsonObject, t: FieldType): FieldSet | undefined {
  const text = lastAppliedOf(live);
  if (text === undefined) return undefined;
  let obj: JsonValue;
  try {
    obj = parseJsonText(text);
  } catch {
    return undefined;
  }
  if (!isJsonObject(obj)) return undefined;
  const cmp = compareValues(obj, live, t);
  return difference(difference(difference(fieldSetOf(obj, t), cmp.modified), cmp.added), cmp.removed);
}

/** lastappliedupdater.go buildLastApplied: the applied configuration without that annotation, as json.Encoder writes it (keys sorted, newline). */
function setLastApplied(object: JsonObject, config: JsonObject): void {
  const copy = sortedKeys(config);
  if (isJsonObject(copy) && isJsonObject(copy.metadata) && isJsonObject(copy.metadata.annotations)) delete copy.metadata.annotations[LAST_APPLIED_ANNOTATION];
  const meta = isJsonObject(object.metadata) ? object.metadata : {};
  object.metadata = meta;
  meta.annotations = { ...(isJsonObject(meta.annotations) ? meta.annotations : {}), [LAST_APPLIED_ANNOTATION]: `${JSON.stringify(copy)}\n` };
}

function sortedKeys(v: JsonValue): JsonValue {
  if (Array.isArray(v)) return v.map(sortedKeys);
  if (!isJsonObject(v)) return v;
  const out: JsonObject = {};
  for (const k of Object.keys(v).sort()) {
    const x = v[k];
    if (x !== undefined) out[k] = sortedKeys(x);
  }
  return out;
}

/** conflict.go printManager (the identity carries no time, so never ` at <time>`). */
function managerText(e: ManagerEntry): string {
  let s = JSON.stringify(e.manager);
  if (e.subresource) s += ` with subresource ${JSON.stringify(e.subresource)}`;
  return e.operation === 'Update' ? `${s} using ${e.apiVersion}` : s;
}

/** conflict.go NewConflictError / getConflictMessage. */
function conflictError(conflicts: Conflict[]): ReturnType<typeof applyConflict> {
  const sorted = [...conflicts].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const causes: StatusCause[] = [];
  const lines: string[] = [];
  for (const c of sorted) {
    const paths = memberPaths(c.fields).map(pathText);
    lines.push(`conflicts with ${managerText(c.entry)}:`, ...paths.map((p) => `- ${p}`));
    for (const p of paths) causes.push({ reason: 'FieldManagerConflict', message: `conflict with ${managerText(c.entry)}`, field: p });
  }
  const message =
    causes.length === 1
      ? `Apply failed with 1 conflict: ${causes[0].message}: ${causes[0].field ?? ''}`
      : `Apply failed with ${causes.length} conflicts: ${lines.join('\n')}`;
  return applyConflict(causes, message);
}
