/**
 * CustomResourceDefinitions: what each stored CRD serves, and the schema-coercing conversion of
 * custom objects between versions (conversion strategy None).
 *
 * Write path ({@link CrdRegistry.decode}, validateForVersion, toStorage), as apiextensions-apiserver does it:
 *   prune + default by the requested version's schema → validate by it → set apiVersion to the
 *   storage version → prune by the storage version's schema.
 * Read path ({@link CrdRegistry.encodeForRead}), as schemaCoercingDecoder + schemaCoercingConverter:
 *   prune + default by the schema of the version the object was stored as (its apiVersion) →
 *   set apiVersion to the requested version → prune + default by that version's schema.
 * Guarantees: read-time defaults are never persisted; replacing a CRD leaves stored objects
 * untouched (they are re-read through the new schemas); status.storedVersions only grows.
 * Caveats: only conversion strategy None; a Webhook strategy is treated like None.
 */
import { createHash } from 'node:crypto';
import { invalid, invalidValue, requiredValue, type FieldError, type JsonObject } from './errors.js';
import { pruneAndDefault, validateObject, type Schema } from './structural-schema.js';
import { compareKubeVersions, groupResourceKey, type ResourceType, type ScaleSpec } from './resource-types.js';
import { cloneJson } from './json-clone.js';

export interface PrinterColumn {
  name: string;
  type: string;
  format?: string;
  description?: string;
  priority?: number;
  jsonPath: string;
}

export interface CrdVersionView {
  crdName: string;
  group: string;
  plural: string;
  version: string;
  storageVersion: string;
  schema: Schema | undefined;
  printerColumns: PrinterColumn[];
  storageVersionHash: string;
  /** bumps whenever the CRD object changes; part of read-cache keys */
  revision: number;
  terminating: boolean;
  /** set for `deprecated: true` versions: sent as a `Warning: 299` header on every request */
  deprecationWarning?: string;
}

interface CrdEntry {
  obj: JsonObject;
  revision: number;
  schemas: Map<string, Schema | undefined>;
  types: ResourceType[];
}

let revisionCounter = 0;

export class CrdRegistry {
  private readonly byName = new Map<string, CrdEntry>();
  private readonly byGroupResource = new Map<string, CrdEntry>();

  /** Registers or replaces a CRD (after it was committed). */
  upsert(crd: JsonObject): void {
    const old = this.byName.get(crd.metadata.name);
    if (old) this.byGroupResource.delete(groupResourceKey(old.obj.spec.group, old.obj.spec.names.plural));
    const spec = crd.spec;
    const revision = ++revisionCounter;
    const storage = (spec.versions as JsonObject[]).find((v) => v.storage)?.name ?? spec.versions[0]?.name;
    const schemas = new Map<string, Schema | undefined>();
    const types: ResourceType[] = [];
    const terminating = !!crd.metadata.deletionTimestamp;
    const storageVersionHash = createHash('sha256').update(`${spec.group}/${storage}/${spec.names.kind}`).digest('base64').slice(0, 11);
    for (const v of spec.versions as JsonObject[]) {
      schemas.set(v.name, v.schema?.openAPIV3Schema);
      if (!v.served) continue;
      const scale = v.subresources?.scale as ScaleSpec | undefined;
      types.push({
        group: spec.group,
        version: v.name,
        plural: spec.names.plural,
        singular: spec.names.singular ?? String(spec.names.kind).toLowerCase(),
        kind: spec.names.kind,
        listKind: spec.names.listKind ?? `${spec.names.kind}List`,
        namespaced: spec.scope !== 'Cluster',
        shortNames: spec.names.shortNames ?? [],
        categories: spec.names.categories ?? [],
        statusSubresource: v.subresources?.status !== undefined && v.subresources?.status !== null,
        scale: scale ? { ...scale } : undefined,
        tracksGeneration: true,
        crd: {
          crdName: crd.metadata.name,
          group: spec.group,
          plural: spec.names.plural,
          version: v.name,
          storageVersion: storage,
          schema: v.schema?.openAPIV3Schema,
          printerColumns: (v.additionalPrinterColumns ?? []) as PrinterColumn[],
          storageVersionHash,
          revision,
          terminating,
          deprecationWarning: v.deprecated ? (v.deprecationWarning ?? `${spec.group}/${v.name} ${spec.names.kind} is deprecated`) : undefined,
        },
      });
    }
    const entry: CrdEntry = { obj: crd, revision, schemas, types };
    this.byName.set(crd.metadata.name, entry);
    this.byGroupResource.set(groupResourceKey(spec.group, spec.names.plural), entry);
  }

