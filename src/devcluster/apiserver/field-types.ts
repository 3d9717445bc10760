/**
 * What server-side apply needs to know about a kind's fields: for each list, whether it is an
 * associative list (and its keys), a set, or atomic; for each object, whether it is atomic and
 * which of its keys are declared fields rather than entries of a map. The real server reads this
 * from the OpenAPI models (`x-kubernetes-list-type`, `x-kubernetes-list-map-keys`,
 * `x-kubernetes-map-type`, via structured-merge-diff's schema); the emulator derives it as follows.
 *
 * Guarantees:
 * - built-in kinds: the merge keys patches.ts knows for strategic merge (containers/initContainers/
 *   ephemeralContainers/env/volumes/imagePullSecrets by name, volumeMounts by mountPath, ownerReferences
 *   by uid, conditions by type, hostAliases by ip), container ports keyed by containerPort+protocol
 *   and service ports by port+protocol (protocol defaulting to TCP, as the OpenAPI default does),
 *   `finalizers` a set, `spec.selector` an atomic map; every other list is atomic.
 * - custom resources: the version's structural schema: `x-kubernetes-list-type: map` with
 *   `x-kubernetes-list-map-keys` (a key's schema `default` used when an item omits it), `set`, and
 *   atomic otherwise (the default); `x-kubernetes-map-type: atomic`; `properties` are declared
 *   fields, `additionalProperties` and x-kubernetes-preserve-unknown-fields content are map entries
 *   (structured-merge-diff's "deduced" type: maps granular, lists atomic); `metadata` at the root is
 *   read with the built-in ObjectMeta rules.
 * Caveats (coarser than the OpenAPI-driven original): in built-in kinds every object key counts as
 *   a declared field (so a map entry whose value is an object is not a member of an Apply set by
 *   itself), lists the table does not name are atomic even where the real schema says `map` or `set`
 *   (e.g. tolerations are atomic in both, but topologySpreadConstraints, resourceClaims… are keyed
 *   there), and {@link emptyObjectFor} knows only the common non-pointer structs of the Go types
 *   (spec, spec.template.{metadata,spec}, strategy, updateStrategy, status.loadBalancer), which
 *   decides where a create's Update entry shows `".": {}`.
 */
import { mergeKeyFor, MERGED_PRIMITIVE_LISTS } from './patches.js';
import type { ResourceType } from './resource-types.js';
import { schemaOf, type Schema } from './structural-schema.js';
import { isJsonObject, type JsonObject } from './json-clone.js';

export type ListSemantics = { type: 'map'; keys: string[]; keyDefaults: JsonObject } | { type: 'set' } | { type: 'atomic' };

export interface FieldType {
  /** the type of key `name` of an object of this type */
  field(name: string): FieldType;
  /** `name` is a declared field (a struct field), not an entry of a map */
  declares(name: string): boolean;
  /** the type of the items of a list of this type */
  item(): FieldType;
  /** how a list of this type merges */
  readonly list: ListSemantics;
  /** an object of this type is replaced as a whole (x-kubernetes-map-type: atomic) */
  readonly atomicMap: boolean;
}

const ATOMIC: ListSemantics = { type: 'atomic' };

/** A built-in kind's field, known by the field names leading to it. */
class BuiltinFieldType implements FieldType {
  readonly list: ListSemantics;
  readonly atomicMap: boolean;

  constructor(private readonly path: readonly string[]) {
    const field = path[path.length - 1] ?? '';
    const key = field ? mergeKeyFor(path, field) : undefined;
    if (key && field === 'ports') this.list = { type: 'map', keys: [key, 'protocol'], keyDefaults: { protocol: 'TCP' } };
    else if (key) this.list = { type: 'map', keys: [key], keyDefaults: {} };
    else if (MERGED_PRIMITIVE_LISTS.has(field)) this.list = { type: 'set' };
    else this.list = ATOMIC;
    this.atomicMap = field === 'selector' && path[path.length - 2] === 'spec';
  }

  field(name: string): FieldType {
    return new BuiltinFieldType([...this.path, name]);
  }

  declares(): boolean {
    return true;
  }

  item(): FieldType {
    return this;
  }
}

const OBJECT_META = new BuiltinFieldType(['metadata']);
const ROOT_FIELDS = new Set(['apiVersion', 'kind', 'metadata']);

/** A custom resource's field, known by its structural schema node (undefined: "deduced"). */
class SchemaFieldType implements FieldType {
  readonly list: ListSemantics;
  readonly atomicMap: boolean;
  private readonly hasObjectMeta: boolean;

  constructor(
    private readonly schema: Schema | undefined,
    root: boolean,
  ) {
    this.hasObjectMeta = root || !!schema?.['x-kubernetes-embedded-resource'];
    this.atomicMap = schema?.['x-kubernetes-map-type'] === 'atomic';
    const listType = schema?.['x-kubernetes-list-type'];
    const keys = schema?.['x-kubernetes-list-map-keys'];
    if (listType === 'map' && Array.isArray(keys)) {
      const names = keys.filter((k): k is string => typeof k === 'string');
      const itemProps = schemaOf(schemaOf(schema?.items)?.properties);
      const keyDefaults: JsonObject = {};
      for (const k of names) {
        const d = schemaOf(itemProps?.[k])?.default;
        if (d !== undefined) keyDefaults[k] = d;
      }
      this.list = { type: 'map', keys: names, keyDefaults };
    } else if (listType === 'set') this.list = { type: 'set' };
    else this.list = ATOMIC;
  }

  private property(name: string): Schema | undefined {
    const props = this.schema?.properties;
    return isJsonObject(props) ? schemaOf(props[name]) : undefined;
  }

  field(name: string): FieldType {
    if (this.hasObjectMeta && name === 'metadata') return OBJECT_META;
    const declared = this.property(name);
    if (declared) return new SchemaFieldType(declared, false);
    const additional = this.schema?.additionalProperties;
    return new SchemaFieldType(isJsonObject(additional) ? additional : undefined, false);
  }

  declares(name: string): boolean {
    return (this.hasObjectMeta && ROOT_FIELDS.has(name)) || this.property(name) !== undefined;
  }

  item(): FieldType {
    return new SchemaFieldType(schemaOf(this.schema?.items), false);
  }
}

/** The type of a whole object of `type`, as the served version sees it. */
export function fieldTypeFor(type: ResourceType): FieldType {
  if (type.crd) return new SchemaFieldType(type.crd.schema, true);
  return new BuiltinFieldType([]);
}

/**
 * The object a create is compared with (the real server compares with the Go type's zero value,
 * whose non-pointer structs are present and empty; a custom resource starts from nothing).
 */
export function emptyObjectFor(type: ResourceType): JsonObject {
  if (type.crd) return {};
  return { metadata: {}, spec: { template: { metadata: {}, spec: {} }, strategy: {}, updateStrategy: {} }, status: { loadBalancer: {} } };
}
