/**
 * Fakes of every dependency of the FlinkSessionJob reconciler (SessionJobReconcilerDependencies),
 * for test/reconciler/session-job-reconciler.test.ts. Each records what it was asked into one
 * ordered `log`, so a test asserts the order of intent, effect and result.
 *
 * - `InMemorySessionJobStateStore`: the StateStore contract (src/state/state-store.ts) as
 *   ConfigMapStateStore keeps it: the fence checked before each update attempt (with the message
 *   the real store uses), no write for an equal state, `basedOnRevision` honoured, revision +1 per
 *   write, the written state checked against the session-job internal-state schema; a scripted
 *   write failure stands for a crash (or a lost connection) right before the write.
 * - `FakeFlinkSessionCluster`: the session cluster's REST API as Flink answers it: a run of a job
 *   id the Dispatcher already has is refused with DuplicateJobSubmissionException (flink-runtime
 *   Dispatcher.submitJob), a cancel is asynchronous (CANCELLING until the test settles it), a
 *   stop-with-savepoint is IN_PROGRESS until the test completes it and then ends the job FINISHED,
 *   an unknown savepoint trigger is a 404 (SavepointHandlers / CompletedOperationCache), a
 *   checkpoint trigger (CheckpointHandlers, Flink 1.19+) is IN_PROGRESS until the test completes it
 *   and de-duplicates its trigger id like a savepoint's. Changing
 *   calls check the fence first, as the wired REST client does (session-job-wiring.ts `beforeWrite`).
 *   `interruptNext` makes the next call of a kind fail with a transport error, its request having
 *   reached Flink (`landed`) or not: the answer-lost crash windows. A malformed job id is refused
 *   before anything is sent, as the REST client's `checkId` does.
 * - `RecordingFence`: records every check; refuses what a predicate says (a lease that is not
 *   valid long enough can refuse one check and pass the next, side-effect-fence.ts).
 *
 * Assumptions: one namespace, one session job and one session cluster per harness.
 * Caveats: the Flink fake models only the calls a session job makes; a newly run job is RUNNING at
 * once (real Flink passes through CREATED/INITIALIZING, which the reconciler treats alike).
 */
import type { V1Deployment } from '@kubernetes/client-node';
import { sameValue } from '../../src/api/canonical-json.js';
import { flinkDeployment } from '../../src/api/flink-deployment-builder.js';
import type { FlinkDeploymentV1 } from '../../src/api/flink-deployment.js';
import { DEFAULT_SESSION_CLUSTER_NAME, flinkSessionJob } from '../../src/api/flink-session-job-builder.js';
import type { FlinkSessionJobSpec } from '../../src/api/flink-session-job-spec.js';
import type { FlinkSessionJobStatusV1 } from '../../src/api/flink-session-job-status.js';
import { FLINK_SESSION_JOB_FINALIZER, type FlinkSessionJobV1 } from '../../src/api/flink-session-job.js';
import { emptyInternalState, type SessionJobInternalState } from '../../src/api/internal-state.js';
import { validateSessionJobInternalStateSchema, validateSessionJobStatusSchema } from '../../src/api/schema-validator.js';
import { formatFieldErrors } from '../../src/api/spec-validation.js';
import { DUPLICATE_JOB_SUBMISSION_EXCEPTION, FlinkRestError, flinkCauseClasses } from '../../src/flink/flink-rest-error.js';
import { jobManagerDeploymentName } from '../../src/flink/flink-resource-naming.js';
import type {
  CancelJobResult,
  CheckpointStatus,
  FlinkCheckpointStatistics,
  FlinkCheckpointingStatistics,
  FlinkJobOverview,
  SavepointStatus,
} from '../../src/flink/flink-rest-types.js';
import { TERMINAL_JOB_STATES } from '../../src/flink/flink-rest-types.js';
import type { ObjectReader } from '../../src/kube/object-reader.js';
import type { SessionJobFlinkApi, SessionJobReconcilerDependencies, SessionJobRunRequest } from '../../src/reconciler/session-job-dependencies.js';
import { FlinkSessionJobReconciler } from '../../src/reconciler/session-job-reconciler.js';
import { FencedOutError, type SideEffectFence } from '../../src/runtime/side-effect-fence.js';
import { StatePreconditionError } from '../../src/state/state-errors.js';
import {
  sessionJobStateConfigMapName,
  type LoadResult,
  type StateStore,
  type StateUpdateFunction,
  type StateUpdateOptions,
} from '../../src/state/state-store.js';

