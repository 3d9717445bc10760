/**
 * Three of the four PATCH content types: JSON patch (RFC 6902, with `test`), JSON merge patch
 * (RFC 7386) and strategic merge patch (built-in kinds only). The fourth, server-side apply, is
 * server-side-apply.ts (it reuses the merge keys below, see field-types.ts).
 *
 * Guarantees: every function returns a new object and never mutates its inputs.
 * Strategic merge knows the merge keys the operator uses (containers/initContainers/env/volumes by
 * name, volumeMounts by mountPath, container ports by containerPort, service ports by port,
 * ownerReferences by uid, conditions by type, imagePullSecrets by name) and treats `finalizers`
 * as a merged primitive list; it honours `$patch: replace|delete|merge`, `$retainKeys`,
 * `$deleteFromPrimitiveList/...` and ignores `$setElementOrder/...` (ordering only).
 * Caveats: the merge keys are the ones the operator's objects need, not the full OpenAPI list.
 */
import jsonpatch, { type Operation } from 'fast-json-patch';
import { ApiError, badRequest } from './errors.js';
import { cloneJson, isJsonObject, type JsonObject, type JsonValue } from './json-clone.js';

export type PatchType = 'json' | 'merge' | 'strategic' | 'apply';

export function patchTypeOf(contentType: string | undefined): PatchType | undefined {
  const ct = (contentType ?? '').split(';')[0].trim().toLowerCase();
  switch (ct) {
    case 'application/json-patch+json':
      return 'json';
    case 'application/merge-patch+json':
      return 'merge';
    case 'application/strategic-merge-patch+json':
      return 'strategic';
    case 'application/apply-patch+yaml':
    case 'application/apply-patch+json':
      return 'apply';
    default:
      return undefined;
  }
}

/**
 * RFC 6902. A failed `test` (or any op that cannot apply) is what apiserver's patch.go answers:
 * `NewGenericServerResponse(422, …)`, i.e. reason Invalid and the fixed message "the server
 * rejected our request due to an error in our request" (the jsonpatch error text is not included).
 */
export function applyJsonPatch(target: JsonObject, ops: JsonValue | undefined): JsonValue {
  if (!Array.isArray(ops)) throw badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  const rejected = () => new ApiError(422, 'Invalid', 'the server rejected our request due to an error in our request', {});
  const operations: Operation[] = [];
  for (const op of ops) {
    if (!isOperation(op)) throw rejected();
    operations.push(op);
  }
  try {
    return jsonpatch.applyPatch<JsonValue>(cloneJson(target), operations, true, true).newDocument;
  } catch {
    throw rejected();
  }
}

const OPERATIONS = new Set(['add', 'remove', 'replace', 'move', 'copy', 'test']);

/**
 * An RFC 6902 operation as far as its `op` and `path` go; fast-json-patch's own check
 * (validateOperation) refuses the rest of a malformed operation (a missing `value` or `from`).
 */
function isOperation(v: JsonValue): v is JsonObject & Operation {
  return isJsonObject(v) && typeof v.op === 'string' && OPERATIONS.has(v.op) && typeof v.path === 'string';
}

/** RFC 7386: objects merge recursively, `null` deletes, anything else replaces. */
export function applyMergePatch(target: JsonValue | undefined, patch: JsonValue | undefined): JsonValue | undefined {
  if (!isJsonObject(patch)) return cloneJson(patch);
  const out: JsonObject = isJsonObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = applyMergePatch(out[k], v);
  }
  return out;
}

/** The strategic-merge key of list `field` at `path` (the field names leading to it, itself last). */
export function mergeKeyFor(path: readonly string[], field: string): string | undefined {
  switch (field) {
    case 'containers':
    case 'initContainers':
    case 'ephemeralContainers':
    case 'env':
    case 'volumes':
    case 'imagePullSecrets':
      return 'name';
    case 'volumeMounts':
      return 'mountPath';
    case 'volumeDevices':
      return 'devicePath';
    case 'ownerReferences':
      return 'uid';
    case 'conditions':
      return 'type';
    case 'hostAliases':
      return 'ip';
    case 'ports': {
      const parent = path[path.length - 2];
      if (parent === 'containers' || parent === 'initContainers' || parent === 'ephemeralContainers') return 'containerPort';
      return 'port';
    }
    default:
      return undefined;
  }
}

