/**
 * Fencing tokens: how a state write proves it comes from the current leader.
 *
 * A leader's token is its Lease holder identity plus the Lease's `leaseTransitions` counter at the
 * moment it acquired the Lease. Every acquisition by a different holder increments the counter, so
 * a newer leader always holds a strictly higher number than any earlier one.
 *
 * The fenced-write rule (used by the state store, src/state/, and by the runtime's tests):
 * - every state ConfigMap write stores the writer's token in the annotation
 *   `flink-operator.io/leader` = `<identity>/<transitions>`;
 * - before writing, the writer compares the token stored on the object it read with its own and
 *   refuses (`StaleLeaderError`) when the stored transitions are higher than its own;
 * - the write itself is locked on the resourceVersion it read (PUT with metadata.resourceVersion),
 *   so a newer leader's write landing between the read and the write turns into a 409 Conflict,
 *   and the re-read then sees the newer token and refuses.
 *
 * Guarantees: once a newer leader has written the state object, no write by an older leader can
 * succeed on it (read → check → RV-locked write).
 * Assumptions: all writers of the object follow the rule; the Lease counter only grows.
 * Caveats: an older leader can still write an object the newer leader has not written yet (the
 * check is per object); leader election (leader-election.ts) makes the old leader stop reconciling
 * before the new one starts, so this is a second line of defence, not the first. Equal transition
 * counts are accepted whoever the holder is: with leader election off every process uses
 * `{identity, 0}`, and a restarted pod (new identity) must be able to take over its predecessor's
 * state.
 *
 * Shards (design/012-shards.md): installs with different label selectors hold different Leases, so
 * their counters do not order them. A token therefore also names its `shard` (the Lease,
 * `<namespace>/<name>`) and the resource's hand-over `epoch` (how many times the resource changed
 * shards; each hand-over stamps the state with epoch + 1). The rule becomes: the higher epoch wins;
 * at equal epochs a token of another shard is refused (only a hand-over, shard-handover.ts, may
 * overwrite it); within one shard the counter rule above applies. A stamp in the old format
 * (`<identity>/<transitions>`, no shard) is read as one of the writer's own shard at epoch 0.
 */
export interface FencingToken {
  readonly holderIdentity: string;
  readonly leaseTransitions: number;
  /** The shard (its Lease, `<namespace>/<name>`) of the writer; absent in stamps of the old format. */
  readonly shard?: string;
  /** The resource's hand-over epoch the writer acts in; absent = 0. */
  readonly epoch?: number;
}

/** The annotation on state objects carrying the token of their last writer. */
export const LEADER_ANNOTATION = 'flink-operator.io/leader';

export class StaleLeaderError extends Error {
  readonly stored: FencingToken;
  readonly mine: FencingToken;
  constructor(stored: FencingToken, mine: FencingToken) {
    super(
      `refusing a state write from a stale leader: the object was last written by ${formatFencingToken(stored)}, ` +
        `this writer holds ${formatFencingToken(mine)}`,
    );
    this.name = 'StaleLeaderError';
    this.stored = stored;
    this.mine = mine;
  }
}

/**
 * Thrown instead of StaleLeaderError when the stored token belongs to another shard: the resource
 * is (or was last) owned by another install. Only the hand-over may overwrite it.
 */
export class ForeignShardError extends StaleLeaderError {
  constructor(stored: FencingToken, mine: FencingToken) {
    super(stored, mine);
    this.name = 'ForeignShardError';
    this.message =
      `refusing a write: the object was last written by shard ${stored.shard ?? '?'} (${formatFencingToken(stored)}), ` +
      `this writer is shard ${mine.shard ?? '?'} (${formatFencingToken(mine)}); the resource moves only through a hand-over`;
  }
}

/** `<identity>/<transitions>`, then `@<shard>` when the token names one, then `#<epoch>` when above 0. */
export function formatFencingToken(token: FencingToken): string {
  const base = `${token.holderIdentity}/${token.leaseTransitions}`;
  if (token.shard === undefined) return base;
  return `${base}@${token.shard}${token.epoch ? `#${token.epoch}` : ''}`;
}

/** `@<namespace>/<lease name>[#<epoch>]` at the end of a stamp (names hold no '@', '/' or '#'). */
const SHARD_SUFFIX = /@([^@/#]+\/[^@/#]+)(?:#(0|[1-9][0-9]*))?$/;

/**
 * Parses `<identity>/<transitions>`; the identity may itself contain '/', the number is after the
 * last one. Returns undefined for an absent or malformed value (treated as "no stored token").
 */
export function parseFencingToken(value: string | undefined | null): FencingToken | undefined {
  if (!value) return undefined;
  const suffix = SHARD_SUFFIX.exec(value);
  const base = suffix ? parseLegacyToken(value.slice(0, suffix.index)) : undefined;
  if (suffix && base) {
    const epoch = suffix[2] === undefined ? 0 : Number(suffix[2]);
    if (Number.isSafeInteger(epoch)) return { ...base, shard: suffix[1], ...(epoch > 0 ? { epoch } : {}) };
  }
  return parseLegacyToken(value);
}

/** `<identity>/<transitions>` (the format before shards). */
function parseLegacyToken(value: string): FencingToken | undefined {
  const slash = value.lastIndexOf('/');
  if (slash <= 0) return undefined;
  const digits = value.slice(slash + 1);
  if (!/^(0|[1-9][0-9]*)$/.test(digits)) return undefined;
  const leaseTransitions = Number(digits);
  if (!Number.isSafeInteger(leaseTransitions)) return undefined;
  return { holderIdentity: value.slice(0, slash), leaseTransitions };
}

/**
 * Throws StaleLeaderError when `stored` is newer than `mine`: a higher hand-over epoch, or the same
 * epoch and a newer term of the same shard; ForeignShardError when it is another shard's at the
 * same epoch (see the module comment). A stored token without a shard counts as `mine`'s shard.
 */
export function assertNotStale(stored: FencingToken | undefined, mine: FencingToken): void {
  if (stored === undefined) return;
  const storedEpoch = stored.epoch ?? 0;
  const myEpoch = mine.epoch ?? 0;
  if (storedEpoch !== myEpoch) {
    if (storedEpoch > myEpoch) throw isOtherShard(stored, mine) ? new ForeignShardError(stored, mine) : new StaleLeaderError(stored, mine);
    return;
  }
  if (isOtherShard(stored, mine)) throw new ForeignShardError(stored, mine);
  if (stored.leaseTransitions > mine.leaseTransitions) throw new StaleLeaderError(stored, mine);
}

/** True when both tokens name a shard and they differ (a stamp of the old format names none). */
export function isOtherShard(stored: FencingToken, mine: FencingToken): boolean {
  return stored.shard !== undefined && mine.shard !== undefined && stored.shard !== mine.shard;
}

/** Reads the stored token from an object's annotations. */
export function storedFencingToken(metadata: { annotations?: Record<string, string> } | undefined): FencingToken | undefined {
  return parseFencingToken(metadata?.annotations?.[LEADER_ANNOTATION]);
}
