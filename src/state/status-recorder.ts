/**
 * Writes the user-facing FlinkDeployment status: one request per change, none when nothing changed.
 *
 * record(deployment, status):
 * 1. base = the newest of (the object our last status patch returned, kept in a read-your-writes
 *    overlay, and the deployment as the reconciler saw it), compared by resourceVersion;
 * 2. base.status deep-equals `status` → no request, returns base;
 * 3. else one JSON patch (RFC 6902; the changed fields only, from fast-json-patch `compare`) to the
 *    /status subresource, prefixed with `test /metadata/resourceVersion == <base rv>`: the server
 *    evaluates the patch against the whole object, so a stale base fails the test (422 on a real
 *    server, 409 accepted too) instead of merging into a status we have not seen;
 * 4. on that failure, or a 5xx / 429 / lost connection (fate unknown): GET the object, recompute
 *    against it (maybe nothing is left to send), retry; at most `maxAttempts` requests in all;
 * 5. the response feeds the overlay and the own-write tracker (the echo is not a reason to reconcile).
 *
 * Guarantees: a status write never lands on a base we did not diff against; no request when equal;
 * exactly one request per change when nothing else writes the object meanwhile.
 * Assumptions: the API server applies JSON patches to /status against the full object (as
 * Kubernetes does), so the `test` op on metadata.resourceVersion is evaluated.
 * Caveats: a user's spec or metadata edit between our read and our patch also changes the
 * resourceVersion and costs one GET + retry. A 422 on a fresh base (same resourceVersion as the base)
 * is a real validation error and is thrown at once. Someone else's status edit is overwritten on the
 * next record (status is derived from state, not a source of truth).
 */
import type { SideEffectFence } from '../runtime/side-effect-fence.js';
import jsonPatch, { type Operation } from 'fast-json-patch';
import type { FlinkDeploymentV1 } from '../api/flink-deployment.js';
import { isConflict, isInvalid, isTransient, KubeApiError, toKubeApiError } from '../kube/api-errors.js';
import type { FlinkResourceClient } from '../kube/flink-deployment-client.js';
import type { ObservableObjectReader } from '../kube/object-reader.js';
import { compareResourceVersions } from '../kube/resource-version.js';
import type { WriteTracker } from '../runtime/own-write-tracker.js';
import { ReadYourWritesCache } from './read-your-writes-cache.js';

/** What the recorder needs of the object whose status it writes (a FlinkDeployment or a FlinkSessionJob). */
export interface StatusOwner {
  kind: string;
  metadata: { namespace?: string; name?: string; uid?: string; resourceVersion?: string; generation?: number };
  status?: unknown;
}

export interface StatusRecorderOptions<R extends StatusOwner = FlinkDeploymentV1> {
  readonly client: Pick<FlinkResourceClient<R, StatusOwner>, 'get' | 'patchStatus'>;
  /** The informer of the kind (its events evict the overlay); optional. */
  readonly informer?: ObservableObjectReader<R>;
  /** The kind, for the own-write tracker and messages. Default FlinkDeployment. */
  readonly kind?: string;
  readonly writeTracker?: WriteTracker;
  /** Requests per record at most. Default 3. */
  readonly maxAttempts?: number;
}

const FLINK_DEPLOYMENT_KIND = 'FlinkDeployment';

/** JSON-equal form (drops undefined members) so equality and diffs ignore them. */
function normalized<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

/** The JSON patch turning `base`'s status into `status`, or [] when equal. */
export function statusPatch<R extends StatusOwner>(base: R, status: NonNullable<R['status']>): Operation[] {
  const current = normalized(base.status);
  const desired = normalized(status);
  if (current === undefined || current === null) return Object.keys(desired).length === 0 ? [] : [{ op: 'add', path: '/status', value: desired }];
  // compare() finds no operation when the two are equal: no separate deep-equality pass
  return jsonPatch.compare(current, desired).map((op) => ({ ...op, path: `/status${op.path}` }) as Operation);
}

export class StatusRecorder<R extends StatusOwner = FlinkDeploymentV1> {
  /** The objects our status patches returned. */
  readonly overlay: ReadYourWritesCache<R>;
  private readonly unsubscribe: (() => void) | undefined;
  private readonly maxAttempts: number;
  private readonly kind: string;
  private requests = 0;

