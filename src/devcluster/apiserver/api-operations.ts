/**
 * The registry logic of the emulated API server: get, list, create, update, patch and delete of
 * any served resource type, with the semantics of apiserver's generic registry store
 * (registry/generic/registry/store.go) and the kind strategies.
 *
 * Guarantees (each tested in test/integration/devcluster):
 * - optimistic concurrency: a stale metadata.resourceVersion on PUT or in a PATCH body → 409
 *   Conflict; PUT of a custom resource without resourceVersion → 422; duplicates → 409
 *   AlreadyExists; missing objects → 404 with the real messages;
 * - uid, creationTimestamp, generation (1 on create; +1 on any change outside metadata, and outside
 *   status when the status subresource is on); server-owned metadata cannot be overwritten;
 * - status subresource: create drops status, main writes keep the old status, /status writes only
 *   change status; scale subresource reads/writes specReplicasPath;
 * - an update that changes nothing is not written (no new resourceVersion, no watch event), as
 *   the real storage layer skips identical writes;
 * - once deletionTimestamp is set no finalizer may be added, and a write that empties the
 *   finalizers removes the object (watchers see DELETED);
 * - dryRun=All runs every check and returns the result without storing it.
 * - every write records field ownership in metadata.managedFields, and apply-patch+yaml is
 *   server-side apply with conflicts, force and removal (server-side-apply.ts).
 * Assumptions: callers only read the body of a write's result (the HTTP layer serializes it); an
 * update's answer for a custom object is shared with the old-object view of its next write.
 */
import { randomUUID } from 'node:crypto';
import { ApiError, alreadyExists, badRequest, conflict, forbidden, invalid, invalidValue, methodNotAllowed, notFound, unsupportedMediaType } from './errors.js';
import { crdGroupResource, crdServerStatus, validateAndDefaultCrd } from './crd-registry.js';
import { nameRuleFor, prepareBuiltin } from './builtin-strategies.js';
import { assertFitsEtcdRequest, uidPreconditionFailed } from './etcd-storage.js';
import { reencodeTimeFields } from './time-fields.js';
import { pruneBuiltinTopLevel, pruneObjectMeta } from './known-fields.js';
import { isKubeObject, validateFinalizersWhileDeleting, validateObjectMeta } from './object-meta-validation.js';
import { ObjectStore, cachedJson } from './object-store.js';
import { applyJsonPatch, applyMergePatch, applyStrategicMergePatch, type PatchType } from './patches.js';
import { fieldManagerOf, managedWriteFor, recordManagedFields, serverSideApply, type ManagedFieldsPlan } from './server-side-apply.js';
import { ResourceRegistry } from './resource-registry.js';
import { apiVersionOf, groupResourceKey, type KubeObject, type ResourceType } from './resource-types.js';
import { exactNameOf, labelSelectorToString, matchesFields, matchesLabels, type FieldSelector, type LabelSelector } from './selectors.js';
import { asObject, cloneJson, isJsonObject, jsonEqual, parseJsonText, textOf, valueAt, type JsonObject, type JsonValue } from './json-clone.js';

export const CRD_CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';
const CRD_GR = 'apiextensions.k8s.io/customresourcedefinitions';
const NAMESPACES_GR = '/namespaces';

export interface Scope {
  type: ResourceType;
  groupResource: string;
  /** '' for cluster-scoped resources */
  namespace: string;
}

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

export interface WriteOptions {
  dryRun?: boolean;
  fieldValidation?: FieldValidation;
  fieldManager?: string;
  force?: boolean;
  /** the request's User-Agent: names the field manager of a write without `fieldManager` */
  userAgent?: string;
  /** validating admission of the object as it would be stored (as the client's version sees it), old undefined on create; throws to refuse */
  admit?: (object: KubeObject, oldObject: KubeObject | undefined) => void;
}

export interface WriteResult {
  code: number;
  /** the object as written (a KubeObject), a Status, or a list */
  body: JsonObject;
  warnings: string[];
}

