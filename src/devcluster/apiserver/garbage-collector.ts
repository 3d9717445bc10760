/**
 * Deletion: finalizers and deletionTimestamp, propagation policies, the garbage collector over
 * ownerReferences (by uid), namespace termination and CRD instance cleanup.
 *
 * Guarantees:
 * - DELETE of an object with finalizers sets deletionTimestamp (and deletionGracePeriodSeconds 0,
 *   generation+1 where tracked) and answers 200 with the object; it stays until a write empties
 *   its finalizers. Without finalizers it is removed at once and the answer is a Success Status.
 * - Background: the owner goes now; the collector then deletes every dependent whose owners are
 *   all gone (a cross-namespace owner counts as absent) and strips dangling references from
 *   dependents that still have a live owner. Foreground: the owner gets the `foregroundDeletion`
 *   finalizer and stays until its blockOwnerDeletion dependents are gone; the collector deletes
 *   its dependents, in foreground those that have dependents themselves (a ReplicaSet with pods),
 *   in background the others, so pods terminate gracefully (Kubernetes "Use cascading deletion",
 *   garbagecollector.go attemptToDeleteItem). Orphan: dependents lose their reference to the
 *   owner before the owner goes.
 * - Deleting a namespace marks it Terminating (no new objects in it), deletes its content, and
 *   removes it when empty. Deleting a CRD deletes its custom objects, then the CRD.
 * Assumptions: collection runs asynchronously (setImmediate), like the real collector; tests wait
 * for it (`settled()`).
 * - Pods bound to a node (`spec.nodeName`) are deleted gracefully, as the pod strategy's
 *   CheckGracefulDelete and rest.BeforeDelete do: the grace period is the request's
 *   gracePeriodSeconds, else `spec.terminationGracePeriodSeconds`, else 30 (the API default); 0 for
 *   an unbound pod or one in phase Succeeded/Failed; a negative one becomes 1. A positive period sets
 *   deletionTimestamp = now + period and deletionGracePeriodSeconds and answers 200 with the pod
 *   (MODIFIED event, `kubectl get` shows Terminating); the node's kubelet then deletes it with
 *   gracePeriodSeconds=0. A later delete may only shorten the period.
 * Caveats: Orphan does not use the `orphan` finalizer; without a kubelet (api-only mode) a bound
 * pod stays Terminating, as on a cluster whose node is gone.
 */
import { badRequest, conflictWithMessage, forbidden, notSupported, invalid, successStatus, type StatusDetails } from './errors.js';
import { CRD_CLEANUP_FINALIZER, type ApiOperations, type CommitListener, type Scope, type WriteResult } from './api-operations.js';
import { crdGroupResource } from './crd-registry.js';
import { parseKeyString, type ObjectKey } from './object-store.js';
import type { KubeObject, OwnerReference } from './resource-types.js';
import { matchesFields, matchesLabels, type FieldSelector, type LabelSelector } from './selectors.js';
import { asObject, cloneJson, textOf, valueAt, type JsonValue } from './json-clone.js';

export const FOREGROUND_FINALIZER = 'foregroundDeletion';
const NAMESPACES_GR = '/namespaces';
/** NamespaceLifecycle admission refuses to delete these. */
const IMMORTAL_NAMESPACES = new Set(['default', 'kube-system', 'kube-public']);
const CRD_GR = 'apiextensions.k8s.io/customresourcedefinitions';
const PODS_GR = '/pods';
/** The API's default `spec.terminationGracePeriodSeconds`. */
const DEFAULT_TERMINATION_GRACE_SECONDS = 30;

/** The grace period of a pod deletion, as the pod strategy's CheckGracefulDelete computes it. */
export function podGracePeriodSeconds(pod: KubeObject, options: DeleteOptions): number {
  const requested = options.gracePeriodSeconds;
  const specified = valueAt(pod, ['spec', 'terminationGracePeriodSeconds']);
  let period = typeof requested === 'number' ? requested : typeof specified === 'number' ? specified : DEFAULT_TERMINATION_GRACE_SECONDS;
  const nodeName = valueAt(pod, ['spec', 'nodeName']);
  if (typeof nodeName !== 'string' || nodeName === '') period = 0;
  const phase = valueAt(pod, ['status', 'phase']);
  if (phase === 'Succeeded' || phase === 'Failed') period = 0;
  return period < 0 ? 1 : Math.floor(period);
}

