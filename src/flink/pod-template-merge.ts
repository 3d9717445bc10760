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
 * Guarantees: the inputs are never mutated; the result shares no objects with them.
 * Caveat: SMP directives (`$patch`, `$retainKeys`, `$setElementOrder`) are not interpreted; they
 * are copied like any other key (users do not put them in pod templates).
 */

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
