/**
 * The StateStore over the companion ConfigMap `<name>-operator-state` (what the operator uses).
 *
 * load: reads through a read-your-writes overlay over the ConfigMap informer (0 requests for a
 * periodic reconcile of an unchanged deployment); GETs only when there is no informer, it has not
 * synced, or it does not hold the object — except for an owner with no status at all that is not
 * being deleted (a resource no operator has recorded anything for yet: its first pass), where the
 * synced informer's "not there" is taken as `missing` without a GET. Then: ownership
 * (ForeignStateError), decode + schema (CorruptStateError).
 *
 * update(fn): fencing check (NotLeaderError / StaleLeaderError) → fn on a copy of the current state
 * → nothing written when fn changes nothing → revision+1, lastWriter stamped → encode (size rules,
 * StateTooLargeError) → POST (with ownerReference) when missing, else PUT locked on the
 * resourceVersion read. "Missing" on the first attempt is the synced informer's word (no GET): the
 * POST itself is the check, it answers 409 AlreadyExists when the object exists after all (a
 * lagging informer), and the next attempt GETs it. On a 409, a 429, a 5xx or a lost connection: GET, re-check, re-apply fn, at
 * most `maxAttempts` times (StateWriteRetriesExhaustedError after). Each success feeds the overlay
 * and the own-write tracker (so the runtime skips the echo event; a user's edit has another
 * resourceVersion and is reconciled). If the object this update read disappears before the write
 * lands (a 404 to the PUT, then a GET finding nothing), StateDeletedError: fn is never applied to an
 * empty state behind the caller's back; the next reconcile sees `missing` and rebuilds from the world.
 *
 * Guarantees: see state-store.ts and design/004-sync-protocol.md; in addition, `revision` never goes
 * backwards: the store writes max(current.revision, fn's revision, the newest revision it saw for
 * the uid) + 1, so a rebuilt state continues the sequence; and a state read back with a revision
 * older than the newest this process wrote or read for that FlinkDeployment uid, or older than the
 * status' `stateRef.revision`, is refused (RegressedStateError: a restored backup, a re-applied
 * manifest), as is content recorded for another uid (MisplacedStateError, from the codec).
 * Updates with `basedOnRevision` are applied only to the revision they were decided on.
 * Assumptions: fn is pure and idempotent; the informer (when given) watches state ConfigMaps with
 * STATE_CONFIGMAP_SELECTOR, so foreign ConfigMaps are only ever seen by GET.
 * Why trusting the informer's absence is safe: every write a pass makes is decided on the revision
 * it read (`basedOnRevision`), so a state that did exist is found by the POST's 409 and the next
 * attempt's GET, and the decision made on "missing" is refused (StatePreconditionError) instead of
 * applied; an owner with a status keeps the GET, so a lost ConfigMap is told apart from a lagging
 * cache before anything is rebuilt or reported.
 * Caveats: a foreign ConfigMap is never cached, so a deployment in that error state costs one GET per
 * reconcile until the user resolves it.
 */
import { isDeepStrictEqual } from 'node:util';
import type { V1ConfigMap } from '@kubernetes/client-node';
import type { FlinkDeploymentV1 } from '../api/flink-deployment.js';
import { emptyInternalState, INTERNAL_STATE_FORMAT_VERSION, type AnyInternalState, type InternalState, type SavepointRecord } from '../api/internal-state.js';
import { isConflict, isNotFound, isTransient, toKubeApiError } from '../kube/api-errors.js';
import type { ConfigMapClient } from '../kube/configmap-client.js';
import type { ObservableObjectReader } from '../kube/object-reader.js';
import { assertNotStale, storedFencingToken, type FencingToken } from '../runtime/fencing-token.js';
import type { WriteTracker } from '../runtime/own-write-tracker.js';
import type { SideEffectFence } from '../runtime/side-effect-fence.js';
import { contentVerdict, contentWriters, stateChanges, type ForeignStateWrite } from './foreign-state-write.js';
import { ReadYourWritesCache } from './read-your-writes-cache.js';
import {
  assertOwnedBy,
  assertStateBelongsTo,
  decodeStateConfigMap,
  encodeStateConfigMap,
  STATE_DIGEST_ANNOTATION,
  stateContentDigest,
} from './state-configmap-codec.js';
import { NotLeaderError, RegressedStateError, StateDeletedError, StatePreconditionError, StateWriteRetriesExhaustedError } from './state-errors.js';
import { FLINK_DEPLOYMENT_STATE, type StateKind, type StateOwner } from './state-kinds.js';
import type { LoadResult, StateStore, StateUpdateFunction, StateUpdateOptions } from './state-store.js';

