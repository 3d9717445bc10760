/**
 * Merging pod templates the way a Kubernetes strategic merge patch would.
 *
 * Used twice when rendering a Flink component's pod:
 *   1. `spec.podTemplate` (base) ⊕ `spec.jobManager.podTemplate` / `spec.taskManager.podTemplate`;
 *   2. that user template ⊕ what the operator decorates (image, args, ports, config volume...).
 *
 * Rules (the patch strategies of the core/v1 types, k8s.io/api `patchMergeKey` tags):
 * - objects (maps) are merged key by key, recursively; the overlay's scalars win;
 * - lists of objects with a merge key are merged element by element on that key, keeping the
 *   base order and appending new elements in overlay order:
 *     containers, initContainers, volumes, env, imagePullSecrets by `name`; volumeMounts by
 *     `mountPath` and container ports by `containerPort` (as SMP does, so the same volume mounted
 *     at two paths stays two mounts); MERGE_KEYS below is the exact list;
 * - every other list (args, command, tolerations, ...) is replaced by the overlay's;
 * - `null` in the overlay deletes the key (as in a merge patch); `undefined` is ignored.
 *
 * The lists of the user's two templates (step 1) follow `kubernetes.operator.pod-template.merge-arrays-by-name`
 * when the resource sets it (templateListMerge), with the Apache operator's semantics
 * (FlinkUtils.mergePodTemplates / mergeInto / mergeArray):
 * - `true`: a list whose elements all have a `name`, in both templates, is merged by name (base
 *   order, new names appended); any other list by position;
 * - `false` (Apache's default): every list by position: element i of the component's template is
 *   merged into element i of spec.podTemplate (objects recursively, whatever their names), extra
 *   elements appended; at a position both have a scalar (an args string), spec.podTemplate's stays,
 *   as Jackson's tree merge leaves it;
 * - in both, a field is replaced unless both sides are lists or the base's is an object; `null`
 *   over an object changes nothing.
 * Unset, this operator's rules above apply (Apache's default is not ours: by position, a
 * component template's env var, volume or container overwrites spec.podTemplate's at the same
 * index, name and all, so those of spec.podTemplate are lost).
 *
 * Guarantees: the inputs are never mutated; the result shares no objects with them.
 * Caveat: SMP directives (`$patch`, `$retainKeys`, `$setElementOrder`) are not interpreted; they
 * are copied like any other key (users do not put them in pod templates).
 */
import type { FlinkDeploymentSpec } from '../api/flink-deployment-spec.js';
import { configValue } from '../api/flink-configuration.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** List field name → the key its elements are merged on. Applies wherever the field name occurs. */
export const MERGE_KEYS: Readonly<Record<string, string>> = {
  containers: 'name',
  initContainers: 'name',
  ephemeralContainers: 'name',
  volumes: 'name',
  env: 'name',
  imagePullSecrets: 'name',
  hostAliases: 'ip',
  volumeMounts: 'mountPath',
  volumeDevices: 'devicePath',
  ports: 'containerPort',
  resourceClaims: 'name',
  topologySpreadConstraints: 'topologyKey',
};

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function clone<T>(value: T): T {
  return value === undefined ? value : structuredClone(value);
}

function mergeKeyedLists(base: Json[], overlay: Json[], key: string): Json[] {
  const out: Json[] = base.map((element) => clone(element));
  for (const element of overlay) {
    const id = isJsonObject(element) ? element[key] : undefined;
    const index = id === undefined ? -1 : out.findIndex((existing) => isJsonObject(existing) && existing[key] === id);
    if (index >= 0) out[index] = mergeValue(out[index], element, undefined);
    else out.push(clone(element));
  }
  return out;
}

function mergeValue(base: Json | undefined, overlay: Json | undefined, field: string | undefined): Json {
  if (overlay === undefined) return clone(base as Json);
  if (isJsonObject(base) && isJsonObject(overlay)) return mergeObjects(base, overlay);
  if (Array.isArray(base) && Array.isArray(overlay) && field !== undefined && MERGE_KEYS[field] !== undefined) {
    const key = MERGE_KEYS[field];
    const keyed = (list: Json[]) => list.every((e) => isJsonObject(e) && e[key] !== undefined);
    if (keyed(base) && keyed(overlay)) return mergeKeyedLists(base, overlay, key);
  }
  return clone(overlay);
}

