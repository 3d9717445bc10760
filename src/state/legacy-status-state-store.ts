/**
 * The StateStore over the legacy layout: the Apache operator's v1beta1 status
 * (`status.reconciliationStatus`, `jobStatus.upgradeSavepointPath`, `savepointInfo`, `checkpointInfo`).
 * Behind the same interface as the ConfigMap store so the migration command and the comparison
 * benchmark can run the same steps against either layout.
 *
 * load: GET under v1beta1; a status without legacy fields is `missing`; a malformed one is a
 * CorruptStateError naming the status field (from the codec's LegacyStatusError).
 * update(fn): GET → decode → fn → encode (the user-facing fields of the status are kept as they are)
 * → PUT /status under v1beta1 locked on the object's resourceVersion; on 409 / transient failures,
 * re-GET and re-apply (bounded).
 *
 * Guarantees: as StateStore, for the fields the legacy layout can express; the returned state is
 * `decode(encode(fn(s)))`, i.e. exactly what a reader will get back.
 * Assumptions: fn is pure and idempotent.
 * Caveats: the legacy layout has no revision (every load reports revision 1, the codec's
 * MIGRATED_STATE_REVISION), no place for intents without a Flink trigger id nor `jobIdToSubmit`
 * (dropped, as the Apache operator would), and no fencing annotation (the status subresource cannot
 * write metadata): only the not-leader check applies. The status lock also conflicts with spec and
 * metadata edits, so a user's edit costs a retry (the Apache operator's JOSDK #1198 problem).
 */
import { isDeepStrictEqual } from 'node:util';
import type { FlinkDeploymentV1, FlinkDeploymentV1beta1 } from '../api/flink-deployment.js';
import { emptyInternalState, type InternalState } from '../api/internal-state.js';
import { decodeLegacyStatus, encodeLegacyStatus, hasLegacyFields, type DecodedLegacyStatus } from '../api/legacy-status-codec.js';
import { LegacyStatusError } from '../api/legacy-spec-codec.js';
import { isConflict, isTransient, KubeApiError, toKubeApiError } from '../kube/api-errors.js';
import type { FlinkDeploymentClient } from '../kube/flink-deployment-client.js';
import type { FencingToken } from '../runtime/fencing-token.js';
import { CorruptStateError, NotLeaderError, StateWriteRetriesExhaustedError } from './state-errors.js';
import { stateConfigMapName, type LoadResult, type StateStore, type StateUpdateFunction } from './state-store.js';

export interface LegacyStatusStateStoreOptions {
  readonly client: FlinkDeploymentClient;
  readonly fencingToken: () => FencingToken | undefined;
  readonly maxAttempts?: number;
  readonly retryDelayMs?: number;
}

function comparable(state: InternalState): unknown {
  const { revision: _r, lastWriter: _w, ...rest } = JSON.parse(JSON.stringify(state)) as InternalState;
  return rest;
}

export class LegacyStatusStateStore implements StateStore {
  private readonly maxAttempts: number;
  private readonly retryDelayMs: number;

  constructor(private readonly options: LegacyStatusStateStoreOptions) {
    this.maxAttempts = Math.max(1, options.maxAttempts ?? 5);
    this.retryDelayMs = options.retryDelayMs ?? 50;
  }

  async load(deployment: FlinkDeploymentV1): Promise<LoadResult> {
    const object = await this.get(deployment);
    if (!object || !hasLegacyFields(object.status)) return { kind: 'missing' };
    return { kind: 'found', state: this.decode(object).state, resourceVersion: object.metadata.resourceVersion ?? '' };
  }

  async update(deployment: FlinkDeploymentV1, fn: StateUpdateFunction): Promise<InternalState> {
    const resource = `${deployment.metadata.namespace ?? ''}/${deployment.metadata.name ?? ''}`;
    let lastError: unknown;
    for (let attempt = 1; attempt <= this.maxAttempts; attempt++) {
      if (!this.options.fencingToken()) throw new NotLeaderError(`${resource} (status)`);
      const object = await this.get(deployment);
      if (!object) throw new KubeApiError(404, 'NotFound', `FlinkDeployment ${resource} not found`);
      const decoded: DecodedLegacyStatus = hasLegacyFields(object.status)
        ? this.decode(object)
        : { state: emptyInternalState(), userStatus: structuredClone(object.status ?? {}) };
      const current = decoded.state;
      const input = structuredClone(current);
      const next = fn(input);
      if (next === input) return current;
      const status = encodeLegacyStatus(next, decoded.userStatus);
      const written: InternalState = { ...this.decodeStatus(status, object).state, revision: current.revision };
      if (isDeepStrictEqual(comparable(written), comparable(current))) return current;
      try {
        await this.options.client.replaceStatusV1beta1({ ...object, status });
        return written;
      } catch (error) {
        if (!isConflict(error) && !isTransient(error)) throw toKubeApiError(error);
        lastError = error;
        if (attempt < this.maxAttempts && this.retryDelayMs > 0) await new Promise((r) => setTimeout(r, this.retryDelayMs * 2 ** (attempt - 1)));
      }
    }
    throw new StateWriteRetriesExhaustedError(`${resource} (status)`, this.maxAttempts, toKubeApiError(lastError));
  }

  private async get(deployment: FlinkDeploymentV1): Promise<FlinkDeploymentV1beta1 | undefined> {
    const object = await this.options.client.getV1beta1(deployment.metadata.namespace ?? '', deployment.metadata.name ?? '');
    if (object && deployment.metadata.uid && object.metadata.uid !== deployment.metadata.uid) return undefined;
    return object;
  }

  private decode(object: FlinkDeploymentV1beta1): DecodedLegacyStatus {
    return this.decodeStatus(object.status ?? {}, object);
  }

  private decodeStatus(status: NonNullable<FlinkDeploymentV1beta1['status']>, object: FlinkDeploymentV1beta1): DecodedLegacyStatus {
    const namespace = object.metadata.namespace ?? '';
    const name = object.metadata.name ?? '';
    try {
      return decodeLegacyStatus(status, `${namespace}/${name}`, stateConfigMapName(name));
    } catch (error) {
      if (error instanceof LegacyStatusError) throw new CorruptStateError(name, namespace, error.field, error.message, 'FlinkDeployment status of');
      throw error;
    }
  }
}
