/**
 * The four PATCH content types: JSON patch (RFC 6902, with `test`), JSON merge patch (RFC 7386),
 * strategic merge patch (built-in kinds only) and server-side apply (approximated by a merge).
 *
 * Guarantees: every function returns a new object and never mutates its inputs.
 * Strategic merge knows the merge keys the operator uses (containers/initContainers/env/volumes by
 * name, volumeMounts by mountPath, container ports by containerPort, service ports by port,
 * ownerReferences by uid, conditions by type, imagePullSecrets by name) and treats `finalizers`
 * as a merged primitive list; it honours `$patch: replace|delete|merge`, `$retainKeys`,
 * `$deleteFromPrimitiveList/...` and ignores `$setElementOrder/...` (ordering only).
 * Caveats: server-side apply has no managedFields and never reports field-manager conflicts; it
 * is a strategic merge (built-ins) or a deep merge replacing lists (custom resources).
 */
import jsonpatch from 'fast-json-patch';
import { ApiError, badRequest, type JsonObject } from './errors.js';
import { cloneJson } from './json-clone.js';

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

function isPlainObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * RFC 6902. A failed `test` (or any op that cannot apply) is what apiserver's patch.go answers:
 * `NewGenericServerResponse(422, …)`, i.e. reason Invalid and the fixed message "the server
 * rejected our request due to an error in our request" (the jsonpatch error text is not included).
 */
export function applyJsonPatch(target: JsonObject, ops: unknown): JsonObject {
  if (!Array.isArray(ops)) throw badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  try {
    return jsonpatch.applyPatch(cloneJson(target), ops as any, true, true).newDocument;
  } catch {
    throw new ApiError(422, 'Invalid', 'the server rejected our request due to an error in our request', {});
  }
}

/** RFC 7386: objects merge recursively, `null` deletes, anything else replaces. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return cloneJson(patch);
  const out: JsonObject = isPlainObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = applyMergePatch(out[k], v);
  }
  return out;
}

function mergeKeyFor(path: string[], field: string): string | undefined {
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

const MERGED_PRIMITIVE_LISTS = new Set(['finalizers']);

/** Strategic merge patch of a built-in object. `deleteNulls` is false for apply. */
export function applyStrategicMergePatch(target: JsonObject, patch: unknown, deleteNulls = true): JsonObject {
  if (!isPlainObject(patch)) throw badRequest('strategic merge patch must be a JSON object');
  return mergeMap(cloneJson(target), patch, [], deleteNulls);
}

function mergeMap(original: JsonObject, patch: JsonObject, path: string[], deleteNulls: boolean): JsonObject {
  if (patch.$patch === 'replace') {
    const { $patch: _ignored, ...rest } = patch;
    return stripDirectives(cloneJson(rest));
  }
  let out: JsonObject = { ...original };
  if (Array.isArray(patch.$retainKeys)) {
    const keep = new Set(patch.$retainKeys as string[]);
    out = Object.fromEntries(Object.entries(out).filter(([k]) => keep.has(k)));
  }
  for (const [k, v] of Object.entries(patch)) {
    if (k === '$patch' || k === '$retainKeys' || k.startsWith('$setElementOrder/')) continue;
    if (k.startsWith('$deleteFromPrimitiveList/')) {
      const field = k.slice('$deleteFromPrimitiveList/'.length);
      if (Array.isArray(out[field]) && Array.isArray(v)) out[field] = out[field].filter((x: unknown) => !v.includes(x));
      continue;
    }
    if (v === null) {
      if (deleteNulls) delete out[k];
      continue;
    }
    const childPath = [...path, k];
    if (isPlainObject(v)) {
      if (v.$patch === 'delete') {
        delete out[k];
        continue;
      }
      out[k] = isPlainObject(out[k]) ? mergeMap(out[k], v, childPath, deleteNulls) : stripDirectives(cloneJson(v));
    } else if (Array.isArray(v)) {
      const key = mergeKeyFor(childPath, k);
      if (key && Array.isArray(out[k])) out[k] = mergeList(out[k], v, key, childPath, deleteNulls);
      else if (MERGED_PRIMITIVE_LISTS.has(k) && Array.isArray(out[k])) {
        const merged = [...out[k]];
        for (const x of v) if (!merged.includes(x)) merged.push(x);
        out[k] = merged;
      } else out[k] = stripDirectives(cloneJson(v)).filter((x: unknown) => !(isPlainObject(x) && x.$patch === 'delete'));
    } else out[k] = v;
  }
  return out;
}

function mergeList(original: unknown[], patch: unknown[], key: string, path: string[], deleteNulls: boolean): unknown[] {
  if (patch.some((p) => isPlainObject(p) && p.$patch === 'replace')) {
    return stripDirectives(cloneJson(patch.filter((p) => !(isPlainObject(p) && p.$patch === 'replace'))));
  }
  const out = [...original];
  for (const p of patch) {
    if (!isPlainObject(p)) {
      out.push(p);
      continue;
    }
    const idx = out.findIndex((o) => isPlainObject(o) && o[key] === p[key]);
    if (p.$patch === 'delete') {
      if (idx >= 0) out.splice(idx, 1);
      continue;
    }
    if (idx >= 0) out[idx] = mergeMap(out[idx] as JsonObject, p, path, deleteNulls);
    else out.push(stripDirectives(cloneJson(p)));
  }
  return out;
}

function stripDirectives(v: any): any {
  if (Array.isArray(v)) return v.map(stripDirectives);
  if (!isPlainObject(v)) return v;
  const out: JsonObject = {};
  for (const [k, x] of Object.entries(v)) if (!k.startsWith('$')) out[k] = stripDirectives(x);
  return out;
}

/** Server-side apply for a custom resource: objects merge, lists and scalars are replaced. */
export function applyDeepMerge(target: JsonObject, patch: JsonObject): JsonObject {
  const out: JsonObject = { ...target };
  for (const [k, v] of Object.entries(patch)) {
    if (isPlainObject(v) && isPlainObject(out[k])) out[k] = applyDeepMerge(out[k], v);
    else out[k] = cloneJson(v);
  }
  return out;
}