  remove(name: string): void {
    const old = this.byName.get(name);
    if (!old) return;
    this.byName.delete(name);
    this.byGroupResource.delete(groupResourceKey(old.obj.spec.group, old.obj.spec.names.plural));
  }

  /** Served resource types of every CRD. */
  allTypes(): ResourceType[] {
    const out: ResourceType[] = [];
    for (const e of this.byName.values()) out.push(...e.types);
    return out;
  }

  crdFor(groupResource: string): JsonObject | undefined {
    return this.byGroupResource.get(groupResource)?.obj;
  }

  private schemaOf(view: CrdVersionView, version: string): Schema | undefined {
    return this.byName.get(view.crdName)?.schemas.get(version);
  }

  private knowsVersion(view: CrdVersionView, version: string): boolean {
    return this.byName.get(view.crdName)?.schemas.has(version) ?? false;
  }

  /**
   * Write path, step 1: prunes and defaults a request body by the requested version's schema.
   * Returns the pruned unknown fields. `obj` must be a private copy; it is modified.
   */
  decode(type: ResourceType, obj: JsonObject): string[] {
    return pruneAndDefault(obj, type.crd!.schema).unknownFields;
  }

  /** Write path, step 2: validation by the requested version's schema. */
  validateForVersion(type: ResourceType, obj: JsonObject): FieldError[] {
    return validateObject(obj, type.crd!.schema);
  }

  /** Write path, step 3: converts (apiVersion only) to the storage version and prunes by its schema. */
  toStorage(type: ResourceType, obj: JsonObject): JsonObject {
    const view = type.crd!;
    obj.apiVersion = `${type.group}/${view.storageVersion}`;
    if (view.storageVersion !== view.version) pruneAndDefault(obj, this.schemaOf(view, view.storageVersion), false);
    return obj;
  }

  /**
   * The "old object" of an UPDATE or PATCH through `type`'s version (a new object).
   *
   * apiextensions-apiserver builds one REST storage per served version; its codec decodes from
   * etcd with decoderVersion = that version (crdConversionRESTOptionsGetter → versioning codec:
   * schemaCoercingDecoder prunes by the stored version's schema, schemaCoercingConverter converts
   * and prunes by the requested version's schema, unstructuredDefaulter defaults by it). So the
   * strategy's `old` (whose status a main-resource write keeps, and which a /status write starts
   * from) and a patch's base are the stored object as the requested version sees it.
   * Guarantees: identical to {@link encodeForRead}; a write through a version whose schema lacks a
   * stored field (e.g. a legacy `status.reconciliationStatus`) re-stores the object without it.
   * Caveats: only conversion None (apiVersion rewrite). The "nothing changed" check compares the
   * new storage form with the raw stored object (as GuaranteedUpdate compares encoded bytes), so
   * even an otherwise empty write through a narrower version re-stores the object, pruned.
   */
  oldObjectFor(type: ResourceType, stored: JsonObject): JsonObject {
    return this.encodeForRead(type, stored);
  }

  /** A stored custom object as seen through `type`'s version (a new object). */
  encodeForRead(type: ResourceType, stored: JsonObject): JsonObject {
    const view = type.crd!;
    const out = cloneJson(stored);
    const storedVersion = String(stored.apiVersion ?? '').split('/')[1] ?? view.storageVersion;
    if (this.knowsVersion(view, storedVersion)) pruneAndDefault(out, this.schemaOf(view, storedVersion));
    out.apiVersion = `${type.group}/${type.version}`;
    if (storedVersion !== type.version) pruneAndDefault(out, view.schema);
    return out;
  }
}