export const NS = 'team-a';
export const NAME = 'orders';
export const CLUSTER = DEFAULT_SESSION_CLUSTER_NAME;
export const UID = '5e551030-0000-4000-8000-000000000018';
export const NOW = Date.parse('2026-12-01T12:00:00.000Z');
export const TIMINGS = { progressCheckIntervalMs: 5_000, reconcileIntervalMs: 60_000 };
/** The ids newJobId hands out (job ids and savepoint trigger ids alike), in order: J(1), J(2), … */
export const J = (n: number): string => n.toString(16).padStart(32, '0');
/** A job the session cluster already runs for this session job. */
export const JOB_A = 'a'.repeat(32);
export const SAVEPOINT_DIR = 'file:///flink-data/savepoints';

/** The FlinkSessionJob `orders` in team-a. */
export function sessionJobOf(spec: FlinkSessionJobSpec, options: { generation?: number; finalizer?: boolean; deleting?: boolean } = {}): FlinkSessionJobV1 {
  const builder = flinkSessionJob(NAME)
    .inNamespace(NS)
    .withUid(UID)
    .withGeneration(options.generation ?? 1)
    .withExactSpec(spec);
  const job = (options.finalizer === false ? builder : builder.withFinalizers(FLINK_SESSION_JOB_FINALIZER)).build();
  if (options.deleting) job.metadata.deletionTimestamp = new Date(NOW);
  return job;
}

/** The session cluster `session-cluster`: a FlinkDeployment without spec.job, savepoint and checkpoint directories set. */
export function sessionCluster(edit: (d: FlinkDeploymentV1) => void = () => {}): FlinkDeploymentV1 {
  const cluster = flinkDeployment(CLUSTER).inNamespace(NS).withUid(`${CLUSTER}-uid`).withGeneration(1).withoutJob().build();
  edit(cluster);
  return cluster;
}

/** The session cluster's JobManager Deployment, available. */
export function availableJobManager(): V1Deployment {
  return {
    metadata: { name: jobManagerDeploymentName(CLUSTER), namespace: NS, generation: 1 },
    spec: { replicas: 1, selector: { matchLabels: { app: CLUSTER } }, template: {} },
    status: { observedGeneration: 1, replicas: 1, availableReplicas: 1, updatedReplicas: 1, readyReplicas: 1 },
  };
}

/** A state in `phase`, having deployed `spec` at generation 1 (deployedJobId JOB_A for a phase that runs one). */
export function stateIn(
  phase: SessionJobInternalState['phase'],
  spec: FlinkSessionJobSpec,
  extra: Partial<SessionJobInternalState> = {},
): SessionJobInternalState {
  return {
    ...emptyInternalState(),
    revision: 5,
    phase,
    lastReconciledSpec: spec,
    lastReconciledGeneration: 1,
    lastStableSpec: spec,
    lastStableGeneration: 1,
    firstDeployment: false,
    ...(phase === 'DEPLOYED' || phase === 'RUNNING' ? { deployedJobId: JOB_A } : {}),
    ...extra,
  };
}

/** One entry of GET /jobs/overview. */
export function listedJob(jid: string, state: string, startTime = NOW - 3_600_000): FlinkJobOverview {
  return { jid, name: 'TopSpeedWindowing', state, 'start-time': startTime, 'end-time': -1, duration: NOW - startTime, 'last-modification': startTime };
}