export interface ConfigMapStateStoreOptions<State extends AnyInternalState = InternalState, Owner extends StateOwner = FlinkDeploymentV1> {
  /** Whose state this store keeps; FlinkDeployments' by default (a FlinkSessionJob store passes FLINK_SESSION_JOB_STATE). */
  readonly kind?: StateKind<State>;
  readonly client: ConfigMapClient;
  /** The current leader's token; undefined = not leader (writes are refused). */
  readonly fencingToken: () => FencingToken | undefined;
  /** The state ConfigMap informer; without one every load is a GET. */
  readonly informer?: ObservableObjectReader<V1ConfigMap>;
  readonly writeTracker?: WriteTracker;
  /** Attempts per update (first try included). Default 5. */
  readonly maxAttempts?: number;
  /** Delay before the 2nd attempt, doubled each time. Default 50 ms. */
  readonly retryDelayMs?: number;
  readonly compressThresholdBytes?: number;
  readonly maxTotalBytes?: number;
  /** Called after every write attempt: `created`, `updated`, `conflict` (409) or `failed` (metrics). */
  readonly onWriteAttempt?: (outcome: 'created' | 'updated' | 'conflict' | 'failed') => void;
  /** Called with the records the size rules dropped from the history, oldest first (their savepoints are to be disposed). */
  readonly onHistoryTrimmed?: (deployment: Owner, dropped: readonly SavepointRecord[]) => void;
}

const CONFIGMAP_KIND = 'ConfigMap';
/** Longest Retry-After (429) the store waits in-line before its next attempt. */
const MAX_RETRY_AFTER_SECONDS = 2;

/** State equality for "did fn change anything": revision and lastWriter are the store's, not fn's. */
function sameState(a: AnyInternalState, b: AnyInternalState): boolean {
  const strip = (s: AnyInternalState) => {
    const { revision: _r, lastWriter: _w, ...rest } = JSON.parse(JSON.stringify(s)) as AnyInternalState;
    return rest;
  };
  return isDeepStrictEqual(strip(a), strip(b));
}

export class ConfigMapStateStore<State extends AnyInternalState = InternalState, Owner extends StateOwner = FlinkDeploymentV1> implements StateStore<
  Owner,
  State