/** Strategic-merge `overlay` onto `base` (both plain JSON objects). See the module comment for the rules. */
export function mergeObjects(base: Readonly<Record<string, unknown>>, overlay: Readonly<Record<string, unknown>>): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(base as JsonObject)) if (value !== undefined) out[key] = clone(value);
  for (const [key, value] of Object.entries(overlay as JsonObject)) {
    if (value === undefined) continue;
    if (value === null) {
      delete out[key];
      continue;
    }
    out[key] = mergeValue(out[key], value, key);
  }
  return out;
}

/**
 * Merges any number of pod templates left to right (later ones win); `undefined` entries are
 * skipped. Non-object templates are rejected with an error naming the position.
 */
export function mergePodTemplates(...templates: ReadonlyArray<unknown>): JsonObject {
  let out: JsonObject = {};
  templates.forEach((template, index) => {
    if (template === undefined || template === null) return;
    if (!isJsonObject(template)) throw new Error(`pod template #${index + 1} is not an object`);
    out = mergeObjects(out, template);
  });
  return out;
}

/** Apache's `kubernetes.operator.pod-template.merge-arrays-by-name` (default false there; unset here: merge keys). */
export const MERGE_ARRAYS_BY_NAME_KEY = 'kubernetes.operator.pod-template.merge-arrays-by-name';

/** How the lists of spec.podTemplate and a component's podTemplate are merged: this operator's merge keys, or Apache's by name / by position. */
export type TemplateListMerge = 'merge-keys' | 'by-name' | 'by-position';

/** The list merge the resource asks for: `true` → by-name, `false` → by-position (Apache's semantics), unset (or another value) → merge-keys. */
export function templateListMerge(spec: Pick<FlinkDeploymentSpec, 'flinkConfiguration'>): TemplateListMerge {
  const value = configValue(spec, MERGE_ARRAYS_BY_NAME_KEY)?.trim().toLowerCase();
  return value === 'true' ? 'by-name' : value === 'false' ? 'by-position' : 'merge-keys';
}

/** spec.podTemplate ⊕ a component's podTemplate, lists merged as `lists` says; undefined when both are. */
export function mergeUserPodTemplates(common: JsonObject | undefined, component: JsonObject | undefined, lists: TemplateListMerge): JsonObject | undefined {
  if (common === undefined && component === undefined) return undefined;
  if (lists === 'merge-keys' || common === undefined || component === undefined) return mergePodTemplates(common, component);
  const out = clone(common);
  apacheMergeInto(out, component, lists === 'by-name');
  return out;
}

/** Apache's FlinkUtils.mergeInto: `from` into `to` (a copy this module owns), in place. */
function apacheMergeInto(to: JsonObject, from: JsonObject, byName: boolean): void {
  for (const [field, fromChild] of Object.entries(from)) {
    if (fromChild === undefined) continue;
    const toChild = to[field];
    if (Array.isArray(toChild) && Array.isArray(fromChild)) to[field] = apacheMergeArray(toChild, fromChild, byName);
    else if (isJsonObject(toChild)) {
      if (isJsonObject(fromChild)) apacheMergeInto(toChild, fromChild, byName);
    } else to[field] = clone(fromChild);
  }
}

/** Apache's FlinkUtils.mergeArray: by name when asked and every element of both has one, else by position. */
function apacheMergeArray(to: Json[], from: Json[], byName: boolean): Json[] {
  const named = (list: Json[]) => list.every((e) => isJsonObject(e) && e.name !== undefined);
  if (byName && named(to) && named(from)) {
    const byNames = new Map<string, JsonObject>();
    for (const element of to as JsonObject[]) byNames.set(nameText(element.name), element);
    for (const element of from as JsonObject[]) {
      const existing = byNames.get(nameText(element.name));
      if (existing) apacheMergeInto(existing, element, byName);
      else byNames.set(nameText(element.name), clone(element));
    }
    return [...byNames.values()];
  }
  const out = [...to];
  from.forEach((element, i) => {
    if (out.length <= i) out.push(clone(element));
    else {
      const existing = out[i];
      if (isJsonObject(existing) && isJsonObject(element)) apacheMergeInto(existing, element, byName);
    }
  });
  return out;
}

/** Jackson's JsonNode.asText() of a `name`: a scalar's text, "" for an object or a list. */
function nameText(name: Json): string {
  return name === null ? 'null' : typeof name === 'object' ? '' : String(name);
}
