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
 */
export interface FencingToken {
  readonly holderIdentity: string;
  readonly leaseTransitions: number;
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

/** `<identity>/<transitions>`. */
export function formatFencingToken(token: FencingToken): string {
  return `${token.holderIdentity}/${token.leaseTransitions}`;
}

/**
 * Parses `<identity>/<transitions>`; the identity may itself contain '/', the number is after the
 * last one. Returns undefined for an absent or malformed value (treated as "no stored token").
 */
export function parseFencingToken(value: string | undefined | null): FencingToken | undefined {
  if (!value) return undefined;
  const slash = value.lastIndexOf('/');
  if (slash <= 0) return undefined;
  const digits = value.slice(slash + 1);
  if (!/^(0|[1-9][0-9]*)$/.test(digits)) return undefined;
  const leaseTransitions = Number(digits);
  if (!Number.isSafeInteger(leaseTransitions)) return undefined;
  return { holderIdentity: value.slice(0, slash), leaseTransitions };
}

/** Throws StaleLeaderError when `stored` comes from a newer leadership term than `mine`. */
export function assertNotStale(stored: FencingToken | undefined, mine: FencingToken): void {
  if (stored !== undefined && stored.leaseTransitions > mine.leaseTransitions) throw new StaleLeaderError(stored, mine);
}

/** Reads the stored token from an object's annotations. */
export function storedFencingToken(metadata: { annotations?: Record<string, string> } | undefined): FencingToken | undefined {
  return parseFencingToken(metadata?.annotations?.[LEADER_ANNOTATION]);
}