> {
  /** Our writes, overlaid on the informer. */
  readonly overlay: ReadYourWritesCache<V1ConfigMap>;
  private readonly unsubscribe: (() => void) | undefined;
  private readonly maxAttempts: number;
  private readonly retryDelayMs: number;

  private readonly kind: StateKind<State>;

  constructor(private readonly options: ConfigMapStateStoreOptions<State, Owner>) {
    this.kind = options.kind ?? (FLINK_DEPLOYMENT_STATE as StateKind<State>);
    this.overlay = new ReadYourWritesCache<V1ConfigMap>(options.informer);
    this.unsubscribe = options.informer?.subscribe((event) => {
      this.overlay.observe(event);
      if (event.type === 'added' || event.type === 'updated') this.noteRevision(event.object);
      else if (event.type === 'relisted') for (const object of event.objects) this.noteRevision(object);
      if (event.type === 'deleted') this.decoded.delete(objectKey(event.object));
      else if (event.type === 'relisted') this.decoded.clear();
    });
    this.maxAttempts = Math.max(1, options.maxAttempts ?? 5);
    this.retryDelayMs = options.retryDelayMs ?? 50;
  }

  /**
   * The decoded state of each state ConfigMap, by namespace/name, with the uid and resourceVersion
   * it was decoded at, so a periodic reconcile of an unchanged deployment does not re-parse the YAML
   * and re-validate the schema (about 0.75 ms → 0.02 ms per load on an idle core;
   * bench/state-decode-cost.ts). Our own write seeds it with the state it encoded, so the load after
   * a transition does not parse what we just wrote (design/performance.md, finding 9).
   * Kept as JSON text (one string per deployment, shared with `trusted` when both hold the same
   * content; an object graph of the same state takes several times the heap), parsed per load.
   * Guarantees: a hit is a fresh copy of the state of that object at that uid and resourceVersion
   * (callers may mutate what they get); one entry per ConfigMap, dropped when the informer reports
   * it deleted or relists.
   * Assumptions: a resourceVersion identifies one content of one object (the API server's
   * contract), so the informer's copy of our write decodes to what we encoded; the codec round-trips
   * (decode(encode(s)) equals s once undefined members are dropped: state-configmap-codec.test.ts).
   * Caveats: an object without a resourceVersion is never cached.
   */
  private readonly decoded = new Map<string, { uid: string | undefined; resourceVersion: string; json: string }>();

  /** The newest state revision written or read, by FlinkDeployment uid (the "never backwards" floor). */
  private readonly newestRevision = new Map<string, number>();

  /**
   * Raises the floor by a revision the informer delivered (the `revision` key is plain text: no
   * decode), so a standby that never reconciled the deployment still knows the newest revision it
   * saw when it takes over.
   */
  private noteRevision(configMap: V1ConfigMap): void {
    const uid = configMap.metadata?.ownerReferences?.find((ref) => ref.controller === true)?.uid;
    const text = configMap.data?.revision;
    if (!uid || text === undefined || !/^[0-9]+$/.test(text)) return;
    const revision = Number(text);
    if (revision > (this.newestRevision.get(uid) ?? 0)) this.newestRevision.set(uid, revision);
  }

  /** Refuses a state older than what this process already saw, or than the status says it reflects. */
  private assertNotRegressed(configMap: V1ConfigMap, state: State, deployment: Owner): void {
    const uid = deployment.metadata.uid ?? '';
    const seen = this.newestRevision.get(uid) ?? 0;
    const inStatus = deployment.status?.stateRef?.revision ?? 0;
    const namespace = configMap.metadata?.namespace ?? '';
    const name = configMap.metadata?.name ?? '';
    if (state.revision < seen) throw new RegressedStateError(name, namespace, state.revision, seen, 'already written or read by this operator');
    if (state.revision < inStatus)
      throw new RegressedStateError(name, namespace, state.revision, inStatus, `status.stateRef.revision of the ${this.kind.ownerKind}`);
    this.newestRevision.set(uid, state.revision);
  }

  /** Forgets what this store remembers of an owner that is gone (its finalizer was removed). */
  forget(deployment: Owner): void {
    this.newestRevision.delete(deployment.metadata.uid ?? '');
    this.foreignWrites.delete(deployment.metadata.uid ?? '');
    const key = `${deployment.metadata.namespace ?? ''}/${this.kind.configMapName(deployment.metadata.name ?? '')}`;
    this.trusted.delete(key);
    this.judgedAt.delete(key);
  }

  /**
   * Foreign writes (foreign-state-write.ts): `trusted` is the state of each ConfigMap (by
   * namespace/name, with its uid) as this process last wrote it or read it with its own digest, the
   * "before" of a report, kept as JSON text (a few KiB per resource as a string, several times that
   * as an object graph; parsed only when a foreign write is found); `foreignWrites` the finding of the last load, by owner uid, until the
   * reconciler takes it; `judgedAt` the uid/resourceVersion last judged per ConfigMap, so a
   * periodic load of an unchanged object does not digest it again, and one foreign change is
   * reported once however often it is read before the acknowledgement lands.
   */
  private readonly trusted = new Map<string, { uid: string | undefined; json: string }>();
  private readonly foreignWrites = new Map<string, ForeignStateWrite>();
  private readonly judgedAt = new Map<string, string>();

  /**
   * Judges content read for `deployment`: own (or unjudged) content becomes the trusted "before";
   * foreign content becomes a finding, once per resourceVersion. With `nameWriters`, content read
   * without managedFields (the informer's copy) costs one GET that names the writer; an update's
   * read does not add a request (its finding names the writer only when its read was a GET).
   */
  private async judge(configMap: V1ConfigMap, read: DecodedState<State>, deployment: Owner, nameWriters: boolean): Promise<void> {
    const key = objectKey(configMap);
    const uid = configMap.metadata?.uid;
    const resourceVersion = configMap.metadata?.resourceVersion ?? '';
    if (resourceVersion && this.judgedAt.get(key) === `${uid}/${resourceVersion}`) return;
    if (resourceVersion) this.judgedAt.set(key, `${uid}/${resourceVersion}`);
    if (contentVerdict(configMap) !== 'foreign') {
      this.trusted.set(key, { uid, json: read.json });
      return;
    }
    const state = read.state;
    // the informer's copies carry no managedFields: one GET names the writer (foreign writes are rare)
    let managedFields = configMap.metadata?.managedFields;
    if (managedFields === undefined && nameWriters) {
      const fresh = await this.options.client.get(configMap.metadata?.namespace ?? '', configMap.metadata?.name ?? '');
      if (fresh?.metadata?.resourceVersion === resourceVersion) managedFields = fresh.metadata.managedFields;
    }
    const before = this.trusted.get(key);
    const changes = stateChanges(before && before.uid === uid ? (JSON.parse(before.json) as State) : undefined, state);
    this.foreignWrites.set(deployment.metadata.uid ?? '', {
      namespace: configMap.metadata?.namespace ?? '',
      name: configMap.metadata?.name ?? '',
      ...(uid ? { uid } : {}),
      resourceVersion,
      writers: contentWriters(managedFields),
      ...(changes ? { changes } : {}),
    });
  }

  takeForeignStateWrite(deployment: Owner): ForeignStateWrite | undefined {
    const uid = deployment.metadata.uid ?? '';
    const found = this.foreignWrites.get(uid);
    this.foreignWrites.delete(uid);
    return found;
  }

  /**
   * Stamps a fresh digest over the reported content, locked on the resourceVersion reported and
   * fenced like every write, so a restart or the next leader does not report it again. Nothing is
   * written when the content has changed since (the next load judges it) or already carries its
   * digest; a conflict or a transient failure leaves it to the next write (this process does not
   * report the same resourceVersion twice).
   */
  async acknowledgeForeignStateWrite(deployment: Owner, write: ForeignStateWrite, fence: SideEffectFence): Promise<void> {
    const current = await this.read(deployment, false);
    if (!current || current.metadata?.resourceVersion !== write.resourceVersion || current.metadata?.uid !== write.uid) return;
    if (contentVerdict(current) === 'own') return;
    fence.check(`acknowledge the foreign write to ${write.namespace}/${write.name}`);
    assertNotStale(storedFencingToken(current.metadata), fence.token);
    const { managedFields: _managed, ...metadata } = current.metadata ?? {};
    const body: V1ConfigMap = {
      ...current,
      metadata: { ...metadata, annotations: { ...(metadata.annotations ?? {}), [STATE_DIGEST_ANNOTATION]: stateContentDigest(current) } },
    };
    try {
      const written = await this.options.client.replace(write.namespace, write.name, body);
      this.options.onWriteAttempt?.('updated');
      this.overlay.recordWrite(written);
      this.rememberWritten(written, this.decode(current).state);
      this.options.writeTracker?.recordOwnWrite(CONFIGMAP_KIND, write.namespace, write.name, written.metadata?.resourceVersion);
    } catch (error) {
      this.options.onWriteAttempt?.(isConflict(error) ? 'conflict' : 'failed');
      if (!isConflict(error) && !isTransient(error) && !isNotFound(error)) throw toKubeApiError(error);
    }
  }

  /** The state `configMap` holds, as a fresh object and as the JSON text the caches keep. */
  private decode(configMap: V1ConfigMap): DecodedState<State> {
    const resourceVersion = configMap.metadata?.resourceVersion;
    const uid = configMap.metadata?.uid;
    const key = objectKey(configMap);
    const hit = this.decoded.get(key);
    if (hit && resourceVersion && hit.resourceVersion === resourceVersion && hit.uid === uid) return { state: JSON.parse(hit.json) as State, json: hit.json };
    const json = JSON.stringify(decodeStateConfigMap(configMap, this.kind));
    if (resourceVersion) this.decoded.set(key, { uid, resourceVersion, json });
    return { state: JSON.parse(json) as State, json };
  }

  /** After our write: what `written` decodes to is the state we encoded (JSON-normalized: no undefined members). */
  private rememberWritten(written: V1ConfigMap, state: State): void {
    const resourceVersion = written.metadata?.resourceVersion;
    if (!resourceVersion) return;
    const json = JSON.stringify(state);
    this.decoded.set(objectKey(written), { uid: written.metadata?.uid, resourceVersion, json });
    this.trusted.set(objectKey(written), { uid: written.metadata?.uid, json });
    // our own content carries our digest: its informer echo need not be digested again
    this.judgedAt.set(objectKey(written), `${written.metadata?.uid}/${resourceVersion}`);
  }

  /** Stops listening to the informer. */
  close(): void {
    this.unsubscribe?.();
  }

  async load(deployment: Owner): Promise<LoadResult<State>> {
    const configMap = await this.read(deployment, false, hasNoRecord(deployment));
    if (!configMap) return { kind: 'missing' };
    assertOwnedBy(configMap, deployment, this.kind);
    assertStateBelongsTo(configMap, deployment, this.kind);
    const read = this.decode(configMap);
    this.assertNotRegressed(configMap, read.state, deployment);
    await this.judge(configMap, read, deployment, true);
    return { kind: 'found', state: read.state, resourceVersion: configMap.metadata?.resourceVersion ?? '' };
  }

  async update(deployment: Owner, fn: StateUpdateFunction<State>, options: StateUpdateOptions = {}): Promise<State> {
    const namespace = deployment.metadata.namespace ?? '';
    const name = this.kind.configMapName(deployment.metadata.name ?? '');
    let lastError: unknown;
    let sawExisting = false;
    for (let attempt = 1; attempt <= this.maxAttempts; attempt++) {
      options.fence?.check(`write operator state ${namespace}/${name}`);
      const token = options.fence?.token ?? this.options.fencingToken();
      if (!token) throw new NotLeaderError(`${namespace}/${name}`);
      // the first attempt takes the synced informer's "not there" (the POST is the check); later ones GET
      const existing = await this.read(deployment, attempt > 1, attempt === 1);
      if (!existing && sawExisting) throw new StateDeletedError(`${namespace}/${name}`);
      sawExisting ||= existing !== undefined;
      let current: State;
      if (existing) {
        assertOwnedBy(existing, deployment, this.kind);
        assertStateBelongsTo(existing, deployment, this.kind);
        assertNotStale(storedFencingToken(existing.metadata), token);
        const read = this.decode(existing);
        current = read.state;
        this.assertNotRegressed(existing, current, deployment);
        await this.judge(existing, read, deployment, false);
      } else {
        current = emptyInternalState() as State;
      }
      const input = structuredClone(current);
      const next = fn(input);
      if (next === input || sameState(next, current)) return current;
      if (options.basedOnRevision !== undefined && current.revision !== options.basedOnRevision) {
        throw new StatePreconditionError(`${namespace}/${name}`, options.basedOnRevision, current.revision);
      }
      const floor = this.newestRevision.get(deployment.metadata.uid ?? '') ?? 0;
      const stamped: State = {
        ...next,
        formatVersion: INTERNAL_STATE_FORMAT_VERSION,
        revision: Math.max(current.revision, next.revision, floor) + 1,
        // the whole token: with shards it also names the shard and the hand-over epoch (design/012-shards.md)
        lastWriter: stampOf(token),
      };
      const encoded = encodeStateConfigMap(stamped, {
        deployment,
        kind: this.kind,
        existing,
        compressThresholdBytes: this.options.compressThresholdBytes,
        maxTotalBytes: this.options.maxTotalBytes,
      });
      try {
        const written = existing
          ? await this.options.client.replace(namespace, name, encoded.configMap)
          : await this.options.client.create(namespace, encoded.configMap);
        this.options.onWriteAttempt?.(existing ? 'updated' : 'created');
        this.newestRevision.set(deployment.metadata.uid ?? '', encoded.state.revision);
        this.overlay.recordWrite(written);
        this.rememberWritten(written, encoded.state);
        this.options.writeTracker?.recordOwnWrite(CONFIGMAP_KIND, namespace, name, written.metadata?.resourceVersion);
        if (encoded.trimmedRecords.length > 0) this.options.onHistoryTrimmed?.(deployment, encoded.trimmedRecords);
        return encoded.state;
      } catch (error) {
        this.options.onWriteAttempt?.(isConflict(error) ? 'conflict' : 'failed');
        // 404 on a PUT: deleted since our (cached) read; the fresh read confirms it (StateDeletedError)
        if (!isConflict(error) && !isTransient(error) && !(existing && isNotFound(error))) throw toKubeApiError(error);
        lastError = error;
        // back off, at least as long as a 429 asked (capped: the work queue retries later anyway)
        const asked = Math.min(toKubeApiError(error).retryAfterSeconds ?? 0, MAX_RETRY_AFTER_SECONDS) * 1000;
        if (attempt < this.maxAttempts) await sleep(Math.max(this.retryDelayMs * 2 ** (attempt - 1), asked));
      }
    }
    throw new StateWriteRetriesExhaustedError(`${namespace}/${name}`, this.maxAttempts, toKubeApiError(lastError));
  }

  /**
   * The ConfigMap: the overlay when the informer has synced and holds it (unless `fresh`), else a
   * GET — or, with `trustAbsence`, undefined without a GET when the synced informer does not hold it.
   * A GET result is cached only when it is ours (a foreign object gets no informer events that would
   * ever evict it).
   */
  private async read(deployment: Owner, fresh: boolean, trustAbsence = false): Promise<V1ConfigMap | undefined> {
    const namespace = deployment.metadata.namespace ?? '';
    const name = this.kind.configMapName(deployment.metadata.name ?? '');
    const informer = this.options.informer;
    if (!fresh && informer?.hasSynced()) {
      const cached = this.overlay.get(namespace, name);
      if (cached) return cached;
      if (trustAbsence) return undefined;
    }
    const got = await this.options.client.get(namespace, name);
    if (!got) {
      this.overlay.recordDeleted(namespace, name);
      this.decoded.delete(`${namespace}/${name}`);
      return undefined;
    }
    if (isControlledBy(got, deployment, this.kind)) this.overlay.recordWrite(got);
    return got;
  }
}

