/**
 * The hand-over: how a resource relabelled from shard A to shard B becomes B's
 * (design/012-shards.md).
 *
 * While B leads its own Lease, every `intervalMs` it looks at the resources of its caches whose
 * state ConfigMap was last written by another shard (ShardOwnership.foreignOwned). For each whose
 * hand-over grace has passed since B first saw it (so any pass of the old owner that was still
 * running has hit its fence: the resource left A's cache, or A's lease lapsed), B
 * 1. checks its own leadership fence;
 * 2. asks the API server (a consistent LIST with its label selector and the resource's name) that
 *    the resource, with the same uid, still matches B's selector: never on a cache's word alone;
 * 3. reads the state ConfigMap afresh: still controlled by that resource, still another shard's;
 * 4. checks its fence again and replaces the ConfigMap, locked on the resourceVersion it read,
 *    changing only the stamp (LEADER_ANNOTATION) to B's token at epoch + 1;
 * 5. records the stamp (ShardOwnership), emits a Normal `ShardHandover` Event on the resource and
 *    asks for a reconcile of it.
 * From then on the old shard's writes are refused: its state write meets a stamp of a higher epoch
 * (StaleLeaderError), its owned-object writes likewise once B has stamped them, and its fence
 * fails as soon as its informers see the relabel or the new stamp.
 *
 * Guarantees: a takeover is one RV-locked write: of two shards racing for the same resource, one
 * wins, the other gets 409 and finds the winner's stamp; the epoch only grows; the state's content
 * (intents in flight: a pending savepoint, a job id to submit) is kept as is, so the new owner
 * resolves them by observation, as after a crash (design/004).
 * Assumptions: see design/012-shards.md (same lease timings everywhere, disjoint selectors).
 * Caveats: with overlapping selectors ownership alternates once per grace (each move fenced, each
 * one a ShardHandover Event); a resource without a state ConfigMap needs no hand-over.
 */
import { CustomObjectsApi, type KubernetesObject, type V1ConfigMap } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { FLINK_DEPLOYMENT_PLURAL } from '../api/flink-deployment.js';
import { FLINK_SESSION_JOB_PLURAL } from '../api/flink-session-job.js';
import { FLINK_STATE_SNAPSHOT_PLURAL, FLINK_STATE_SNAPSHOT_VERSION } from '../api/flink-state-snapshot.js';
import { isConflict, toKubeApiError } from '../kube/api-errors.js';
import type { ConfigMapClient } from '../kube/configmap-client.js';
import type { ApiClientFactory } from './api-client-factory.js';
import type { EventRecorder } from './event-recorder.js';
import { formatFencingToken, isOtherShard, LEADER_ANNOTATION, storedFencingToken, type FencingToken } from './fencing-token.js';
import { controllerUid, type ForeignOwned, type ShardedKind, type ShardOwnership } from './shard.js';
import { FencedOutError, fenceForPass, type LeaseTerm } from './side-effect-fence.js';
import { FLINK_DEPLOYMENT_VERSION } from './watched-resources.js';

/** The Event reason of a completed hand-over. */
export const SHARD_HANDOVER_REASON = 'ShardHandover';

export interface ShardHandoverOptions {
  readonly ownership: ShardOwnership;
  readonly labelSelector: string | undefined;
  readonly graceMs: number;
  readonly term: LeaseTerm;
  /** The fence margin (manager.ts fenceMarginMs). */
  readonly marginMs: number;
  readonly clients: ApiClientFactory;
  readonly configMaps: ConfigMapClient;
  readonly events: EventRecorder;
  readonly logger: Logger;
  /** How often to look for due hand-overs. */
  readonly intervalMs: number;
  /** Called after a takeover: reconcile `namespace/name` of `kind` now. */
  readonly onTakenOver: (kind: ShardedKind, key: string) => void;
  readonly now?: () => number;
}

const PLURALS: Record<ShardedKind, { plural: string; version: string }> = {
  FlinkDeployment: { plural: FLINK_DEPLOYMENT_PLURAL, version: FLINK_DEPLOYMENT_VERSION },
  FlinkSessionJob: { plural: FLINK_SESSION_JOB_PLURAL, version: FLINK_DEPLOYMENT_VERSION },
  FlinkStateSnapshot: { plural: FLINK_STATE_SNAPSHOT_PLURAL, version: FLINK_STATE_SNAPSHOT_VERSION },
};

export class ShardHandover {
  private timer: NodeJS.Timeout | undefined;
  private abort: AbortController | undefined;
  private sweeping: Promise<void> | undefined;
  private readonly custom: CustomObjectsApi;
  private readonly now: () => number;

