/**
 * Shards: several operator installs, each owning the FlinkDeployments, FlinkSessionJobs and
 * FlinkStateSnapshots its label selector (`--label-selector`, `kubernetes.operator.label.selector`)
 * matches, and what one install knows about who owns a resource right now (design/012-shards.md).
 *
 * A shard is named by its Lease (`<lease namespace>/<lease name>`): each install elects its own
 * leader on its own Lease, and the name is stamped, with the term and the resource's hand-over
 * epoch, on everything it writes (fencing-token.ts).
 *
 * `ShardOwnership` follows, from the informers every replica runs,
 * - when this install first saw each resource in its (server-filtered) cache: the hand-over grace
 *   is counted from then;
 * - the stamp on each resource's state ConfigMap (the state informer is not shard-filtered, so every
 *   shard sees every hand-over), plus this install's own hand-over writes, newest epoch first.
 * From that it makes the per-pass fence stricter: a side effect of a pass on a resource is refused
 * (FencedOutError) once the resource is no longer in this shard's cache (relabelled away, deleted,
 * its namespace no longer watched) or its state names another shard (handed over, or not yet
 * handed over to this one); and it gives the pass the token to stamp: this shard, at the
 * resource's current epoch.
 *
 * Guarantees: a fence check costs no request; a resource whose newest known stamp names another
 * shard is never acted on by this install (shard-handover.ts is the only writer that may change it).
 * Assumptions: the state ConfigMap names its resource through the controlling ownerReference (the
 * store's ownership rule); namespace and Lease names hold no '@', '/' or '#'.
 * Caveats: informers lag the API server: a shard learns that a resource left it when its watch
 * delivers the change (design/012: the hand-over grace covers that lag); first-seen times are per
 * process, so a restart makes a pending hand-over wait a full grace again.
 */
import type { KubernetesObject, V1ConfigMap } from '@kubernetes/client-node';
import type { ObjectEvent, ObservableObjectReader } from '../kube/object-reader.js';
import type { WatchedKind } from './event-mapping.js';
import { formatFencingToken, isOtherShard, storedFencingToken, type FencingToken } from './fencing-token.js';
import type { OperatorConfig } from './operator-config.js';
import { FencedOutError, type SideEffectFence } from './side-effect-fence.js';

/** The kinds a label selector shards (each reconciled by its own controller). */
export type ShardedKind = Extract<WatchedKind, 'FlinkDeployment' | 'FlinkSessionJob' | 'FlinkStateSnapshot'>;

/** The name of this install's shard: its Lease. */
export function shardIdentity(config: Pick<OperatorConfig, 'leaseNamespace' | 'leaseName'>): string {
  return `${config.leaseNamespace}/${config.leaseName}`;
}

/**
 * How long a shard waits, after it first saw a resource last written by another shard, before it
 * takes it over: the (other shard's) lease duration plus one retry period. Every install is assumed
 * to use the same lease timings (design/012-shards.md, Assumptions).
 */
export function handoverGraceMs(config: Pick<OperatorConfig, 'leaseDurationMs' | 'retryPeriodMs'>): number {
  return config.leaseDurationMs + config.retryPeriodMs;
}

/** The newest stamp known on a resource's state ConfigMap. */
export interface KnownStamp {
  readonly token: FencingToken;
  readonly configMapNamespace: string;
  readonly configMapName: string;
}

/** A resource in this shard's cache whose state names another shard. */
export interface ForeignOwned {
  readonly kind: ShardedKind;
  readonly object: KubernetesObject;
  readonly stamp: KnownStamp;
  /** Local epoch ms from which this shard may take it over. */
  readonly dueAt: number;
}

export interface ShardOwnershipOptions {
  /** This install's shard (shardIdentity). */
  readonly shard: string;
  readonly graceMs: number;
  /** This install's caches of the sharded kinds (server-filtered by the label selector). */
  readonly readers: ReadonlyMap<ShardedKind, ObservableObjectReader<KubernetesObject>>;
  /** The state ConfigMap informer (every shard's). */
  readonly stateConfigMaps: ObservableObjectReader<V1ConfigMap>;
  readonly now?: () => number;
}

export class ShardOwnership {
  readonly shard: string;
  private readonly now: () => number;
  private readonly firstSeen = new Map<string, number>();
  private readonly stamps = new Map<string, KnownStamp>();
  private readonly unsubscribers: Array<() => void> = [];

  constructor(private readonly options: ShardOwnershipOptions) {
    this.shard = options.shard;
    this.now = options.now ?? Date.now;
    for (const reader of options.readers.values()) {
      this.unsubscribers.push(reader.subscribe((event) => this.observeResource(event)));
      for (const object of reader.list()) this.seen(object);
    }
    this.unsubscribers.push(options.stateConfigMaps.subscribe((event) => this.observeState(event)));
    for (const configMap of options.stateConfigMaps.list()) this.noteStamp(configMap);
  }

  close(): void {
    for (const unsubscribe of this.unsubscribers.splice(0)) unsubscribe();
  }

  /** The newest stamp known on the state of the resource with this uid (undefined for this shard's own at epoch 0). */
  stampOf(uid: string): KnownStamp | undefined {
    return this.stamps.get(uid);
  }

  /** Records a stamp this install wrote itself (a hand-over), ahead of its informer. */
  recordStamp(uid: string, stamp: KnownStamp): void {
    this.keepNewer(uid, stamp);
  }

  /** The token a pass on the resource with this uid stamps: this shard, at the resource's epoch. */
  tokenFor(leader: FencingToken, uid: string | undefined): FencingToken {
    const epoch = (uid !== undefined ? this.stamps.get(uid)?.token.epoch : undefined) ?? 0;
    return { holderIdentity: leader.holderIdentity, leaseTransitions: leader.leaseTransitions, shard: this.shard, ...(epoch > 0 ? { epoch } : {}) };
  }

