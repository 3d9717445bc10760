/**
 * The asynchronous operations of one simulated JobManager process, by trigger id: savepoints,
 * stop-with-savepoint, triggered checkpoints and savepoint disposals, as Flink's
 * CompletedOperationCache keeps them for its `.../:triggerid` status handlers.
 *
 * Guarantees:
 * - an operation completes once (a second `finish` is ignored), and a savepoint or
 *   stop-with-savepoint updates its lineage entry when it does;
 * - `failInFlightSavepoints` (the process dies) ends every savepoint still in flight as FAILED in
 *   the lineage; the operations themselves die with the process (a new process has none);
 * - `lookup` answers an unknown trigger id, one of another kind, or one of another job with Flink's
 *   404 texts (UnknownOperationKeyException for disposals, the savepoint/checkpoint handlers' text
 *   otherwise).
 * Caveats: operations are never evicted (Flink's cache drops them after `rest.async.store-duration`).
 */
import type { SimulatedException } from './flink-job.js';
import { type AsyncOperation, FlinkRestError, type OperationKind } from './flink-jobmanager-context.js';
import type { DeploymentRef, LineageRecorder } from './lineage-recorder.js';
import { type RandomSource, randomHex } from './simulation-random.js';

export interface AsyncOperationResult {
  readonly location?: string;
  readonly checkpointId?: number;
  readonly failure?: SimulatedException;
}

export class AsyncOperations {
  private readonly byTrigger = new Map<string, AsyncOperation>();

  constructor(
    private readonly deps: { readonly lineage: LineageRecorder; readonly deployment: DeploymentRef; readonly random: RandomSource; readonly now: () => number },
  ) {}

  /** The operation a client-chosen trigger id already names (idempotent triggers), if any. */
  get(triggerId: string): AsyncOperation | undefined {
    return this.byTrigger.get(triggerId);
  }

  all(): IterableIterator<AsyncOperation> {
    return this.byTrigger.values();
  }

  create(kind: OperationKind, jobId: string | null, requested: string | null): AsyncOperation {
    const triggerId = requested?.toLowerCase() ?? randomHex(this.deps.random, 32);
    const op: AsyncOperation = { triggerId, kind, jobId, status: 'IN_PROGRESS', location: null, checkpointId: null, failure: null };
    this.byTrigger.set(triggerId, op);
    return op;
  }

  finish(op: AsyncOperation, result: AsyncOperationResult): void {
    if (op.status === 'COMPLETED') return;
    op.status = 'COMPLETED';
    op.location = result.location ?? null;
    op.checkpointId = result.checkpointId ?? null;
    op.failure = result.failure ?? null;
    if (op.kind === 'savepoint' || op.kind === 'stop-with-savepoint') {
      const outcome = { status: op.failure ? ('FAILED' as const) : ('COMPLETED' as const), location: op.location };
      this.deps.lineage.savepointFinished(this.deps.deployment, op.triggerId, outcome, this.deps.now());
    }
  }

  /** The process died: savepoints in flight never complete, their lineage entries become FAILED. */
  failInFlightSavepoints(): void {
    for (const op of this.byTrigger.values()) {
      if (op.status === 'IN_PROGRESS' && (op.kind === 'savepoint' || op.kind === 'stop-with-savepoint')) {
        this.deps.lineage.savepointFinished(this.deps.deployment, op.triggerId, { status: 'FAILED', location: null }, this.deps.now());
      }
    }
  }

  /** The operation behind a trigger id, checked against the job it was triggered for. */
  lookup(kind: OperationKind, triggerId: string, jobId: string | null): AsyncOperation {
    const op = this.byTrigger.get(triggerId.toLowerCase());
    const kindMatches = op && (op.kind === kind || (kind === 'savepoint' && op.kind === 'stop-with-savepoint'));
    if (!op || !kindMatches || (jobId !== null && op.jobId !== jobId.toLowerCase())) {
      if (kind === 'savepoint-disposal') throw new FlinkRestError(404, `Operation not found under key: ${triggerId}`);
      const label = kind === 'checkpoint' ? 'checkpoint' : 'savepoint';
      throw new FlinkRestError(404, `There is no ${label} operation with triggerId=${triggerId} for job ${jobId}.`);
    }
    return op;
  }
}