export const MERGED_PRIMITIVE_LISTS: ReadonlySet<string> = new Set(['finalizers']);

/** Strategic merge patch of a built-in object. `deleteNulls` is false for apply. */
export function applyStrategicMergePatch(target: JsonObject, patch: JsonValue | undefined, deleteNulls = true): JsonObject {
  if (!isJsonObject(patch)) throw badRequest('strategic merge patch must be a JSON object');
  return mergeMap(cloneJson(target), patch, [], deleteNulls);
}

function mergeMap(original: JsonObject, patch: JsonObject, path: string[], deleteNulls: boolean): JsonObject {
  if (patch.$patch === 'replace') {
    const { $patch: _ignored, ...rest } = patch;
    return stripDirectives(cloneJson(rest));
  }
  let out: JsonObject = { ...original };
  if (Array.isArray(patch.$retainKeys)) {
    const keep = new Set<JsonValue>(patch.$retainKeys);
    out = Object.fromEntries(Object.entries(out).filter(([k]) => keep.has(k)));
  }
  for (const [k, v] of Object.entries(patch)) {
    if (k === '$patch' || k === '$retainKeys' || k.startsWith('$setElementOrder/')) continue;
    if (k.startsWith('$deleteFromPrimitiveList/')) {
      const field = k.slice('$deleteFromPrimitiveList/'.length);
      const current = out[field];
      if (Array.isArray(current) && Array.isArray(v)) out[field] = current.filter((x) => !v.includes(x));
      continue;
    }
    if (v === null) {
      if (deleteNulls) delete out[k];
      continue;
    }
    const childPath = [...path, k];
    const current = out[k];
    if (isJsonObject(v)) {
      if (v.$patch === 'delete') {
        delete out[k];
        continue;
      }
      out[k] = isJsonObject(current) ? mergeMap(current, v, childPath, deleteNulls) : stripDirectives(cloneJson(v));
    } else if (Array.isArray(v)) {
      const key = mergeKeyFor(childPath, k);
      if (key && Array.isArray(current)) out[k] = mergeList(current, v, key, childPath, deleteNulls);
      else if (MERGED_PRIMITIVE_LISTS.has(k) && Array.isArray(current)) {
        const merged = [...current];
        for (const x of v) if (!merged.includes(x)) merged.push(x);
        out[k] = merged;
      } else out[k] = stripDirectives(cloneJson(v)).filter((x) => !(isJsonObject(x) && x.$patch === 'delete'));
    } else out[k] = v;
  }
  return out;
}

function mergeList(original: JsonValue[], patch: JsonValue[], key: string, path: string[], deleteNulls: boolean): JsonValue[] {
  if (patch.some((p) => isJsonObject(p) && p.$patch === 'replace')) {
    return stripDirectives(cloneJson(patch.filter((p) => !(isJsonObject(p) && p.$patch === 'replace'))));
  }
  const out = [...original];
  for (const p of patch) {
    if (!isJsonObject(p)) {
      out.push(p);
      continue;
    }
    const idx = out.findIndex((o) => isJsonObject(o) && o[key] === p[key]);
    if (p.$patch === 'delete') {
      if (idx >= 0) out.splice(idx, 1);
      continue;
    }
    const found = idx >= 0 ? out[idx] : undefined;
    if (isJsonObject(found)) out[idx] = mergeMap(found, p, path, deleteNulls);
    else out.push(stripDirectives(cloneJson(p)));
  }
  return out;
}

/** A copy without the `$`-directive keys, at every depth; keeps the kind of value it is given. */
function stripDirectives(v: JsonObject): JsonObject;
function stripDirectives(v: JsonValue[]): JsonValue[];
function stripDirectives(v: JsonValue): JsonValue;
function stripDirectives(v: JsonValue | undefined): JsonValue | undefined;
function stripDirectives(v: JsonValue | undefined): JsonValue | undefined {
  if (Array.isArray(v)) return v.map((x) => stripDirectives(x));
  if (!isJsonObject(v)) return v;
  const out: JsonObject = {};
  for (const [k, x] of Object.entries(v)) if (!k.startsWith('$')) out[k] = stripDirectives(x);
  return out;
}