export class MapReader<T extends { metadata?: { namespace?: string; name?: string } }> implements ObjectReader<T> {
  readonly items = new Map<string, T>();
  put(...objects: T[]): void {
    for (const o of objects) this.items.set(`${o.metadata?.namespace}/${o.metadata?.name}`, structuredClone(o));
  }
  get(namespace: string, name: string): T | undefined {
    const found = this.items.get(`${namespace}/${name}`);
    return found ? structuredClone(found) : undefined;
  }
  list(namespace?: string): T[] {
    return [...this.items.values()].filter((o) => namespace === undefined || o.metadata?.namespace === namespace).map((o) => structuredClone(o));
  }
}

export class RecordingFence implements SideEffectFence {
  readonly token = { holderIdentity: 'operator-0', leaseTransitions: 1 };
  readonly asked: string[] = [];
  constructor(
    private readonly log: string[],
    public refuses: (what: string) => boolean,
  ) {}
  check(what: string): void {
    this.asked.push(what);
    if (!this.refuses(what)) return;
    this.log.push(`fence refused: ${what}`);
    throw new FencedOutError(what, 'the test fence refuses');
  }
}

function stateLine(s: SessionJobInternalState): string {
  return (
    `store.update revision ${s.revision}: ${s.phase}` +
    (s.jobIdToSubmit ? ` jobIdToSubmit=${s.jobIdToSubmit}` : '') +
    (s.pendingSavepoint ? ` pendingSavepoint(triggerId=${s.pendingSavepoint.triggerId ?? 'none'})` : '') +
    (s.pendingCheckpoint ? ` pendingCheckpoint(triggerId=${s.pendingCheckpoint.triggerId ?? 'none'})` : '')
  );
}

/** The state store contract in memory (see the module comment). */
export class InMemorySessionJobStateStore implements StateStore<FlinkSessionJobV1, SessionJobInternalState> {
  state: SessionJobInternalState | undefined;
  readonly written: SessionJobInternalState[] = [];
  /** Thrown by the next update that would write (the write does not land). */
  failNextWrite: Error | undefined;
  constructor(private readonly log: string[]) {}

  async load(job: FlinkSessionJobV1): Promise<LoadResult<SessionJobInternalState>> {
    this.log.push('store.load');
    if (job.metadata.name !== NAME) throw new Error(`unexpected state load for ${job.metadata.name}`);
    return this.state ? { kind: 'found', state: structuredClone(this.state), resourceVersion: String(this.state.revision) } : { kind: 'missing' };
  }

  async update(job: FlinkSessionJobV1, fn: StateUpdateFunction<SessionJobInternalState>, options: StateUpdateOptions = {}): Promise<SessionJobInternalState> {
    const configMap = sessionJobStateConfigMapName(job.metadata.name ?? '');
    options.fence?.check(`write operator state ${NS}/${configMap}`);
    const current = this.state ?? emptyInternalState();
    const input = structuredClone(current);
    const next = fn(input);
    if (next === input || sameValue(next, current)) return structuredClone(current);
    if (options.basedOnRevision !== undefined && options.basedOnRevision !== current.revision) {
      this.log.push(`store.update refused: decided on revision ${options.basedOnRevision}, found ${current.revision}`);
      throw new StatePreconditionError(`${NS}/${configMap}`, options.basedOnRevision, current.revision);
    }
    const failure = this.failNextWrite;
    if (failure) {
      this.failNextWrite = undefined;
      this.log.push(`store.update failed: ${failure.message}`);
      throw failure;
    }
    // What the ConfigMap holds: JSON (undefined members gone), revision bumped, the writer stamped.
    const written = JSON.parse(
      JSON.stringify({ ...next, revision: current.revision + 1, ...(options.fence ? { lastWriter: { ...options.fence.token } } : {}) }),
    ) as SessionJobInternalState;
    const problems = validateSessionJobInternalStateSchema(written);
    if (problems.length > 0) throw new Error(`the state written does not fit the session-job state schema: ${formatFieldErrors(problems)}`);
    this.state = written;
    this.written.push(structuredClone(written));
    this.log.push(stateLine(written));
    return structuredClone(written);
  }
}

