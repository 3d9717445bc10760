import type { V1Pod } from '@kubernetes/client-node';

/**
 * Bounds how often the reconciler LISTs pods for failure reasons.
 *
 * Why: while a JobManager Deployment is DEPLOYING, every progress check of that FlinkDeployment
 * lists its pods (to report CrashLoopBackOff, ImagePullBackOff...). A label-selector LIST is
 * answered by scanning the whole namespace (kube-apiserver's watch cache filters every object of
 * the namespace; so does the dev cluster), so N deploying deployments polled every
 * `progressCheckInterval` cost O(N²) per interval. Measured with 2,000 deployments created at once
 * (design/performance.md): the API server spent its time in those LISTs and the deployments never
 * all became STABLE within 260 s.
 *
 * What: the answer for one (namespace, label selector) is reused for `maxAgeMs`; after that the
 * next call LISTs again. Concurrent calls for the same key share one request.
 *
 * Guarantees: a returned list was fetched at most `maxAgeMs` ago (or is being fetched now); a
 *   failed LIST is not cached (the next call tries again).
 * Assumptions: pod lists are only used for diagnostics (failure reasons, native-mode TaskManager
 *   counts), where an answer `maxAgeMs` old is as good as a fresh one.
 * Caveats: a pod failure reaches the status up to `maxAgeMs` later. Entries are dropped when they
 *   expire (on the next call, or by a timer that does not keep the process alive), so the map holds
 *   only recently polled keys.
 *
 * Operator-wide budget (`listWithinBudget`, issue 22): the per-key bound still lets N slow
 * JobManagers cost N LISTs per `maxAgeMs`, each scanning the namespace — at 10,000 deployments
 * created at once that is what saturates the API server. Diagnostic LISTs therefore also share one
 * token bucket (`listsPerSecond`, a burst of as many): over it, `listWithinBudget` answers
 * undefined ("not known now, ask again later") without a request; an answer still fresh for its
 * key costs no token. Guarantees: at most `listsPerSecond` × (seconds + 1) diagnostic LISTs in any
 * window. Caveat: under a burst a failure reason is reported when a token is free, later than
 * `maxAgeMs`.
 */
export class PodListThrottle {
  private readonly entries = new Map<string, { at: number; pods: Promise<V1Pod[]> }>();

  /** Tokens of the operator-wide budget, and when they were last refilled. */
  private tokens: number;
  private refilledAt: number;

  constructor(
    private readonly list: (namespace: string, labelSelector: string) => Promise<V1Pod[]>,
    private readonly maxAgeMs: number,
    private readonly now: () => number = () => Date.now(),
    private readonly listsPerSecond = Infinity,
  ) {
    this.tokens = listsPerSecond;
    this.refilledAt = now();
  }

  /** Like `listPods`, within the operator-wide budget: undefined (no request) when it is spent. */
  async listWithinBudget(namespace: string, labelSelector: string): Promise<V1Pod[] | undefined> {
    const now = this.now();
    this.evictOlderThan(now - this.maxAgeMs);
    if (!this.entries.has(`${namespace}\u0000${labelSelector}`)) {
      this.tokens = Math.min(this.listsPerSecond, this.tokens + ((now - this.refilledAt) / 1000) * this.listsPerSecond);
      this.refilledAt = now;
      if (this.tokens < 1) return undefined;
      this.tokens -= 1;
    }
    return this.listPods(namespace, labelSelector);
  }

  async listPods(namespace: string, labelSelector: string): Promise<V1Pod[]> {
    const now = this.now();
    this.evictOlderThan(now - this.maxAgeMs);
    const key = `${namespace}\u0000${labelSelector}`;
    const cached = this.entries.get(key);
    if (cached) return cached.pods;
    const pods = this.list(namespace, labelSelector);
    const entry = { at: now, pods };
    this.entries.set(key, entry);
    // dropped when it expires even if no call comes after it (the last burst's lists would stay otherwise)
    setTimeout(() => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    }, this.maxAgeMs).unref();
    try {
      return await pods;
    } catch (error) {
      if (this.entries.get(key)?.pods === pods) this.entries.delete(key);
      throw error;
    }
  }

  private evictOlderThan(limit: number): void {
    // Map iteration is in insertion order, and entries are inserted with increasing `at`.
    for (const [key, entry] of this.entries) {
      if (entry.at > limit) break;
      this.entries.delete(key);
    }
  }

  /** Cached keys (for tests). */
  get size(): number {
    return this.entries.size;
  }
}