  /** The uid of `namespace/name` of `kind` in this shard's cache. */
  uidOf(kind: ShardedKind, namespace: string, name: string): string | undefined {
    return this.options.readers.get(kind)?.get(namespace, name)?.metadata?.uid;
  }

  /**
   * Throws FencedOutError unless this shard may act on `namespace/name` of `kind` (see the module
   * comment); `uid` is the one the pass started with, when it knew it.
   */
  assertOwns(kind: ShardedKind, namespace: string, name: string, uid: string | undefined, what: string): void {
    const object = this.options.readers.get(kind)?.get(namespace, name);
    if (!object || (uid !== undefined && object.metadata?.uid !== uid)) {
      throw new FencedOutError(
        what,
        `${kind} ${namespace}/${name} is no longer in the cache of shard ${this.shard} (relabelled out of its label selector, deleted, or its namespace is no longer watched)`,
      );
    }
    const stamp = this.stamps.get(object.metadata?.uid ?? '');
    if (stamp && isOtherShard(stamp.token, { holderIdentity: '', leaseTransitions: 0, shard: this.shard })) {
      const since = this.firstSeen.get(object.metadata?.uid ?? '');
      const due = since === undefined ? 'after the hand-over grace' : `not before ${new Date(since + this.options.graceMs).toISOString()}`;
      throw new FencedOutError(
        what,
        `the state of ${kind} ${namespace}/${name} was last written by shard ${stamp.token.shard} (${formatFencingToken(stamp.token)}); shard ${this.shard} acts on it only after taking it over (${due})`,
      );
    }
  }

  /** The resources of this shard's caches whose state names another shard, with when each may be taken over. */
  foreignOwned(): ForeignOwned[] {
    const out: ForeignOwned[] = [];
    const probe: FencingToken = { holderIdentity: '', leaseTransitions: 0, shard: this.shard };
    for (const [kind, reader] of this.options.readers) {
      for (const object of reader.list()) {
        const uid = object.metadata?.uid ?? '';
        const stamp = this.stamps.get(uid);
        if (!stamp || !isOtherShard(stamp.token, probe)) continue;
        out.push({ kind, object, stamp, dueAt: (this.firstSeen.get(uid) ?? this.now()) + this.options.graceMs });
      }
    }
    return out;
  }

  /** When this shard first saw the resource with this uid (local epoch ms). */
  firstSeenAt(uid: string): number | undefined {
    return this.firstSeen.get(uid);
  }

  private observeResource(event: ObjectEvent<KubernetesObject>): void {
    if (event.type === 'relisted') for (const object of event.objects) this.seen(object);
    else if (event.type === 'deleted') this.firstSeen.delete(event.object.metadata?.uid ?? '');
    else this.seen(event.object);
  }

  private seen(object: KubernetesObject): void {
    const uid = object.metadata?.uid;
    if (uid && !this.firstSeen.has(uid)) this.firstSeen.set(uid, this.now());
  }

  private observeState(event: ObjectEvent<V1ConfigMap>): void {
    if (event.type === 'relisted') for (const configMap of event.objects) this.noteStamp(configMap);
    else if (event.type === 'deleted') {
      const uid = controllerUid(event.object);
      const known = uid ? this.stamps.get(uid) : undefined;
      if (uid && known?.configMapName === event.object.metadata?.name) this.stamps.delete(uid);
    } else this.noteStamp(event.object);
  }

  private noteStamp(configMap: V1ConfigMap): void {
    const uid = controllerUid(configMap);
    const token = storedFencingToken(configMap.metadata);
    if (!uid || !token) return;
    this.keepNewer(uid, { token, configMapNamespace: configMap.metadata?.namespace ?? '', configMapName: configMap.metadata?.name ?? '' });
  }

  /**
   * Keeps `stamp` unless the known one is of a higher epoch (an informer lagging our own hand-over
   * write). A stamp of this shard at epoch 0 tells nothing that no stamp would not (`assertOwns`,
   * `tokenFor`, `foreignOwned` treat both alike), so it is not kept: the common case costs no entry.
   */
  private keepNewer(uid: string, stamp: KnownStamp): void {
    const known = this.stamps.get(uid);
    if (known && (known.token.epoch ?? 0) > (stamp.token.epoch ?? 0)) return;
    if ((stamp.token.epoch ?? 0) > 0 || isOtherShard(stamp.token, { holderIdentity: '', leaseTransitions: 0, shard: this.shard })) this.stamps.set(uid, stamp);
    else this.stamps.delete(uid);
  }
}

/** The uid of the object controlling `configMap` (its resource), if any. */
export function controllerUid(configMap: V1ConfigMap): string | undefined {
  return configMap.metadata?.ownerReferences?.find((ref) => ref.controller === true)?.uid;
}

/**
 * `base` (the leadership fence of a pass) made shard-aware for the pass on `namespace/name` of
 * `kind`: it stamps this shard's token at the resource's epoch, and `check` also refuses once the
 * resource is not this shard's to act on (ShardOwnership.assertOwns).
 */
export function shardFence(base: SideEffectFence, ownership: ShardOwnership, kind: ShardedKind, namespace: string, name: string): SideEffectFence {
  const uid = ownership.uidOf(kind, namespace, name);
  return {
    token: ownership.tokenFor(base.token, uid),
    check(what: string): void {
      base.check(what);
      ownership.assertOwns(kind, namespace, name, uid, what);
    },
  };
}
