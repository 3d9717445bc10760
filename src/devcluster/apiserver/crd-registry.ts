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
import { invalid, invalidValue, requiredValue, type FieldError } from './errors.js';
import { pruneAndDefault, schemaOf, validateObject, type Schema } from './structural-schema.js';
import { crdRuleErrors, evaluateRules, ratchetSchemaErrors } from './crd-validation-rules.js';
import { compareKubeVersions, groupResourceKey, type KubeObject, type ResourceType, type ScaleSpec } from './resource-types.js';
import { asArray, asObject, asString, cloneJson, isJsonObject, textOf, valueAt, type JsonObject, type JsonValue } from './json-clone.js';

/** {@link CrdRegistry.oldObjectFor} results, by stored object (never changed), then version and CRD revision */
const oldObjectViews = new WeakMap<KubeObject, Map<string, KubeObject>>();

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
  obj: KubeObject;
  revision: number;
  schemas: Map<string, Schema | undefined>;
  types: ResourceType[];
}

let revisionCounter = 0;

/**
 * Readers of a CRD object's spec. A stored CRD passed validateAndDefaultCrd, which requires group,
 * names.plural, names.kind and named versions with schemas, but not their JSON types: these read
 * strings as they are and render anything else as text (`${value}` did the same before typing).
 */
const specText = (crd: JsonObject, ...path: string[]) => textOf(valueAt(crd, ['spec', ...path]));
const specVersions = (crd: JsonObject): JsonObject[] => asArray(valueAt(crd, ['spec', 'versions'])).filter(isJsonObject);
const strings = (v: JsonValue | undefined): string[] => asArray(v).filter((x) => typeof x === 'string');

/** `<group>/<plural>` of the custom objects a CRD object defines. */
export function crdGroupResource(crd: JsonObject): string {
  return groupResourceKey(specText(crd, 'group'), specText(crd, 'names', 'plural'));
}

function scaleSpecOf(v: JsonValue | undefined): ScaleSpec | undefined {
  if (!isJsonObject(v)) return undefined;
  const scale: ScaleSpec = { specReplicasPath: textOf(v.specReplicasPath), statusReplicasPath: textOf(v.statusReplicasPath) };
  if (typeof v.labelSelectorPath === 'string') scale.labelSelectorPath = v.labelSelectorPath;
  return scale;
}

function printerColumnOf(c: JsonObject): PrinterColumn {
  const column: PrinterColumn = { name: textOf(c.name), type: textOf(c.type), jsonPath: textOf(c.jsonPath) };
  if (typeof c.format === 'string') column.format = c.format;
  if (typeof c.description === 'string') column.description = c.description;
  if (typeof c.priority === 'number') column.priority = c.priority;
  return column;
}

export class CrdRegistry {
  private readonly byName = new Map<string, CrdEntry>();
  private readonly byGroupResource = new Map<string, CrdEntry>();

  /** Registers or replaces a CRD (after it was committed). */
  upsert(crd: KubeObject): void {
    const old = this.byName.get(crd.metadata.name);
    if (old) this.byGroupResource.delete(crdGroupResource(old.obj));
    const group = specText(crd, 'group');
    const plural = specText(crd, 'names', 'plural');
    const kind = specText(crd, 'names', 'kind');
    const names = asObject(valueAt(crd, ['spec', 'names']));
    const versions = specVersions(crd);
    const revision = ++revisionCounter;
    const storage = textOf(versions.find((v) => v.storage)?.name ?? versions[0]?.name);
    const schemas = new Map<string, Schema | undefined>();
    const types: ResourceType[] = [];
    const terminating = !!crd.metadata.deletionTimestamp;
    const storageVersionHash = createHash('sha256').update(`${group}/${storage}/${kind}`).digest('base64').slice(0, 11);
    for (const v of versions) {
      const version = textOf(v.name);
      const schema = schemaOf(valueAt(v, ['schema', 'openAPIV3Schema']));
      schemas.set(version, schema);
      if (!v.served) continue;
      const status = valueAt(v, ['subresources', 'status']);
      types.push({
        group,
        version,
        plural,
        singular: asString(names?.singular) ?? kind.toLowerCase(),
        kind,
        listKind: asString(names?.listKind) ?? `${kind}List`,
        namespaced: valueAt(crd, ['spec', 'scope']) !== 'Cluster',
        shortNames: strings(names?.shortNames),
        categories: strings(names?.categories),
        statusSubresource: status !== undefined && status !== null,
        scale: scaleSpecOf(valueAt(v, ['subresources', 'scale'])),
        tracksGeneration: true,
        crd: {
          crdName: crd.metadata.name,
          group,
          plural,
          version,
          storageVersion: storage,
          schema,
          printerColumns: asArray(v.additionalPrinterColumns).filter(isJsonObject).map(printerColumnOf),
          storageVersionHash,
          revision,
          terminating,
          deprecationWarning: v.deprecated ? (asString(v.deprecationWarning) ?? `${group}/${version} ${kind} is deprecated`) : undefined,
        },
      });
    }
    const entry: CrdEntry = { obj: crd, revision, schemas, types };
    this.byName.set(crd.metadata.name, entry);
    this.byGroupResource.set(groupResourceKey(group, plural), entry);
  }