/** An error as the REST client reports a call that got no answer (flink-rest-client.ts, source `transport`). */
export function transportError(method: string, path: string): FlinkRestError {
  return new FlinkRestError(
    `Flink REST API of ${NS}/${CLUSTER} unreachable via http://${CLUSTER}-rest.${NS}:8081${path}: ECONNRESET (socket hang up); is the JobManager running? The ${method} was not retried: if it reached the JobManager its effect may have happened.`,
    { path, method, url: `http://${CLUSTER}-rest.${NS}:8081${path}`, source: 'transport', code: 'ECONNRESET' },
  );
}

/** Flink's error for a 4xx/5xx answer with its `errors` body, the causes read as the REST client reads them. */
function flinkAnswer(method: string, path: string, status: number, errors: string[]): FlinkRestError {
  const causes = flinkCauseClasses(JSON.stringify({ errors }));
  return new FlinkRestError(`Flink REST API of ${NS}/${CLUSTER}: ${method} ${path} failed with ${status}: ${errors[0]?.split('\n')[0] ?? ''}`, {
    path,
    method,
    url: `http://${CLUSTER}-rest.${NS}:8081${path}`,
    source: 'flink',
    status,
    serverMessages: errors,
    ...(causes.length > 0 ? { causes } : {}),
  });
}

/**
 * JarRunHandler's 400 for a job id the Dispatcher already has: "Could not execute application."
 * with the stack trace down to DuplicateJobSubmissionException (Dispatcher.submitJob) as its first
 * `errors` entry (AbstractHandler writes ExceptionUtils.stringifyException).
 */
export function duplicateSubmissionError(jarId: string, jobName = 'TopSpeedWindowing'): FlinkRestError {
  const trace = [
    'org.apache.flink.runtime.rest.handler.RestHandlerException: Could not execute application.',
    '\tat org.apache.flink.runtime.webmonitor.handlers.JarRunHandler.lambda$handleRequest$1(JarRunHandler.java:114)',
    `Caused by: java.util.concurrent.CompletionException: org.apache.flink.util.FlinkRuntimeException: Could not execute application.`,
    'Caused by: org.apache.flink.util.FlinkRuntimeException: Could not execute application.',
    `Caused by: org.apache.flink.client.program.ProgramInvocationException: The main method caused an error: Failed to execute job '${jobName}'.`,
    `Caused by: org.apache.flink.util.FlinkException: Failed to execute job '${jobName}'.`,
    `Caused by: ${DUPLICATE_JOB_SUBMISSION_EXCEPTION}: Job has already been submitted.`,
    '\tat org.apache.flink.runtime.dispatcher.Dispatcher.submitJob(Dispatcher.java:489)',
  ].join('\n');
  return flinkAnswer('POST', `/jars/${jarId}/run`, 400, [trace]);
}

/** The REST client refuses a malformed job id before sending anything (flink-rest-client.ts `checkId`). */
function checkJobId(id: string): string {
  if (!/^[0-9a-f]{32}$/.test(id)) throw new Error(`invalid Flink job id "${id}": expected 32 hexadecimal characters`);
  return id;
}

type InterruptibleCall = 'runJar' | 'stopWithSavepoint' | 'cancelJob';

interface Trigger {
  jobId: string;
  status: SavepointStatus;
  triggeredAt: number;
}

