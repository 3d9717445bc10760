/**
 * Observation hold: a status change that only reports what the operator observed (TaskManager
 * replicas, the JobManager getting ready, a job initializing, cluster info) is held back for a
 * moment, so that it goes out with the next transition's status patch instead of a patch of its
 * own (issue 22: at most one status patch per state transition, observation patches included).
 *
 * What counts as an observation only: every changed path of the pending status patch is one of
 * HOLDABLE_PATHS, and no value it writes is a failure (a JobManager in ERROR, a job FAILED). Anything
 * else (lifecycleState, error, observedGeneration, stateRef, a condition's status or reason, a
 * savepoint, ...) is never held, and when it is written it carries every held observation with it:
 * the status is built from the whole observation each pass (level-based), so nothing is queued.
 *
 * Guarantees: an observation reaches the status at most `holdMs` after the first pass that held it
 * (the pass asks to be requeued by then), or with the next patch that is not held, whichever comes
 * first; a pass that wrote state is never held (its patch is the transition's); a hold costs one
 * number per resource while it lasts and nothing after.
 * Assumptions: the caller passes the patch it would send now (against the newest status it knows),
 * and `release` after every status write, so a later hold is timed from its own first pass.
 * Caveats: for up to `holdMs` the status may lag the cluster in the holdable fields; a process restart
 * forgets its holds (the next pass holds again for at most `holdMs`).
 */

/** One operation of a pending status patch (RFC 6902, paths under /status). */
export interface PendingStatusChange {
  readonly op: string;
  readonly path: string;
  readonly value?: unknown;
}

/** Status paths (prefixes) whose changes are observations only. */
const HOLDABLE_PATHS: readonly RegExp[] = [
  /^\/status\/taskManager(\/|$)/,
  /^\/status\/jobManagerDeploymentStatus$/,
  /^\/status\/clusterInfo(\/|$)/,
  /^\/status\/jobStatus\/(state|jobName|startTime|updateTime)$/,
  // a condition's status never (True/False/Unknown is what `kubectl wait` and alerts read); its reason and message while the status stays
  /^\/status\/conditions\/[0-9]+\/(reason|message|observedGeneration)$/,
];

/** Values (compared upper-cased: states and condition reasons) that report a failure or an end: never held, whatever the path. */
const FAILURE_VALUES: ReadonlySet<string> = new Set([
  'ERROR',
  'MISSING',
  'JOBMANAGERDEPLOYMENTMISSING',
  'FAILED',
  'FAILING',
  'CANCELED',
  'CANCELLING',
  'SUSPENDED',
  'FINISHED',
]);

/** True when every change is a holdable observation (and there is at least one). */
export function isObservationOnly(changes: readonly PendingStatusChange[]): boolean {
  if (changes.length === 0) return false;
  return changes.every(
    (change) =>
      (change.op === 'replace' || change.op === 'add') &&
      HOLDABLE_PATHS.some((path) => path.test(change.path)) &&
      !(typeof change.value === 'string' && FAILURE_VALUES.has(change.value.toUpperCase())),
  );
}

/** What a pass does with its pending status patch. */
export type HoldVerdict = { readonly hold: true; readonly remainingMs: number } | { readonly hold: false };

export class ObservationHold {
  /** When the pending observation of each resource (by uid) was first held. */
  private readonly heldSince = new Map<string, number>();

  /** `holdMs`: the operator's `--observation-hold` (operator-knobs.ts); 0 never holds. */
  constructor(private readonly holdMs: number) {}

  /**
   * Whether to hold `changes` now. `transitioned`: the pass wrote state (its patch is never held).
   * A held verdict says how long until the hold runs out (requeue by then).
   */
  verdict(uid: string, changes: readonly PendingStatusChange[], transitioned: boolean, now: number): HoldVerdict {
    if (this.holdMs <= 0 || transitioned || !isObservationOnly(changes)) return { hold: false };
    const since = this.heldSince.get(uid) ?? now;
    const remainingMs = since + this.holdMs - now;
    if (remainingMs <= 0) return { hold: false };
    this.heldSince.set(uid, since);
    return { hold: true, remainingMs };
  }

  /** The status was written (or needs nothing): the next hold is timed afresh. */
  release(uid: string): void {
    this.heldSince.delete(uid);
  }

  /** How many resources have an observation held (tests, metrics). */
  size(): number {
    return this.heldSince.size;
  }
}