  remove(name: string): void {
    const old = this.byName.get(name);
    if (!old) return;
    this.byName.delete(name);
    this.byGroupResource.delete(crdGroupResource(old.obj));
  }

  /** Served resource types of every CRD. */
  allTypes(): ResourceType[] {
    const out: ResourceType[] = [];
    for (const e of this.byName.values()) out.push(...e.types);
    return out;
  }

  crdFor(groupResource: string): KubeObject | undefined {
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

  /**
   * Write path, step 2: validation by the requested version's schema and its CEL rules
   * (crd-validation-rules.ts). `old` (an UPDATE's old object, decoded in the same version) enables
   * transition rules and ratcheting; errors ratcheted away as warnings are appended to `warnings`.
   */
  validateForVersion(type: ResourceType, obj: JsonObject, old?: JsonObject, warnings?: string[]): FieldError[] {
    const schema = type.crd!.schema;
    let errors = validateObject(obj, schema);
    if (old) errors = ratchetSchemaErrors(errors, () => validateObject(old, schema), obj, old, schema);
    const rules = evaluateRules(obj, old, schema, errors);
    warnings?.push(...rules.warnings);
    return [...errors, ...rules.errors];
  }

  /**
   * Write path, step 3: converts (apiVersion only) to the storage version and prunes by its schema.
   * Changes and returns `obj` itself (its metadata is never pruned, so a KubeObject stays one).
   */
  toStorage<T extends JsonObject>(type: ResourceType, obj: T): T {
    const view = type.crd!;
    const target: JsonObject = obj;
    target.apiVersion = `${type.group}/${view.storageVersion}`;
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
   * The result is shared and read-only (as a stored object is): it is computed once per stored
   * object, version and CRD revision, since a patch reads it as its base and then as the update's
   * old object. Callers copy what they change.
   */
  oldObjectFor(type: ResourceType, stored: KubeObject): KubeObject {
    const key = `${type.version}|${type.crd!.revision}`;
    let views = oldObjectViews.get(stored);
    if (!views) {
      views = new Map();
      oldObjectViews.set(stored, views);
    }
    let view = views.get(key);
    if (!view) {
      view = this.encodeForRead(type, stored);
      // the stored list itself (equal to the copy; metadata is never pruned): its decoding is cached (managed-fields.ts)
      if (stored.metadata.managedFields !== undefined) view.metadata.managedFields = stored.metadata.managedFields;
      views.set(key, view);
    }
    return view;
  }

  /** A stored custom object as seen through `type`'s version (a new object). */
  encodeForRead(type: ResourceType, stored: KubeObject): KubeObject {
    const view = type.crd!;
    const out = cloneJson(stored);
    const storedVersion = (stored.apiVersion ?? '').split('/')[1] ?? view.storageVersion;
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
  const name = textOf(valueAt(crd, ['metadata', 'name']) ?? '');
  if (!isJsonObject(spec)) {
    throw invalid('apiextensions.k8s.io', 'CustomResourceDefinition', name, [requiredValue('spec')]);
  }
  const names = asObject(spec.names);
  if (!spec.group) errors.push(requiredValue('spec.group'));
  if (!names?.plural) errors.push(requiredValue('spec.names.plural'));
  if (!names?.kind) errors.push(requiredValue('spec.names.kind'));
  if (spec.scope !== 'Namespaced' && spec.scope !== 'Cluster') {
    errors.push({
      type: 'FieldValueNotSupported',
      field: 'spec.scope',
      text: `Unsupported value: ${JSON.stringify(spec.scope ?? '')}: supported values: "Cluster", "Namespaced"`,
    });
  }
  if (spec.group && names?.plural && name !== `${textOf(names.plural)}.${textOf(spec.group)}`) {
    errors.push(invalidValue('metadata.name', name, 'must be spec.names.plural+"."+spec.group'));
  }
  const versions = asArray(spec.versions);
  if (versions.length === 0) errors.push(invalidValue('spec.versions', null, 'must have exactly one version marked as storage version'));
  else if (versions.filter((v) => valueAt(v, ['storage'])).length !== 1) {
    const listed = versions.map((v) => textOf(valueAt(v, ['name']) ?? '')).join(',');
    errors.push(invalidValue('spec.versions', listed, 'must have exactly one version marked as storage version'));
  }
  versions.forEach((v, i) => {
    if (!valueAt(v, ['name'])) errors.push(requiredValue(`spec.versions[${i}].name`));
    if (!valueAt(v, ['schema', 'openAPIV3Schema'])) errors.push(requiredValue(`spec.versions[${i}].schema.openAPIV3Schema`, 'schemas are required'));
  });
  errors.push(...crdValidationRuleErrors(versions));
  if (errors.length || !names) throw invalid('apiextensions.k8s.io', 'CustomResourceDefinition', name, errors);
  names.singular ??= textOf(names.kind).toLowerCase();
  names.listKind ??= `${textOf(names.kind)}List`;
  spec.conversion ??= { strategy: 'None' };
}

/**
 * The x-kubernetes-validations errors of a CRD's schemas, at the path the real server names them:
 * the internal API hoists identical per-version schemas to `spec.validation`, so those are
 * `spec.validation.openAPIV3Schema…`, different ones `spec.versions[i].schema.openAPIV3Schema…`.
 */
function crdValidationRuleErrors(versions: JsonValue[]): FieldError[] {
  const schemas = versions.map((v) => valueAt(v, ['schema', 'openAPIV3Schema']));
  if (schemas.length && schemas.every((s) => JSON.stringify(s) === JSON.stringify(schemas[0]))) {
    return isJsonObject(schemas[0]) ? crdRuleErrors(schemas[0], 'spec.validation.openAPIV3Schema') : [];
  }
  return schemas.flatMap((s, i) => (isJsonObject(s) ? crdRuleErrors(s, `spec.versions[${i}].schema.openAPIV3Schema`) : []));
}

/**
 * The status the real server's controllers set on a CRD: accepted names, NamesAccepted and
 * Established conditions, and storedVersions (which only ever grows).
 */
export function crdServerStatus(crd: JsonObject, previousStatus: JsonObject | undefined, now: string): JsonObject {
  const storage = specVersions(crd).find((v) => v.storage)?.name;
  const stored: JsonValue[] = [...asArray(previousStatus?.storedVersions)];
  if (storage && !stored.includes(storage)) stored.push(storage);
  const conditions: JsonObject[] = [
    { type: 'NamesAccepted', status: 'True', lastTransitionTime: now, reason: 'NoConflicts', message: 'no conflicts found' },
    { type: 'Established', status: 'True', lastTransitionTime: now, reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' },
  ];
  if (valueAt(crd, ['metadata', 'deletionTimestamp'])) {
    conditions.push({
      type: 'Terminating',
      status: 'True',
      lastTransitionTime: now,
      reason: 'InstanceDeletionInProgress',
      message: 'CustomResource deletion is in progress',
    });
  }
  const prevConditions = asArray(previousStatus?.conditions).filter(isJsonObject);
  for (const c of conditions) {
    const prev = prevConditions.find((p) => p.type === c.type && p.status === c.status);
    if (prev?.lastTransitionTime) c.lastTransitionTime = prev.lastTransitionTime;
  }
  return { ...(previousStatus ?? {}), acceptedNames: { ...asObject(valueAt(crd, ['spec', 'names'])) }, conditions, storedVersions: stored };
}

/** Served versions of a CRD object in preferred order. */
export function servedVersionsInOrder(versions: string[]): string[] {
  return [...versions].sort(compareKubeVersions);
}