/** The session cluster's Flink (see the module comment). */
export class FakeFlinkSessionCluster {
  jobs: FlinkJobOverview[] = [];
  /** Job ids the Dispatcher refuses to run again beyond those listed (its JobResultStore outlives the overview). */
  readonly knownJobIds = new Set<string>();
  readonly runs: Array<{ jarId: string; request: SessionJobRunRequest }> = [];
  readonly stops: Array<{ jobId: string; triggerId: string | undefined; targetDirectory: string | undefined; drain: boolean | undefined }> = [];
  readonly uploaded = new Set<string>();
  /** Savepoints of each job as GET /jobs/:id/checkpoints lists them. */
  readonly checkpointHistory = new Map<string, FlinkCheckpointStatistics[]>();
  private readonly triggers = new Map<string, Trigger>();
  /** Checkpoint triggers by trigger id (POST /jobs/:id/checkpoints, Flink 1.19+), each asked once. */
  readonly checkpointTriggers = new Map<string, { jobId: string; checkpointType: string | undefined; status: CheckpointStatus }>();
  private readonly interruptions = new Map<InterruptibleCall, { landed: boolean }>();
  private uploads = 0;

  constructor(
    private readonly log: string[],
    private readonly clock: { now: number },
  ) {}

  /** The next `call` fails with a transport error; `landed`: Flink received and acted on it (only the answer was lost). */
  interruptNext(call: InterruptibleCall, landed: boolean): void {
    this.interruptions.set(call, { landed });
  }
  private interruption(call: InterruptibleCall): { landed: boolean } | undefined {
    const found = this.interruptions.get(call);
    this.interruptions.delete(call);
    return found;
  }

  /** A job reaches `state` (a cancel completing, a job failing). */
  settle(jobId: string, state: string): void {
    for (const job of this.jobs) if (job.jid === jobId) Object.assign(job, { state, 'end-time': TERMINAL_JOB_STATES.has(state) ? this.clock.now : -1 });
  }

  /** The stop-with-savepoint of `triggerId` completes at `location`: the job ends FINISHED, the savepoint is in its history. */
  completeSavepoint(triggerId: string, location: string): void {
    const trigger = this.triggers.get(triggerId);
    if (!trigger) throw new Error(`no trigger ${triggerId}`);
    trigger.status = { status: 'COMPLETED', location };
    this.settle(trigger.jobId, 'FINISHED');
    this.recordSavepoint(trigger.jobId, { status: 'COMPLETED', triggeredAt: trigger.triggeredAt, location });
  }

  /** A savepoint entry in the job's checkpoint history. */
  recordSavepoint(jobId: string, entry: { status: 'COMPLETED' | 'IN_PROGRESS' | 'FAILED'; triggeredAt: number; location?: string }): void {
    const history = this.checkpointHistory.get(jobId) ?? [];
    const id = history.length + 1;
    history.unshift({
      id,
      status: entry.status,
      is_savepoint: true,
      savepointFormat: 'CANONICAL',
      trigger_timestamp: entry.triggeredAt,
      latest_ack_timestamp: entry.status === 'COMPLETED' ? entry.triggeredAt + 1_000 : -1,
      checkpoint_type: 'SAVEPOINT',
      ...(entry.location ? { external_path: entry.location } : {}),
    });
    this.checkpointHistory.set(jobId, history);
  }

  /** The checkpoint of `triggerId` completes as checkpoint `checkpointId`. */
  completeCheckpoint(triggerId: string, checkpointId: number): void {
    const trigger = this.checkpointTriggers.get(triggerId);
    if (!trigger) throw new Error(`no checkpoint trigger ${triggerId}`);
    trigger.status = { status: 'COMPLETED', checkpointId };
  }

  /** Flink forgets its trigger results (rest.async.operation.store-duration passed, or the JobManager failed over). */
  forgetTriggers(): void {
    this.triggers.clear();
  }