/**
 * Checks a CRD object the way the real server's validation would refuse it, and fills the
 * defaults the real server sets (names.singular, names.listKind, conversion.strategy).
 * Throws 422 Invalid.
 */
export function validateAndDefaultCrd(crd: JsonObject): void {
  const errors: FieldError[] = [];
  const spec = crd.spec;
  const name = crd.metadata?.name ?? '';
  if (!spec || typeof spec !== 'object') {
    throw invalid('apiextensions.k8s.io', 'CustomResourceDefinition', name, [requiredValue('spec')]);
  }
  if (!spec.group) errors.push(requiredValue('spec.group'));
  if (!spec.names?.plural) errors.push(requiredValue('spec.names.plural'));
  if (!spec.names?.kind) errors.push(requiredValue('spec.names.kind'));
  if (spec.scope !== 'Namespaced' && spec.scope !== 'Cluster') {
    errors.push({
      type: 'FieldValueNotSupported',
      field: 'spec.scope',
      text: `Unsupported value: ${JSON.stringify(spec.scope ?? '')}: supported values: "Cluster", "Namespaced"`,
    });
  }
  if (spec.group && spec.names?.plural && name !== `${spec.names.plural}.${spec.group}`) {
    errors.push(invalidValue('metadata.name', name, 'must be spec.names.plural+"."+spec.group'));
  }
  const versions: JsonObject[] = Array.isArray(spec.versions) ? spec.versions : [];
  if (versions.length === 0) errors.push(invalidValue('spec.versions', null, 'must have exactly one version marked as storage version'));
  else if (versions.filter((v) => v.storage).length !== 1) {
    errors.push(invalidValue('spec.versions', versions.map((v) => v.name).join(','), 'must have exactly one version marked as storage version'));
  }
  versions.forEach((v, i) => {
    if (!v.name) errors.push(requiredValue(`spec.versions[${i}].name`));
    if (!v.schema?.openAPIV3Schema) errors.push(requiredValue(`spec.versions[${i}].schema.openAPIV3Schema`, 'schemas are required'));
  });
  if (errors.length) throw invalid('apiextensions.k8s.io', 'CustomResourceDefinition', name, errors);
  spec.names.singular ??= String(spec.names.kind).toLowerCase();
  spec.names.listKind ??= `${spec.names.kind}List`;
  spec.conversion ??= { strategy: 'None' };
}

/**
 * The status the real server's controllers set on a CRD: accepted names, NamesAccepted and
 * Established conditions, and storedVersions (which only ever grows).
 */
export function crdServerStatus(crd: JsonObject, previousStatus: JsonObject | undefined, now: string): JsonObject {
  const spec = crd.spec;
  const storage = (spec.versions as JsonObject[]).find((v) => v.storage)?.name;
  const stored: string[] = [...(previousStatus?.storedVersions ?? [])];
  if (storage && !stored.includes(storage)) stored.push(storage);
  const conditions = [
    { type: 'NamesAccepted', status: 'True', lastTransitionTime: now, reason: 'NoConflicts', message: 'no conflicts found' },
    { type: 'Established', status: 'True', lastTransitionTime: now, reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' },
  ];
  if (crd.metadata.deletionTimestamp) {
    conditions.push({
      type: 'Terminating',
      status: 'True',
      lastTransitionTime: now,
      reason: 'InstanceDeletionInProgress',
      message: 'CustomResource deletion is in progress',
    });
  }
  const prevConditions: JsonObject[] = previousStatus?.conditions ?? [];
  for (const c of conditions) {
    const prev = prevConditions.find((p) => p.type === c.type && p.status === c.status);
    if (prev?.lastTransitionTime) c.lastTransitionTime = prev.lastTransitionTime;
  }
  return { ...(previousStatus ?? {}), acceptedNames: { ...spec.names }, conditions, storedVersions: stored };
}

/** Served versions of a CRD object in preferred order. */
export function servedVersionsInOrder(versions: string[]): string[] {
  return [...versions].sort(compareKubeVersions);
}