  constructor(private readonly options: ShardHandoverOptions) {
    this.custom = options.clients.make(CustomObjectsApi);
    this.now = options.now ?? Date.now;
  }

  /** Starts looking for due hand-overs (when this install starts leading its shard). */
  start(): void {
    if (this.abort && !this.abort.signal.aborted) return;
    const abort = (this.abort = new AbortController());
    const tick = () => {
      this.timer = setTimeout(() => {
        this.sweeping = this.sweep(abort.signal).finally(() => {
          this.sweeping = undefined;
          if (!abort.signal.aborted) tick();
        });
      }, this.options.intervalMs);
      this.timer.unref();
    };
    tick();
  }

  /** Stops (leadership lost, shutdown); an attempt in flight is fenced out at its next check. */
  async stop(): Promise<void> {
    this.abort?.abort();
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.sweeping;
  }

  /** One look: takes over every resource whose grace has passed. Exposed for tests. */
  async sweep(signal: AbortSignal = new AbortController().signal): Promise<void> {
    for (const candidate of this.options.ownership.foreignOwned()) {
      if (candidate.dueAt > this.now() || signal.aborted) continue;
      try {
        await this.takeOver(candidate, signal);
      } catch (error) {
        const level = error instanceof FencedOutError || isConflict(error) ? 'info' : 'warn';
        this.options.logger[level](
          { kind: candidate.kind, namespace: candidate.object.metadata?.namespace, name: candidate.object.metadata?.name, err: describe(error) },
          'hand-over not done this time; trying again',
        );
      }
    }
  }

  private async takeOver(candidate: ForeignOwned, signal: AbortSignal): Promise<void> {
    const { kind, object, stamp } = candidate;
    const namespace = object.metadata?.namespace ?? '';
    const name = object.metadata?.name ?? '';
    const uid = object.metadata?.uid ?? '';
    const fence = fenceForPass({ term: this.options.term, signal, marginMs: this.options.marginMs });
    if (!fence) return;
    const what = `take over ${kind} ${namespace}/${name} from shard ${stamp.token.shard}`;
    fence.check(what);
    if (!(await this.stillMatches(kind, namespace, name, uid))) return;
    const configMap = await this.options.configMaps.get(stamp.configMapNamespace, stamp.configMapName);
    if (!configMap || controllerUid(configMap) !== uid) return;
    const stored = storedFencingToken(configMap.metadata);
    const mine = this.options.ownership.tokenFor(fence.token, undefined);
    if (!stored || !isOtherShard(stored, mine)) {
      if (stored) this.options.ownership.recordStamp(uid, { ...stamp, token: stored });
      return;
    }
    const next: FencingToken = { ...mine, epoch: (stored.epoch ?? 0) + 1 };
    const body: V1ConfigMap = {
      ...configMap,
      metadata: { ...configMap.metadata, annotations: { ...configMap.metadata?.annotations, [LEADER_ANNOTATION]: formatFencingToken(next) } },
    };
    fence.check(what);
    await this.options.configMaps.replace(stamp.configMapNamespace, stamp.configMapName, body);
    this.options.ownership.recordStamp(uid, { ...stamp, token: next });
    const waitedMs = this.now() - (this.options.ownership.firstSeenAt(uid) ?? this.now());
    const message =
      `shard ${next.shard} (${formatFencingToken(next)}) took this resource over from shard ${stored.shard} (last written by ${formatFencingToken(stored)}) ` +
      `after ${Math.round(waitedMs / 100) / 10} s since it first matched this shard's label selector (hand-over grace ${this.options.graceMs / 1000} s); ` +
      `writes of shard ${stored.shard} are refused from now on, and what it left in flight is resolved by observation`;
    this.options.events.normal(object, SHARD_HANDOVER_REASON, message);
    this.options.logger.info(
      { kind, namespace, name, from: formatFencingToken(stored), to: formatFencingToken(next) },
      'took a resource over from another shard',
    );
    this.options.onTakenOver(kind, `${namespace}/${name}`);
  }

  /** A consistent read: does `namespace/name` (same uid) match this shard's selector on the server? */
  private async stillMatches(kind: ShardedKind, namespace: string, name: string, uid: string): Promise<boolean> {
    const { plural, version } = PLURALS[kind];
    const list = (await this.custom.listNamespacedCustomObject({
      group: 'flink.apache.org',
      version,
      namespace,
      plural,
      fieldSelector: `metadata.name=${name}`,
      ...(this.options.labelSelector ? { labelSelector: this.options.labelSelector } : {}),
    })) as { items?: KubernetesObject[] };
    return (list.items ?? []).some((item) => item.metadata?.uid === uid);
  }
}

function describe(error: unknown): string {
  if (error instanceof FencedOutError) return error.message;
  return toKubeApiError(error).message;
}