/** The state a ConfigMap holds, decoded, and its JSON text (what the store's caches keep). */
interface DecodedState<State> {
  readonly state: State;
  readonly json: string;
}

/**
 * An owner nothing was recorded for yet: no status at all (every operator pass that writes state
 * writes a status after it) and not being deleted.
 */
function hasNoRecord(owner: StateOwner): boolean {
  const status = owner.status;
  return owner.metadata.deletionTimestamp === undefined && (status === undefined || Object.keys(status).length === 0);
}

/** The writer's stamp: holder and term, plus shard and epoch when the token has them (the codec writes them into the annotation). */
function stampOf(token: FencingToken): FencingToken {
  return {
    holderIdentity: token.holderIdentity,
    leaseTransitions: token.leaseTransitions,
    ...(token.shard !== undefined ? { shard: token.shard } : {}),
    ...(token.epoch ? { epoch: token.epoch } : {}),
  };
}

function objectKey(configMap: V1ConfigMap): string {
  return `${configMap.metadata?.namespace ?? ''}/${configMap.metadata?.name ?? ''}`;
}

function isControlledBy(configMap: V1ConfigMap, deployment: StateOwner, kind: StateKind): boolean {
  try {
    assertOwnedBy(configMap, deployment, kind);
    return true;
  } catch {
    return false;
  }
}

function sleep(ms: number): Promise<void> {
  return ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve();
}