  /** The REST API as one pass sees it: changing calls check `fence` first (session-job-wiring.ts). */
  apiWith(fence: SideEffectFence): SessionJobFlinkApi {
    const write = (method: string, path: string) => fence.check(`send ${method} ${path} to Flink`);
    return {
      listJobs: async () => {
        this.log.push('flink.listJobs');
        return structuredClone(this.jobs);
      },
      uploadJar: async (jar, fileName) => {
        write('POST', '/jars/upload');
        const jarId = `jar-${++this.uploads}_${fileName}`;
        this.log.push(`flink.uploadJar ${fileName} (${jar.byteLength} bytes)`);
        this.uploaded.add(jarId);
        return jarId;
      },
      runJar: async (jarId, request) => {
        checkJobId(request.jobId);
        const path = `/jars/${jarId}/run`;
        write('POST', path);
        this.log.push(`flink.runJar ${jarId} jobId=${request.jobId}${request.savepointPath ? ` savepointPath=${request.savepointPath}` : ''}`);
        this.runs.push({ jarId, request: structuredClone(request) });
        const interrupted = this.interruption('runJar');
        if (interrupted && !interrupted.landed) throw transportError('POST', path);
        if (!this.uploaded.has(jarId)) throw flinkAnswer('POST', path, 400, [`Jar file /tmp/flink-web-upload/${jarId} does not exist`]);
        if (this.knownJobIds.has(request.jobId)) throw duplicateSubmissionError(jarId);
        this.knownJobIds.add(request.jobId);
        this.jobs.push(listedJob(request.jobId, 'RUNNING', this.clock.now));
        if (interrupted) throw transportError('POST', path);
        return request.jobId;
      },
      deleteJar: async (jarId) => {
        write('DELETE', `/jars/${jarId}`);
        this.log.push(`flink.deleteJar ${jarId}`);
        this.uploaded.delete(jarId);
      },
      cancelJob: async (jobId): Promise<CancelJobResult> => {
        const path = `/jobs/${checkJobId(jobId)}?mode=cancel`;
        write('PATCH', path);
        this.log.push(`flink.cancelJob ${jobId}`);
        const interrupted = this.interruption('cancelJob');
        if (interrupted && !interrupted.landed) throw transportError('PATCH', path);
        const job = this.jobs.find((j) => j.jid === jobId);
        if (!job) return { outcome: 'job-not-found' };
        if (TERMINAL_JOB_STATES.has(job.state))
          return { outcome: 'already-terminal', message: `Job ${jobId} has already reached another terminal state (${job.state}).` };
        job.state = 'CANCELLING';
        if (interrupted) throw transportError('PATCH', path);
        return { outcome: 'cancelling' };
      },
      stopWithSavepoint: async (jobId, options) => {
        const path = `/jobs/${checkJobId(jobId)}/stop`;
        write('POST', path);
        this.log.push(`flink.stopWithSavepoint ${jobId} triggerId=${options.triggerId ?? 'none'}`);
        this.stops.push({ jobId, triggerId: options.triggerId, targetDirectory: options.targetDirectory, drain: options.drain });
        const interrupted = this.interruption('stopWithSavepoint');
        if (interrupted && !interrupted.landed) throw transportError('POST', path);
        const triggerId = options.triggerId ?? `trigger-${this.stops.length}`;
        // Flink answers a repeated trigger id with the operation it already has (1.15+).
        if (!this.triggers.has(triggerId)) this.triggers.set(triggerId, { jobId, status: { status: 'IN_PROGRESS' }, triggeredAt: this.clock.now });
        if (interrupted) throw transportError('POST', path);
        return triggerId;
      },
      triggerSavepoint: async (jobId) => {
        write('POST', `/jobs/${checkJobId(jobId)}/savepoints`);
        this.log.push(`flink.triggerSavepoint ${jobId}`);
        throw new Error('unexpected triggerSavepoint: no test here takes a manual or periodic savepoint');
      },
      getSavepointStatus: async (jobId, triggerId) => {
        checkJobId(jobId);
        this.log.push(`flink.getSavepointStatus ${jobId} ${triggerId}`);
        const trigger = this.triggers.get(triggerId);
        if (!trigger || trigger.jobId !== jobId) {
          throw flinkAnswer('GET', `/jobs/${jobId}/savepoints/${triggerId}`, 404, [
            `org.apache.flink.runtime.rest.handler.RestHandlerException: There is no savepoint operation with triggerId=${triggerId} for job ${jobId}.`,
          ]);
        }
        return structuredClone(trigger.status);
      },
      triggerCheckpoint: async (jobId, checkpointType, triggerId) => {
        write('POST', `/jobs/${checkJobId(jobId)}/checkpoints`);
        this.log.push(`flink.triggerCheckpoint ${jobId} ${checkpointType ?? 'CONFIGURED'} triggerId=${triggerId ?? 'none'}`);
        const id = triggerId ?? `checkpoint-trigger-${this.checkpointTriggers.size + 1}`;
        // A repeated trigger id is the operation Flink already has (AbstractAsynchronousOperationHandlers).
        if (!this.checkpointTriggers.has(id)) this.checkpointTriggers.set(id, { jobId, checkpointType, status: { status: 'IN_PROGRESS' } });
        return id;
      },
      getCheckpointStatus: async (jobId, triggerId) => {
        checkJobId(jobId);
        this.log.push(`flink.getCheckpointStatus ${jobId} ${triggerId}`);
        const trigger = this.checkpointTriggers.get(triggerId);
        if (!trigger || trigger.jobId !== jobId) {
          throw flinkAnswer('GET', `/jobs/${jobId}/checkpoints/${triggerId}`, 404, [
            `org.apache.flink.runtime.rest.handler.RestHandlerException: There is no checkpoint operation with triggerId=${triggerId} for job ${jobId}.`,
          ]);
        }
        return structuredClone(trigger.status);
      },
      getCheckpoints: async (jobId): Promise<FlinkCheckpointingStatistics> => {
        checkJobId(jobId);
        this.log.push(`flink.getCheckpoints ${jobId}`);
        if (!this.jobs.some((j) => j.jid === jobId)) throw flinkAnswer('GET', `/jobs/${jobId}/checkpoints`, 404, [`Job ${jobId} not found`]);
        const history = structuredClone(this.checkpointHistory.get(jobId) ?? []);
        const completed = history.filter((c) => c.status === 'COMPLETED').length;
        const inProgress = history.filter((c) => c.status === 'IN_PROGRESS').length;
        return {
          counts: { restored: 0, total: history.length, in_progress: inProgress, completed, failed: history.length - completed - inProgress },
          summary: {},
          latest: { completed: null, savepoint: history.find((c) => c.status === 'COMPLETED') ?? null, failed: null, restored: null },
          history,
        };
      },
    };
  }
}