/** The result of a create or update: the object as the client sees it. */
export interface ObjectWriteResult extends WriteResult {
  body: KubeObject;
}

/** Hooks the deletion/garbage-collection machinery registers. */
export interface CommitListener {
  afterPut(groupResource: string, obj: KubeObject, prev: KubeObject | undefined): void;
  afterRemove(groupResource: string, obj: KubeObject): void;
}

export function scopeFor(type: ResourceType, namespace: string): Scope {
  const groupResource = type.storedAs?.groupResource ?? groupResourceKey(type.group, type.plural);
  return { type, groupResource, namespace: type.namespaced ? namespace : '' };
}

function nowRfc3339(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

const GENERATE_CHARS = 'bcdfghjklmnpqrstvwxz2456789';
function generateSuffix(): string {
  let s = '';
  for (let i = 0; i < 5; i++) s += GENERATE_CHARS[Math.floor(Math.random() * GENERATE_CHARS.length)];
  return s;
}

/** `finalizers` with `finalizer` added once (a value that is not a list is left for validateObjectMeta to refuse). */
function withFinalizer(finalizers: JsonValue | undefined, finalizer: string): JsonValue {
  if (finalizers === undefined || finalizers === null) return [finalizer];
  if (!Array.isArray(finalizers)) return finalizers;
  return [...new Set([...finalizers, finalizer])];
}

/** The name of an object being written, for error messages before its metadata is validated. */
function nameForErrors(meta: JsonObject): string {
  return textOf(meta.name ?? '');
}

/** Everything but metadata (and status if `withoutStatus`), for the generation rule. */
function contentOutsideMetadata(obj: KubeObject, withoutStatus: boolean): JsonObject {
  const { metadata: _m, status: _s, apiVersion: _a, ...rest } = obj;
  return withoutStatus || _s === undefined ? rest : { ...rest, status: _s };
}

/** Members of `a` and `b` equal (jsonEqual), but for `ignored`; no copies made. */
function sameMembersExcept(a: JsonObject, b: JsonObject, ignored: string): boolean {
  let count = 0;
  for (const k of Object.keys(a)) {
    if (k === ignored) continue;
    count++;
    if (!Object.hasOwn(b, k) || !jsonEqual(a[k], b[k])) return false;
  }
  for (const k of Object.keys(b)) if (k !== ignored) count--;
  return count === 0;
}

/** Key-order-insensitive equality, ignoring metadata.resourceVersion (jsonEqual of both without it). */
function sameIgnoringRv(a: KubeObject, b: KubeObject): boolean {
  return sameMembersExcept(a, b, 'metadata') && sameMembersExcept(a.metadata, b.metadata, 'resourceVersion');
}

function getPath(obj: JsonObject, path: string): JsonValue | undefined {
  return valueAt(obj, path.replace(/^\./, '').split('.'));
}

function setPath(obj: JsonObject, path: string, value: JsonValue): void {
  const parts = path.replace(/^\./, '').split('.');
  let cur = obj;
  for (const p of parts.slice(0, -1)) {
    const next = cur[p];
    if (isJsonObject(next)) cur = next;
    else {
      const created: JsonObject = {};
      cur[p] = created;
      cur = created;
    }
  }
  cur[parts[parts.length - 1]] = value;
}

export class ApiOperations {
  private listeners: CommitListener[] = [];

  constructor(
    readonly store: ObjectStore,
    readonly registry: ResourceRegistry,
  ) {}

  addListener(l: CommitListener): void {
    this.listeners.push(l);
  }

  // ---------------------------------------------------------------- reads

  /** The stored object as the client sees it through `type` (CR: schema-coerced; a new object). */
  encode(type: ResourceType, stored: KubeObject): KubeObject {
    if (type.storedAs) return type.storedAs.fromStorage(stored);
    if (!type.crd) return stored;
    return this.registry.crds.encodeForRead(type, stored);
  }

  /** JSON text of `encode()`, cached per stored object, version and CRD revision. */
  encodeJson(type: ResourceType, stored: KubeObject, asListItem = false): string {
    if (type.storedAs) {
      const encoded = type.storedAs.fromStorage(stored);
      if (!asListItem) return cachedJson(stored, `obj|${apiVersionOf(type)}`, () => JSON.stringify(encoded));
      const { kind: _k, apiVersion: _a, ...rest } = encoded;
      return cachedJson(stored, `item|${apiVersionOf(type)}`, () => JSON.stringify(rest));
    }
    if (!type.crd) {
      if (!asListItem) return cachedJson(stored, 'obj', () => JSON.stringify(stored));
      return cachedJson(stored, 'item', () => {
        const { kind: _k, apiVersion: _a, ...rest } = stored;
        return JSON.stringify(rest);
      });
    }
    return cachedJson(stored, `${type.version}|${type.crd.revision}`, () => JSON.stringify(this.encode(type, stored)));
  }

  getStored(scope: Scope, name: string): KubeObject {
    const obj = this.store.get(scope.groupResource, scope.namespace, name);
    if (!obj) throw notFound(scope.type.group, scope.type.plural, name);
    return obj;
  }

  /** Stored objects matching the selectors; namespace '' on a namespaced type means all. */
  listStored(scope: Scope, labels: LabelSelector, fields: FieldSelector, allNamespaces: boolean): KubeObject[] {
    const ns = scope.type.namespaced && allNamespaces ? undefined : scope.namespace;
    const name = exactNameOf(fields);
    let candidates: Iterable<KubeObject>;
    if (name !== undefined && ns !== undefined) {
      const one = this.store.get(scope.groupResource, ns, name);
      candidates = one ? [one] : [];
    } else candidates = this.store.list(scope.groupResource, ns);
    const out: KubeObject[] = [];
    for (const o of candidates) {
      if (labels.length && !matchesLabels(labels, o.metadata.labels)) continue;
      if (fields.length && !matchesFields(fields, o)) continue;
      out.push(o);
    }
    // etcd key order: namespace, then name (plain code-unit comparison, no locale)
    const key = (o: KubeObject): string => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;
    out.sort((a, b) => {
      const ka = key(a);
      const kb = key(b);
      return ka < kb ? -1 : ka > kb ? 1 : 0;
    });
    return out;
  }

  scaleOf(scope: Scope, stored: KubeObject): JsonObject {
    const obj = this.encode(scope.type, stored);
    const spec = scope.type.scale!;
    const selectorValue = spec.labelSelectorPath ? getPath(obj, spec.labelSelectorPath) : undefined;
    let selector: string | undefined;
    const specSelector = valueAt(obj, ['spec', 'selector']);
    if (typeof selectorValue === 'string') selector = selectorValue;
    else if (!scope.type.crd && isJsonObject(specSelector)) selector = labelSelectorToString(specSelector);
    const status: JsonObject = { replicas: Number(getPath(obj, spec.statusReplicasPath) ?? 0) };
    if (selector) status.selector = selector;
    const meta: JsonObject = {
      name: obj.metadata.name,
      uid: obj.metadata.uid,
      resourceVersion: obj.metadata.resourceVersion,
      creationTimestamp: obj.metadata.creationTimestamp,
    };
    if (obj.metadata.namespace) meta.namespace = obj.metadata.namespace;
    return { kind: 'Scale', apiVersion: 'autoscaling/v1', metadata: meta, spec: { replicas: Number(getPath(obj, spec.specReplicasPath) ?? 0) }, status };
  }

  // ---------------------------------------------------------------- create

  create(scope: Scope, body: JsonValue | undefined, opts: WriteOptions, managed: ManagedFieldsPlan = {}): ObjectWriteResult {
    const { type } = scope;
    if (!isJsonObject(body)) throw badRequest("Object 'Kind' is missing in 'null'");
    if (type.storedAs) return this.throughStorageVersion(scope, body, true, (s, b) => this.create(s, b, opts));
    const obj = cloneJson(body);
    this.checkTypeMeta(type, obj);
    reencodeTimeFields(scope.groupResource, type, obj, 'body');
    obj.apiVersion = apiVersionOf(type);
    obj.kind = type.kind;
    const meta: JsonObject = isJsonObject(obj.metadata) ? obj.metadata : {};
    obj.metadata = meta;
    if (type.namespaced) {
      if (meta.namespace && meta.namespace !== scope.namespace)
        throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
      meta.namespace = scope.namespace;
    } else delete meta.namespace;
    if (!meta.name && meta.generateName) meta.name = `${textOf(meta.generateName)}${generateSuffix()}`;
    if (type.namespaced) this.checkNamespaceWritable(scope, nameForErrors(meta));
    if (type.crd?.terminating) throw methodNotAllowed('create', type.kind);

    const warnings: string[] = [];
    let toStore = obj;
    const unknownMeta = [...pruneBuiltinTopLevel(scope.groupResource, obj), ...pruneObjectMeta(obj)];
    if (!type.crd) this.handleUnknownFields(type, unknownMeta, opts, warnings);
    if (type.crd) {
      this.handleUnknownFields(type, [...unknownMeta, ...this.registry.crds.decode(type, obj)], opts, warnings);
      if (type.statusSubresource) delete obj.status;
      const errors = this.registry.crds.validateForVersion(type, obj);
      if (errors.length) throw invalid(type.group, type.kind, nameForErrors(meta), errors);
      toStore = this.registry.crds.toStorage(type, obj);
    }
    // toStorage changes the object in place and never prunes metadata: `meta` is still toStore's
    const m = meta;
    const sentManagedFields = m.managedFields;
    for (const k of ['uid', 'resourceVersion', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'selfLink', 'managedFields']) delete m[k];
    const created = nowRfc3339();
    m.uid = randomUUID();
    m.creationTimestamp = created;
    if (type.tracksGeneration) m.generation = 1;
    else delete m.generation;
    if (scope.groupResource === CRD_GR) {
      validateAndDefaultCrd(toStore);
      m.finalizers = withFinalizer(m.finalizers, CRD_CLEANUP_FINALIZER);
      toStore.status = crdServerStatus(toStore, undefined, created);
    }
    const metaErrors = validateObjectMeta(m, nameRuleFor(scope.groupResource), type.namespaced);
    if (metaErrors.length || !isKubeObject(toStore)) throw invalid(type.group, type.kind, nameForErrors(m), metaErrors);
    if (!type.crd && scope.groupResource !== CRD_GR) prepareBuiltin(scope.groupResource, toStore, undefined);
    recordManagedFields(type, undefined, toStore, sentManagedFields, fieldManagerOf(opts), managed, nowRfc3339());
    opts.admit?.(this.encode(type, toStore), undefined);
    if (!opts.dryRun) assertFitsEtcdRequest(type, toStore);
    if (this.store.get(scope.groupResource, scope.namespace, toStore.metadata.name)) throw alreadyExists(type.group, type.plural, toStore.metadata.name);
    if (opts.dryRun) {
      toStore.metadata.resourceVersion = undefined;
      return { code: 201, body: this.encode(type, toStore), warnings };
    }
    const stored = this.commitPut(scope.groupResource, toStore, undefined);
    return { code: 201, body: this.encode(type, stored), warnings };
  }

  /**
   * A write through a version stored as another (events.k8s.io/v1 Events): the body is checked and
   * converted to the storage version, written through it, and the result converted back.
   */
  private throughStorageVersion(
    scope: Scope,
    body: JsonObject,
    isCreate: boolean,
    write: (storageScope: Scope, storageBody: JsonObject) => ObjectWriteResult,
  ): ObjectWriteResult {
    const { type } = scope;
    const conversion = type.storedAs!;
    this.checkTypeMeta(type, body);
    const storageType = this.registry.anyTypeOf(conversion.groupResource)!;
    if (isCreate) {
      const withNamespace = cloneJson(body);
      withNamespace.metadata = { ...asObject(withNamespace.metadata), namespace: scope.namespace };
      const errors = conversion.validateCreate(withNamespace);
      if (errors.length) throw invalid(type.group, type.kind, nameForErrors(asObject(body.metadata) ?? {}), errors);
    }
    const result = write(scopeFor(storageType, scope.namespace), conversion.toStorage(body));
    return { ...result, body: conversion.fromStorage(result.body) };
  }

  private checkTypeMeta(type: ResourceType, obj: JsonObject): void {
    const expected = apiVersionOf(type);
    if (obj.apiVersion !== undefined && obj.apiVersion !== expected) {
      throw badRequest(`the API version in the data (${textOf(obj.apiVersion)}) does not match the expected API version (${expected})`);
    }
    if (obj.kind !== undefined && obj.kind !== type.kind) {
      throw badRequest(`the kind in the data (${textOf(obj.kind)}) does not match the expected kind (${type.kind})`);
    }
  }

  private checkNamespaceWritable(scope: Scope, name: string): void {
    const ns = this.store.get(NAMESPACES_GR, '', scope.namespace);
    if (!ns) throw notFound('', 'namespaces', scope.namespace);
    if (ns.metadata.deletionTimestamp) {
      throw forbidden(scope.type.group, scope.type.plural, name, `unable to create new content in namespace ${scope.namespace} because it is being terminated`);
    }
  }

  private handleUnknownFields(type: ResourceType, unknown: string[], opts: WriteOptions, warnings: string[]): void {
    if (unknown.length === 0) return;
    const mode = opts.fieldValidation ?? 'Warn';
    if (mode === 'Strict') {
      throw badRequest(
        `${type.kind} in version "${type.version}" cannot be handled as a ${type.kind}: strict decoding error: ${unknown.map((f) => `unknown field "${f}"`).join(', ')}`,
      );
    }
    if (mode === 'Warn') for (const f of unknown) warnings.push(`unknown field "${f}"`);
  }

  /**
   * A `metadata.uid` other than the stored one: on PUT it is a storage precondition (409, see
   * etcd-storage.ts); in the result of a main-resource patch it fails ObjectMeta update
   * validation (rest.BeforeUpdate → ValidateObjectMetaAccessorUpdate: the uid is immutable).
   */
  private checkSentUid(scope: Scope, old: KubeObject, meta: JsonObject, fromPatch: boolean, subresource: '' | 'status'): void {
    if (meta.uid === undefined || meta.uid === null || meta.uid === '' || textOf(meta.uid) === old.metadata.uid) return;
    const { type } = scope;
    if (!fromPatch) throw uidPreconditionFailed(type, scope.namespace, old.metadata.name, textOf(meta.uid), old.metadata.uid ?? '');
    if (subresource === '') throw invalid(type.group, type.kind, old.metadata.name, [invalidValue('metadata.uid', meta.uid, 'field is immutable')]);
  }

  // ---------------------------------------------------------------- update

  /**
   * PUT (and the tail of PATCH). `subresource` '' | 'status'. `body` is the full object as the
   * client sees it; `fromPatch` skips the "resourceVersion required" rule of custom resources.
   */
  update(
    scope: Scope,
    name: string,
    body: JsonValue | undefined,
    opts: WriteOptions,
    subresource: '' | 'status',
    fromPatch = false,
    managed: ManagedFieldsPlan = {},
  ): ObjectWriteResult {
    const { type } = scope;
    if (!isJsonObject(body)) throw badRequest("Object 'Kind' is missing in 'null'");
    if (type.storedAs) return this.throughStorageVersion(scope, body, false, (s, b) => this.update(s, name, b, opts, subresource, fromPatch));
    const old = this.getStored(scope, name);
    // The old object as the requested version's REST storage decodes it (see CrdRegistry.oldObjectFor).
    const oldView = type.crd ? this.registry.crds.oldObjectFor(type, old) : old;
    const obj = cloneJson(body);
    this.checkTypeMeta(type, obj);
    reencodeTimeFields(scope.groupResource, type, obj, fromPatch ? 'patch' : 'body');
    obj.apiVersion = apiVersionOf(type);
    obj.kind = type.kind;
    const meta: JsonObject = isJsonObject(obj.metadata) ? obj.metadata : {};
    obj.metadata = meta;
    if (meta.name !== undefined && meta.name !== name) {
      throw badRequest(`the name of the object (${textOf(meta.name)}) does not match the name on the URL (${name})`);
    }
    meta.name = name;
    if (type.namespaced) {
      if (meta.namespace && meta.namespace !== scope.namespace)
        throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
      meta.namespace = scope.namespace;
    }
    this.checkSentUid(scope, old, meta, fromPatch, subresource);
    const sentManagedFields = meta.managedFields;
    const rv = meta.resourceVersion;
    if (rv === undefined || rv === '' || rv === null) {
      if (type.crd && !fromPatch) {
        throw invalid(type.group, type.kind, name, [
          { type: 'FieldValueInvalid', field: 'metadata.resourceVersion', text: 'Invalid value: 0x0: must be specified for an update' },
        ]);
      }
    } else if (textOf(rv) !== old.metadata.resourceVersion) {
      throw conflict(type.group, type.plural, name);
    }
    // the stored revision replaces the one sent, in place (a body without one gets it last, below)
    if (rv !== undefined) meta.resourceVersion = old.metadata.resourceVersion;

    const warnings: string[] = [];
    let next: KubeObject;
    const unknownMeta = [...pruneBuiltinTopLevel(scope.groupResource, obj), ...pruneObjectMeta(obj)];
    this.handleUnknownFields(type, type.crd ? [...unknownMeta, ...this.registry.crds.decode(type, obj)] : unknownMeta, opts, warnings);
    if (subresource === 'status') {
      const merged = cloneJson(oldView);
      merged.apiVersion = apiVersionOf(type);
      if (obj.status === undefined) delete merged.status;
      else merged.status = obj.status;
      next = merged;
    } else {
      // server-owned metadata comes from the stored object
      const m = meta;
      for (const k of ['uid', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'generation']) {
        if (old.metadata[k] === undefined) delete m[k];
        else m[k] = old.metadata[k];
      }
      delete m.managedFields;
      if (type.statusSubresource) {
        if (oldView.status === undefined) delete obj.status;
        else obj.status = cloneJson(oldView.status);
      }
      const finalizerErrors = validateFinalizersWhileDeleting(old.metadata, m);
      if (finalizerErrors.length) throw invalid(type.group, type.kind, name, finalizerErrors);
      const metaErrors = validateObjectMeta(m, nameRuleFor(scope.groupResource), type.namespaced);
      if (metaErrors.length || !isKubeObject(obj)) throw invalid(type.group, type.kind, name, metaErrors);
      next = obj;
      if (scope.groupResource === CRD_GR) {
        validateAndDefaultCrd(next);
        if (!next.metadata.deletionTimestamp) next.metadata.finalizers = [...new Set([...(next.metadata.finalizers ?? []), CRD_CLEANUP_FINALIZER])];
      } else if (!type.crd) prepareBuiltin(scope.groupResource, next, old);
    }
    const changesGeneration = (a: KubeObject, b: KubeObject) =>
      !jsonEqual(contentOutsideMetadata(a, type.statusSubresource), contentOutsideMetadata(b, type.statusSubresource));
    recordManagedFields(type, oldView, next, sentManagedFields, fieldManagerOf(opts), { subresource, ...managed }, nowRfc3339());
    let crBump = false;
    if (type.crd) {
      const errors = this.registry.crds.validateForVersion(type, next, oldView, warnings);
      if (errors.length) throw invalid(type.group, type.kind, name, errors);
      // the strategy compares in the requested version, old object decoded (read-time defaults applied)
      crBump = changesGeneration(next, oldView);
      next = this.registry.crds.toStorage(type, next);
    }
    if (scope.groupResource === CRD_GR) next.status = crdServerStatus(next, asObject(old.status), nowRfc3339());
    if (type.tracksGeneration && subresource !== 'status') {
      const bump = type.crd ? crBump : changesGeneration(next, old);
      next.metadata.generation = (old.metadata.generation ?? 0) + (bump ? 1 : 0);
    }
    next.metadata.resourceVersion = old.metadata.resourceVersion;
    opts.admit?.(this.encode(type, next), oldView);
    if (sameIgnoringRv(next, old)) return { code: 200, body: this.encode(type, old), warnings };
    if (opts.dryRun) return { code: 200, body: this.encode(type, next), warnings };
    // generic registry ShouldDeleteDuringUpdate: not while a graceful deletion (a pod's) is pending
    if (next.metadata.deletionTimestamp && (next.metadata.finalizers ?? []).length === 0 && !old.metadata.deletionGracePeriodSeconds) {
      const removed = this.commitRemove(scope.groupResource, scope.namespace, name, next);
      return { code: 200, body: this.encode(type, removed ?? next), warnings };
    }
    assertFitsEtcdRequest(type, next);
    const stored = this.commitPut(scope.groupResource, next, old);
    // a custom object's answer is the view its next write starts from (shared, read-only; see CrdRegistry.oldObjectFor)
    return { code: 200, body: type.crd ? this.registry.crds.oldObjectFor(type, stored) : this.encode(type, stored), warnings };
  }

  /** PUT on /scale: body is an autoscaling/v1 Scale. */
  updateScale(scope: Scope, name: string, scale: JsonValue | undefined, opts: WriteOptions): WriteResult {
    if (!isJsonObject(scale)) throw badRequest("Object 'Kind' is missing in 'null'");
    const stored = this.getStored(scope, name);
    const rv = valueAt(scale, ['metadata', 'resourceVersion']);
    if (rv && textOf(rv) !== stored.metadata.resourceVersion) throw conflict(scope.type.group, scope.type.plural, name);
    const replicas = valueAt(scale, ['spec', 'replicas']);
    if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
      throw invalid('autoscaling', 'Scale', name, [
        { type: 'FieldValueInvalid', field: 'spec.replicas', text: `Invalid value: ${textOf(replicas)}: must be greater than or equal to 0` },
      ]);
    }
    const current = cloneJson(this.encode(scope.type, stored));
    setPath(current, scope.type.scale!.specReplicasPath, replicas);
    const result = this.update(scope, name, current, opts, '', true, { subresource: 'scale' });
    const after = this.store.get(scope.groupResource, scope.namespace, name) ?? stored;
    return { code: result.code, body: this.scaleOf(scope, opts.dryRun ? result.body : after), warnings: result.warnings };
  }

  // ---------------------------------------------------------------- patch

  patch(scope: Scope, name: string, patchType: PatchType, rawBody: string, opts: WriteOptions, subresource: '' | 'status' | 'scale'): WriteResult {
    const { type } = scope;
    if (opts.force !== undefined && patchType !== 'apply') {
      throw new ApiError(422, 'Invalid', 'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch', {
        group: 'meta.k8s.io',
        kind: 'PatchOptions',
        causes: [{ reason: 'FieldValueForbidden', message: 'Forbidden: may not be specified for non-apply patch', field: 'force' }],
      });
    }
    if (patchType === 'apply' && !opts.fieldManager) {
      throw new ApiError(422, 'Invalid', 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch', {
        group: 'meta.k8s.io',
        kind: 'PatchOptions',
        causes: [{ reason: 'FieldValueRequired', message: 'Required value: is required for apply patch', field: 'fieldManager' }],
      });
    }
    if (patchType === 'strategic' && type.crd) {
      throw unsupportedMediaType(
        'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml',
      );
    }
    let patchBody: JsonValue;
    try {
      patchBody = parseJsonText(rawBody, patchType === 'apply');
    } catch (e) {
      throw badRequest(`error decoding patch: ${(e as Error).message}`);
    }
    const stored = this.store.get(scope.groupResource, scope.namespace, name);
    if (patchType === 'apply' && subresource !== 'scale') return this.applyConfiguration(scope, name, patchBody, opts, subresource, stored);
    if (!stored) throw notFound(type.group, type.plural, name);
    if (subresource === 'scale') {
      const current = this.scaleOf(scope, stored);
      const patched = this.applyPatchOf(patchType, current, patchBody, false);
      return this.updateScale(scope, name, patched, opts);
    }
    // the base as the update will see its old object (shared: no patch changes its target, see patches.ts)
    const current = type.crd && !type.storedAs ? this.registry.crds.oldObjectFor(type, stored) : this.encode(type, stored);
    const patched = this.applyPatchOf(patchType, current, patchBody, !type.crd);
    const prv = valueAt(patched, ['metadata', 'resourceVersion']);
    if (prv !== undefined && prv !== null && textOf(prv) !== stored.metadata.resourceVersion) throw conflict(type.group, type.plural, name);
    // a copy of metadata: a merge patch that did not touch it shares the base's
    if (isJsonObject(patched.metadata)) patched.metadata = { ...patched.metadata, resourceVersion: stored.metadata.resourceVersion };
    return this.update(scope, name, patched, opts, subresource, true);
  }

  private applyPatchOf(patchType: PatchType, current: JsonObject, patchBody: JsonValue, builtin: boolean): JsonObject {
    let out: JsonValue | undefined;
    switch (patchType) {
      case 'json':
        out = applyJsonPatch(current, patchBody);
        break;
      case 'merge':
        out = applyMergePatch(current, patchBody);
        break;
      case 'strategic':
        out = applyStrategicMergePatch(current, patchBody);
        break;
      case 'apply':
        // only /scale gets here: its Scale object is small enough for a merge to be the apply
        if (!isJsonObject(patchBody)) throw badRequest('apply patch must be an object');
        out = builtin ? applyStrategicMergePatch(current, patchBody, false) : applyMergePatch(current, patchBody);
        break;
    }
    if (!isJsonObject(out)) throw badRequest('the patched object is not an object');
    return out;
  }

  /** apply-patch+yaml on the object or its /status: server-side apply (creates the object when absent). */
  private applyConfiguration(scope: Scope, name: string, config: JsonValue, opts: WriteOptions, subresource: '' | 'status', stored?: KubeObject): WriteResult {
    const { type } = scope;
    if (!isJsonObject(config)) throw badRequest('apply patch must be an object');
    if (!stored && subresource !== '') throw notFound(type.group, type.plural, name);
    const live: JsonObject = stored ? this.encode(type, stored) : {};
    const applied = serverSideApply(live, config, opts.fieldManager ?? '', opts.force ?? false, managedWriteFor(type, subresource, nowRfc3339()));
    const body = applied.object;
    if (!stored) {
      body.metadata = { ...asObject(body.metadata), name };
      return this.create(scope, body, opts, { applied: applied.managedFields });
    }
    const prv = valueAt(body, ['metadata', 'resourceVersion']);
    if (prv !== undefined && prv !== null && textOf(prv) !== stored.metadata.resourceVersion) throw conflict(type.group, type.plural, name);
    body.metadata = { ...asObject(body.metadata), resourceVersion: stored.metadata.resourceVersion };
    return this.update(scope, name, body, opts, subresource, true, { applied: applied.managedFields });
  }

  // ---------------------------------------------------------------- commits

  /** Stores `obj` (a new object), returns the stored object, and notifies listeners. */
  commitPut(groupResource: string, obj: KubeObject, prev: KubeObject | undefined): KubeObject {
    const stored = this.store.put(groupResource, obj);
    if (groupResource === CRD_GR) this.registry.crdChanged(stored);
    for (const l of this.listeners) l.afterPut(groupResource, stored, prev);
    return stored;
  }

  commitRemove(groupResource: string, namespace: string, name: string, finalState?: KubeObject): KubeObject | undefined {
    const removed = this.store.remove(groupResource, namespace, name, finalState);
    if (!removed) return undefined;
    if (groupResource === CRD_GR) {
      this.registry.crdRemoved(removed.metadata.name);
      this.store.dropGroupResource(crdGroupResource(removed));
    }
    for (const l of this.listeners) l.afterRemove(groupResource, removed);
    return removed;
  }
}