export type PropagationPolicy = 'Background' | 'Foreground' | 'Orphan';

/**
 * A DeleteOptions body (with the query's propagationPolicy/orphanDependents set on it): JSON as
 * sent, each field checked where it is read (policyOf refuses an unknown propagationPolicy).
 */
export interface DeleteOptions {
  propagationPolicy?: JsonValue;
  orphanDependents?: JsonValue;
  /** { uid?, resourceVersion? } */
  preconditions?: JsonValue;
  /** pods bound to a node: the grace period (see podGracePeriodSeconds); other kinds ignore it */
  gracePeriodSeconds?: JsonValue;
  /** ["All"] */
  dryRun?: JsonValue;
}

/** DeleteOptions.dryRun names "All" (a list, as sent by clients; a string is read the same way). */
export function isDryRun(options: DeleteOptions): boolean {
  const dryRun = options.dryRun;
  if (Array.isArray(dryRun)) return dryRun.includes('All');
  return typeof dryRun === 'string' && dryRun.includes('All');
}

function nowRfc3339(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function keyOf(o: KubeObject, gr: string): string {
  return `${gr}\u0000${o.metadata.namespace ?? ''}\u0000${o.metadata.name}`;
}

export class GarbageCollector implements CommitListener {
  private readonly queue = new Set<string>();
  private scheduled = false;
  private idleWaiters: (() => void)[] = [];
  private stopped = false;

  constructor(private readonly ops: ApiOperations) {
    ops.addListener(this);
  }

  stop(): void {
    this.stopped = true;
    this.queue.clear();
  }

  /** Resolves once the collector has nothing left to do. */
  settled(): Promise<void> {
    if (this.queue.size === 0 && !this.scheduled) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  // ---------------------------------------------------------------- DELETE

  deleteObject(scope: Scope, name: string, options: DeleteOptions, dryRun: boolean): WriteResult {
    const { type } = scope;
    const obj = this.ops.getStored(scope, name);
    const preUid = valueAt(options.preconditions, ['uid']);
    const preRv = valueAt(options.preconditions, ['resourceVersion']);
    if (preUid && preUid !== obj.metadata.uid) {
      throw conflictWithMessage(
        type.group,
        type.plural,
        name,
        `Precondition failed: UID in precondition: ${textOf(preUid)}, UID in object meta: ${obj.metadata.uid}`,
      );
    }
    if (preRv && preRv !== obj.metadata.resourceVersion) {
      throw conflictWithMessage(
        type.group,
        type.plural,
        name,
        `Precondition failed: ResourceVersion in precondition: ${textOf(preRv)}, ResourceVersion in object meta: ${obj.metadata.resourceVersion}`,
      );
    }
    const policy = this.policyOf(options, type.kind, name, type.group);
    if (dryRun) return { code: 200, body: successStatus({ name, group: type.group || undefined, kind: type.plural, uid: obj.metadata.uid }), warnings: [] };
    if (policy === 'Orphan') this.orphanDependents(obj.metadata.uid ?? '');

    if (scope.groupResource === NAMESPACES_GR) {
      if (IMMORTAL_NAMESPACES.has(name)) throw forbidden('', 'namespaces', name, 'this namespace may not be deleted');
      let ns = obj;
      if (!obj.metadata.deletionTimestamp) {
        ns = cloneJson(obj);
        ns.metadata.deletionTimestamp = nowRfc3339();
        ns.status = { ...asObject(ns.status), phase: 'Terminating' };
        ns = this.ops.commitPut(scope.groupResource, ns, obj);
      }
      this.enqueue(`ns:${name}`);
      return { code: 200, body: ns, warnings: [] };
    }

    if (scope.groupResource === PODS_GR) {
      const graceful = this.gracefulPodDelete(scope, obj, podGracePeriodSeconds(obj, options), policy);
      if (graceful) return graceful;
    }
    const finalizers: string[] = [...(obj.metadata.finalizers ?? [])];
    if (policy === 'Foreground' && !finalizers.includes(FOREGROUND_FINALIZER)) finalizers.push(FOREGROUND_FINALIZER);
    if (finalizers.length > 0) {
      const alreadyDeleting = !!obj.metadata.deletionTimestamp;
      if (alreadyDeleting && finalizers.length === (obj.metadata.finalizers ?? []).length) {
        return { code: 200, body: this.ops.encode(type, obj), warnings: [] };
      }
      const next = cloneJson(obj);
      next.metadata.finalizers = finalizers;
      if (!alreadyDeleting) {
        next.metadata.deletionTimestamp = nowRfc3339();
        next.metadata.deletionGracePeriodSeconds = 0;
        if (type.tracksGeneration) next.metadata.generation = (obj.metadata.generation ?? 0) + 1;
      }
      const stored = this.ops.commitPut(scope.groupResource, next, obj);
      return { code: 200, body: this.ops.encode(type, stored), warnings: [] };
    }
    this.ops.commitRemove(scope.groupResource, scope.namespace, name);
    const details: StatusDetails = { name };
    if (type.group) details.group = type.group;
    details.kind = type.plural;
    details.uid = obj.metadata.uid;
    return { code: 200, body: successStatus(details), warnings: [] };
  }

  /**
   * rest.BeforeDelete for a pod: a positive grace period marks it (or shortens the period of a pod
   * already terminating); undefined when the delete proceeds as a non-graceful one (period 0).
   */
  private gracefulPodDelete(scope: Scope, pod: KubeObject, period: number, policy: PropagationPolicy): WriteResult | undefined {
    const current = pod.metadata.deletionGracePeriodSeconds;
    if (pod.metadata.deletionTimestamp && current !== undefined && period >= current)
      return { code: 200, body: this.ops.encode(scope.type, pod), warnings: [] };
    if (period === 0) {
      if (!pod.metadata.deletionTimestamp || !pod.metadata.finalizers?.length) return undefined;
    }
    const next = cloneJson(pod);
    next.metadata.deletionTimestamp = new Date(Date.now() + period * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    next.metadata.deletionGracePeriodSeconds = period;
    if (policy === 'Foreground' && !(pod.metadata.finalizers ?? []).includes(FOREGROUND_FINALIZER)) {
      next.metadata.finalizers = [...(pod.metadata.finalizers ?? []), FOREGROUND_FINALIZER];
    }
    const stored = this.ops.commitPut(scope.groupResource, next, pod);
    return { code: 200, body: this.ops.encode(scope.type, stored), warnings: [] };
  }

  deleteCollection(scope: Scope, labels: LabelSelector, fields: FieldSelector, options: DeleteOptions, dryRun: boolean): WriteResult {
    const items: KubeObject[] = [];
    for (const o of [...this.ops.store.list(scope.groupResource, scope.type.namespaced ? scope.namespace : undefined)]) {
      if (!matchesLabels(labels, o.metadata.labels) || !matchesFields(fields, o)) continue;
      this.deleteObject(scope, o.metadata.name, options, dryRun);
      items.push(this.ops.encode(scope.type, this.ops.store.get(scope.groupResource, scope.namespace, o.metadata.name) ?? o));
    }
    return {
      code: 200,
      body: {
        kind: scope.type.listKind,
        apiVersion: scope.type.group ? `${scope.type.group}/${scope.type.version}` : 'v1',
        metadata: { resourceVersion: String(this.ops.store.currentRevision()) },
        items,
      },
      warnings: [],
    };
  }

  private policyOf(options: DeleteOptions, kind: string, name: string, group: string): PropagationPolicy {
    const policy = options.propagationPolicy;
    if (policy !== undefined) {
      if (policy !== 'Background' && policy !== 'Foreground' && policy !== 'Orphan') {
        throw invalid(group, kind, name, [notSupported('propagationPolicy', policy, ['Foreground', 'Background', 'Orphan'])]);
      }
      if (options.orphanDependents !== undefined) throw badRequest('orphanDependents and deletionPropagation cannot be both set');
      return policy;
    }
    return options.orphanDependents === true ? 'Orphan' : 'Background';
  }

  private orphanDependents(uid: string): void {
    for (const k of this.ops.store.dependentsOf(uid)) {
      const dep = this.ops.store.get(k.groupResource, k.namespace, k.name);
      if (!dep) continue;
      const next = cloneJson(dep);
      const refs = (dep.metadata.ownerReferences ?? []).filter((r) => r.uid !== uid);
      next.metadata.ownerReferences = refs;
      if (refs.length === 0) delete next.metadata.ownerReferences;
      this.ops.commitPut(k.groupResource, next, dep);
    }
  }

  // ---------------------------------------------------------------- listener

  afterPut(groupResource: string, obj: KubeObject, prev: KubeObject | undefined): void {
    if (obj.metadata.ownerReferences?.length) this.enqueue(`check:${keyOf(obj, groupResource)}`);
    if (obj.metadata.deletionTimestamp) {
      if (groupResource === NAMESPACES_GR) this.enqueue(`ns:${obj.metadata.name}`);
      if (groupResource === CRD_GR) this.enqueue(`crd:${obj.metadata.name}`);
      if ((obj.metadata.finalizers ?? []).includes(FOREGROUND_FINALIZER) && !prev?.metadata.deletionTimestamp) this.enqueue(`dependents:${obj.metadata.uid}`);
      if ((obj.metadata.finalizers ?? []).includes(FOREGROUND_FINALIZER)) this.enqueue(`fg:${obj.metadata.uid}`);
    }
  }

  afterRemove(groupResource: string, obj: KubeObject): void {
    this.enqueue(`dependents:${obj.metadata.uid}`);
    for (const ref of obj.metadata.ownerReferences ?? []) if (ref?.uid) this.enqueue(`fg:${ref.uid}`);
    const ns = obj.metadata.namespace;
    if (ns) {
      const nsObj = this.ops.store.get(NAMESPACES_GR, '', ns);
      if (nsObj?.metadata.deletionTimestamp) this.enqueue(`ns:${ns}`);
    }
    const crd = this.ops.registry.crds.crdFor(groupResource);
    if (crd?.metadata.deletionTimestamp) this.enqueue(`crd:${crd.metadata.name}`);
  }

  // ---------------------------------------------------------------- work queue

  private enqueue(item: string): void {
    if (this.stopped) return;
    this.queue.add(item);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.drain());
    }
  }

  private drain(): void {
    this.scheduled = false;
    let budget = 5000;
    while (this.queue.size > 0 && budget-- > 0 && !this.stopped) {
      const item = this.queue.values().next().value as string;
      this.queue.delete(item);
      try {
        this.process(item);
      } catch {
        // the object changed under us (e.g. 404/409): the next event re-enqueues what matters
      }
    }
    if (this.queue.size > 0 && !this.stopped) {
      this.scheduled = true;
      setImmediate(() => this.drain());
      return;
    }
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }

  private process(item: string): void {
    const sep = item.indexOf(':');
    const kind = item.slice(0, sep);
    const arg = item.slice(sep + 1);
    switch (kind) {
      case 'check':
        return this.checkDependent(parseKeyString(arg));
      case 'dependents':
        for (const k of this.ops.store.dependentsOf(arg)) this.checkDependent(k);
        return;
      case 'fg':
        return this.checkForegroundOwner(arg);
      case 'ns':
        return this.cleanupNamespace(arg);
      case 'crd':
        return this.cleanupCrd(arg);
    }
  }

  private scopeOf(groupResource: string, namespace: string): Scope | undefined {
    const type = this.ops.registry.anyTypeOf(groupResource);
    if (!type) return undefined;
    return { type, groupResource, namespace };
  }

  /** Owner liveness, as the real collector classifies it. */
  private checkDependent(k: ObjectKey): void {
    const dep = this.ops.store.get(k.groupResource, k.namespace, k.name);
    if (!dep) return;
    const refs: OwnerReference[] = dep.metadata.ownerReferences ?? [];
    if (refs.length === 0) return;
    let solid = 0;
    const remove = new Set<string>();
    let waiting = false;
    for (const ref of refs) {
      const ownerKey = this.ops.store.keyOfUid(ref.uid);
      const sameScope = ownerKey && (ownerKey.namespace === '' || ownerKey.namespace === k.namespace);
      const owner = sameScope ? this.ops.store.get(ownerKey.groupResource, ownerKey.namespace, ownerKey.name) : undefined;
      if (!owner) remove.add(ref.uid);
      else if (owner.metadata.deletionTimestamp && (owner.metadata.finalizers ?? []).includes(FOREGROUND_FINALIZER)) {
        waiting = true;
        remove.add(ref.uid);
      } else solid++;
    }
    if (remove.size === 0) return;
    const scope = this.scopeOf(k.groupResource, k.namespace);
    if (!scope) return;
    if (solid === 0) {
      if (dep.metadata.deletionTimestamp) return;
      // attemptToDeleteItem: a dependent of an owner in foreground deletion is itself deleted in
      // foreground only when it has dependents of its own (a ReplicaSet with pods); one without
      // (a pod) is deleted in background, so a pod keeps its graceful termination.
      const cascade = waiting && this.ops.store.dependentsOf(dep.metadata.uid ?? '').length > 0;
      this.deleteObject(scope, k.name, { propagationPolicy: cascade ? 'Foreground' : 'Background' }, false);
      return;
    }
    const next = cloneJson(dep);
    next.metadata.ownerReferences = refs.filter((r) => !remove.has(r.uid));
    this.ops.commitPut(k.groupResource, next, dep);
  }

  private checkForegroundOwner(uid: string): void {
    const key = this.ops.store.keyOfUid(uid);
    if (!key) return;
    const owner = this.ops.store.get(key.groupResource, key.namespace, key.name);
    if (!owner?.metadata.deletionTimestamp || !(owner.metadata.finalizers ?? []).includes(FOREGROUND_FINALIZER)) return;
    const blocking = this.ops.store.dependentsOf(uid).some((k) => {
      const dep = this.ops.store.get(k.groupResource, k.namespace, k.name);
      return (dep?.metadata.ownerReferences ?? []).some((r) => r.uid === uid && r.blockOwnerDeletion === true);
    });
    if (blocking) return;
    const next = cloneJson(owner);
    const finalizers = (owner.metadata.finalizers ?? []).filter((f) => f !== FOREGROUND_FINALIZER);
    next.metadata.finalizers = finalizers;
    // Like an update that empties the finalizers (registry ShouldDeleteDuringUpdate): the object goes
    // only when its grace period is 0; a pod still terminating gracefully is left to its kubelet.
    if (finalizers.length === 0 && (owner.metadata.deletionGracePeriodSeconds ?? 0) === 0)
      this.ops.commitRemove(key.groupResource, key.namespace, key.name, next);
    else this.ops.commitPut(key.groupResource, next, owner);
  }

  private cleanupNamespace(name: string): void {
    const ns = this.ops.store.get(NAMESPACES_GR, '', name);
    if (!ns?.metadata.deletionTimestamp) return;
    let remaining = 0;
    for (const gr of this.ops.store.groupResourcesIn(name)) {
      const scope = this.scopeOf(gr, name);
      for (const o of [...this.ops.store.list(gr, name)]) {
        remaining++;
        if (!o.metadata.deletionTimestamp && scope) this.deleteObject(scope, o.metadata.name, { propagationPolicy: 'Background' }, false);
      }
    }
    if (remaining > 0) {
      // objects removed at once re-enqueue us through afterRemove; finalizer holders do later
      if (this.ops.store.groupResourcesIn(name).length > 0) return;
    }
    if ((ns.metadata.finalizers ?? []).length === 0) this.ops.commitRemove(NAMESPACES_GR, '', name);
  }

  private cleanupCrd(name: string): void {
    const crd = this.ops.store.get(CRD_GR, '', name);
    if (!crd?.metadata.deletionTimestamp) return;
    const gr = crdGroupResource(crd);
    const type = this.ops.registry.anyTypeOf(gr);
    for (const o of [...this.ops.store.list(gr)]) {
      if (o.metadata.deletionTimestamp || !type) continue;
      this.deleteObject({ type, groupResource: gr, namespace: o.metadata.namespace ?? '' }, o.metadata.name, { propagationPolicy: 'Background' }, false);
    }
    if (this.ops.store.count(gr) > 0) return;
    const finalizers = (crd.metadata.finalizers ?? []).filter((f) => f !== CRD_CLEANUP_FINALIZER);
    const next = cloneJson(crd);
    next.metadata.finalizers = finalizers;
    if (finalizers.length === 0) this.ops.commitRemove(CRD_GR, '', name, next);
    else if (finalizers.length !== (crd.metadata.finalizers ?? []).length) this.ops.commitPut(CRD_GR, next, crd);
  }
}