export interface HarnessOptions {
  job: FlinkSessionJobV1;
  state?: SessionJobInternalState;
  /** The session cluster's FlinkDeployment; `null` for none. */
  cluster?: FlinkDeploymentV1 | null;
  /** Its JobManager Deployment is available (default true when there is a cluster). */
  jobManagerAvailable?: boolean;
  jobs?: FlinkJobOverview[];
  /** The fence refuses these checks. */
  refuses?: (what: string) => boolean;
}

/** Every dependency faked, one log; `pass()` reconciles `team-a/orders` once, `restart()` starts a new operator process. */
export function harness(options: HarnessOptions) {
  const log: string[] = [];
  const clock = { now: NOW };
  const sessionJobs = new MapReader<FlinkSessionJobV1>();
  sessionJobs.put(options.job);
  const sessionClusters = new MapReader<FlinkDeploymentV1>();
  const cluster = options.cluster === undefined ? sessionCluster() : options.cluster;
  if (cluster) sessionClusters.put(cluster);
  const clusterDeployments = new MapReader<V1Deployment>();
  if (cluster && options.jobManagerAvailable !== false) clusterDeployments.put(availableJobManager());
  const store = new InMemorySessionJobStateStore(log);
  if (options.state) store.state = structuredClone(options.state);
  const flink = new FakeFlinkSessionCluster(log, clock);
  flink.jobs = structuredClone(options.jobs ?? []);
  for (const j of flink.jobs) flink.knownJobIds.add(j.jid);
  const fence = new RecordingFence(log, options.refuses ?? (() => false));
  const statuses: FlinkSessionJobStatusV1[] = [];
  const events: Array<{ type: string; reason: string; message: string }> = [];
  const infoLines: Array<{ fields: Record<string, unknown>; message: string }> = [];
  const counters = { fencedOut: 0 };
  let issued = 0;
  const resource = (job: FlinkSessionJobV1) => `FlinkSessionJob ${job.metadata.namespace}/${job.metadata.name}`;
  const deps: SessionJobReconcilerDependencies = {
    sessionJobs,
    sessionClusters,
    clusterDeployments,
    store,
    status: {
      async record(job, status, f) {
        f.check(`patch status of ${resource(job)}`);
        // The API server validates the status subresource against the CRD schema.
        const problems = validateSessionJobStatusSchema(status, 'v1');
        if (problems.length > 0) throw new Error(`status refused by the CRD schema: ${formatFieldErrors(problems)}`);
        log.push('status.record');
        statuses.push(structuredClone(status));
        const updated = { ...job, status: structuredClone(status) };
        sessionJobs.put(updated);
        return updated;
      },
    },
    finalizers: {
      async add(job, f) {
        f.check(`add the finalizer to ${resource(job)}`);
        log.push('finalizers.add');
        const updated = { ...job, metadata: { ...job.metadata, finalizers: [...(job.metadata.finalizers ?? []), FLINK_SESSION_JOB_FINALIZER] } };
        sessionJobs.put(updated);
        return updated;
      },
      async remove(job, f) {
        f.check(`remove the finalizer from ${resource(job)}`);
        log.push('finalizers.remove');
        // The last finalizer of an object being deleted: Kubernetes removes the object.
        sessionJobs.items.delete(`${job.metadata.namespace}/${job.metadata.name}`);
      },
    },
    legacy: {
      async migrateIfLegacy(job) {
        log.push('legacy.migrateIfLegacy');
        throw new Error(`unexpected legacy migration of ${resource(job)}`);
      },
    },
    flinkApi: (c, f) => {
      if (c.metadata.name !== CLUSTER) throw new Error(`unexpected Flink client for ${c.metadata.name}`);
      log.push(`flinkApi ${c.metadata.name}`);
      return flink.apiWith(f);
    },
    fetchJar: async (spec) => {
      const uri = spec.job?.jarURI;
      log.push(`fetchJar ${uri ?? '(the empty jar)'}`);
      return { bytes: new Uint8Array([0x50, 0x4b, 0x05, 0x06]), fileName: uri ? uri.slice(uri.lastIndexOf('/') + 1) : 'empty.jar' };
    },
    allowedJarSchemes: ['https'],
    fenceFor: () => fence,
    forgetSessionJob: () => void log.push('forgetSessionJob'),
    counters: { fencedOut: () => void counters.fencedOut++ },
    events: { emit: (_job, type, reason, message) => void events.push({ type, reason, message }) },
    log: { info: (fields, message) => void infoLines.push({ fields, message }), warn: () => {}, debug: () => {} },
    timings: TIMINGS,
    newJobId: () => J(++issued),
    now: () => clock.now,
  };
  let reconciler = new FlinkSessionJobReconciler(deps);
  return {
    log,
    clock,
    store,
    flink,
    fence,
    statuses,
    events,
    infoLines,
    counters,
    sessionJobs,
    /** How many ids newJobId handed out. */
    issued: () => issued,
    /** The session job as the operator now sees it. */
    current: () => sessionJobs.get(NS, NAME),
    /** The user edits the spec (generation +1). */
    editSpec(edit: (spec: FlinkSessionJobSpec) => void): void {
      const job = sessionJobs.get(NS, NAME)!;
      edit(job.spec);
      job.metadata.generation = (job.metadata.generation ?? 0) + 1;
      sessionJobs.put(job);
    },
    pass: () => reconciler.reconcile({ namespace: NS, name: NAME }),
    /** A new operator process: nothing remembered but what the fakes hold (Kubernetes, the state ConfigMap, Flink). */
    restart(): void {
      reconciler = new FlinkSessionJobReconciler(deps);
    },
  };
}

export type Harness = ReturnType<typeof harness>;