  constructor(private readonly options: StatusRecorderOptions<R>) {
    this.kind = options.kind ?? FLINK_DEPLOYMENT_KIND;
    this.overlay = new ReadYourWritesCache<R>(options.informer);
    this.unsubscribe = options.informer?.subscribe((event) => this.overlay.observe(event));
    this.maxAttempts = Math.max(1, options.maxAttempts ?? 3);
  }

  close(): void {
    this.unsubscribe?.();
  }

  /** Status requests (patches and GETs) sent so far, for tests and metrics. */
  requestCount(): number {
    return this.requests;
  }

  /** Makes the deployment's status equal `status`; returns the object as the server has it now. */
  async record(deployment: R, status: NonNullable<R['status']>, fence?: SideEffectFence): Promise<R> {
    const namespace = deployment.metadata.namespace ?? '';
    const name = deployment.metadata.name ?? '';
    let base = this.newestBase(deployment);
    let lastError: KubeApiError | undefined;
    for (let attempt = 1; attempt <= this.maxAttempts; attempt++) {
      const ops = this.patchFor(base, status);
      if (ops.length === 0) return base;
      const baseVersion = base.metadata.resourceVersion;
      const patch: Operation[] = baseVersion ? [{ op: 'test', path: '/metadata/resourceVersion', value: baseVersion }, ...ops] : ops;
      fence?.check(`patch the status of ${this.kind} ${namespace}/${name}`);
      try {
        this.requests++;
        const written = await this.options.client.patchStatus(namespace, name, patch);
        this.overlay.recordWrite(written);
        this.options.writeTracker?.recordOwnWrite(this.kind, namespace, name, written.metadata.resourceVersion, written.metadata.generation);
        return written;
      } catch (error) {
        const failure = toKubeApiError(error);
        if (!isConflict(failure) && !isInvalid(failure) && !isTransient(failure)) throw failure;
        lastError = failure;
        if (attempt === this.maxAttempts) break;
        this.requests++;
        const fresh = await this.options.client.get(namespace, name);
        if (!fresh) throw new KubeApiError(404, 'NotFound', `${this.kind} ${namespace}/${name} was deleted while recording its status`);
        if (deployment.metadata.uid && fresh.metadata.uid !== deployment.metadata.uid) {
          throw new KubeApiError(409, 'Conflict', `${this.kind} ${namespace}/${name} was replaced (uid ${fresh.metadata.uid}) while recording its status`);
        }
        if (isInvalid(failure) && fresh.metadata.resourceVersion === baseVersion) throw failure; // not stale: really invalid
        this.overlay.recordWrite(fresh);
        base = fresh;
      }
    }
    throw lastError ?? new Error('status not recorded');
  }

  /** The patch `record(deployment, status)` would send now (without the resourceVersion test); [] when nothing changed. */
  pendingChanges(deployment: R, status: NonNullable<R['status']>): Operation[] {
    const base = this.newestBase(deployment);
    const ops = statusPatch(base, status);
    // a record() of the same status on the same base right after reuses it (one diff per pass, not two)
    this.lastPending = { base, status, ops };
    return ops;
  }

  /** The last patch pendingChanges computed, with its base (one resourceVersion is one content) and the status object it was computed for. */
  private lastPending: { base: R; status: unknown; ops: Operation[] } | undefined;

  private patchFor(base: R, status: NonNullable<R['status']>): Operation[] {
    const pending = this.lastPending;
    this.lastPending = undefined;
    const sameBase =
      pending !== undefined && pending.base.metadata.uid === base.metadata.uid && pending.base.metadata.resourceVersion === base.metadata.resourceVersion;
    return sameBase && pending.status === status && base.metadata.resourceVersion !== undefined ? pending.ops : statusPatch(base, status);
  }

  /** Forget what we wrote for a deployment (after its deletion). */
  forget(namespace: string, name: string): void {
    this.overlay.forget(namespace, name);
  }

  private newestBase(deployment: R): R {
    const ours = this.overlay.get(deployment.metadata.namespace ?? '', deployment.metadata.name ?? '');
    if (!ours || (deployment.metadata.uid && ours.metadata.uid !== deployment.metadata.uid)) return deployment;
    return compareResourceVersions(ours.metadata.resourceVersion, deployment.metadata.resourceVersion) === 1 ? ours : deployment;
  }
}
