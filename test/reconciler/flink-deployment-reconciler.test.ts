/**
 * Unit tests of FlinkDeploymentReconciler with a fake of every dependency: an in-memory state store
 * honouring basedOnRevision, a cluster-operations fake and a Flink REST fake that record every call
 * into one ordered log, an injected clock, deterministic job ids, and a fence that records what it
 * was asked (and refuses what a test says). The assertions are on what was called, in order.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1ConfigMap, V1Deployment, V1Pod } from '@kubernetes/client-node';
import { sameValue } from '../../src/api/canonical-json.js';
import { flinkDeployment } from '../../src/api/flink-deployment-builder.js';
import type { FlinkDeploymentSpec } from '../../src/api/flink-deployment-spec.js';
import type { FlinkDeploymentStatusV1 } from '../../src/api/flink-deployment-status.js';
import { FLINK_DEPLOYMENT_FINALIZER, type FlinkDeploymentV1 } from '../../src/api/flink-deployment.js';
import { emptyInternalState, type InternalState } from '../../src/api/internal-state.js';
import { JOB_ID_ANNOTATION } from '../../src/flink/deployed-record.js';
import { taskManagerDeploymentName } from '../../src/flink/flink-resource-naming.js';
import type {
  CancelJobResult,
  DisposalStatus,
  FlinkCheckpointingStatistics,
  FlinkDashboardConfig,
  FlinkJobExceptions,
  FlinkJobOverview,
  SavepointStatus,
  CheckpointStatus,
} from '../../src/flink/flink-rest-types.js';
import type { ObjectReader } from '../../src/kube/object-reader.js';
import { FlinkDeploymentReconciler } from '../../src/reconciler/flink-deployment-reconciler.js';
import type { ApplyOptions, ApplyResult, FlinkClusterObjects, HaMetadataSummary } from '../../src/reconciler/flink-cluster-applier.js';
import type {
  ClusterRenderInputs,
  FlinkClusterOperations,
  FlinkDeploymentReconcilerDependencies,
  FlinkJobApi,
  StatusWriter,
} from '../../src/reconciler/reconciler-dependencies.js';
import { FencedOutError, type SideEffectFence } from '../../src/runtime/side-effect-fence.js';
import { StatePreconditionError } from '../../src/state/state-errors.js';
import { stateConfigMapName, type LoadResult, type StateStore, type StateUpdateFunction, type StateUpdateOptions } from '../../src/state/state-store.js';
import { HOUR, JOB_A, NOW, jobOverview, newImage, spec, stateIn, suspendedSpec } from './decision-fixtures.js';

const NS = 'team-a';
const NAME = 'orders';
const UID = '0d9c8b7a-0000-4000-8000-000000000001';
const TIMINGS = { progressCheckIntervalMs: 5_000, reconcileIntervalMs: 60_000 };
/** The job ids newJobId hands out, in order. */
const jobIdNumber = (n: number) => n.toString(16).padStart(32, '0');
const J1 = jobIdNumber(1);

function deploymentOf(s: FlinkDeploymentSpec, generation = 1, withFinalizer = true): FlinkDeploymentV1 {
  const builder = flinkDeployment(NAME).inNamespace(NS).withUid(UID).withGeneration(generation).withExactSpec(s);
  return (withFinalizer ? builder.withFinalizers(FLINK_DEPLOYMENT_FINALIZER) : builder).build();
}

/** An available JobManager Deployment pinned to `jobId`, and its TaskManager Deployment (1 replica). */
function runningCluster(jobId: string): V1Deployment[] {
  const meta = (name: string) => ({ name, namespace: NS, uid: `${name}-uid`, generation: 1, annotations: { [JOB_ID_ANNOTATION]: jobId } });
  const available = { observedGeneration: 1, replicas: 1, availableReplicas: 1, updatedReplicas: 1, readyReplicas: 1 };
  const deploymentSpec = { replicas: 1, selector: { matchLabels: { app: NAME } }, template: {} };
  return [
    { metadata: meta(NAME), spec: deploymentSpec, status: available },
    { metadata: meta(taskManagerDeploymentName(NAME)), spec: deploymentSpec, status: available },
  ];
}

class MapReader<T extends { metadata?: { namespace?: string; name?: string } }> implements ObjectReader<T> {
  readonly items = new Map<string, T>();
  put(...objects: T[]): void {
    for (const o of objects) this.items.set(`${o.metadata?.namespace}/${o.metadata?.name}`, o);
  }
  get(namespace: string, name: string): T | undefined {
    return this.items.get(`${namespace}/${name}`);
  }
  list(namespace?: string): T[] {
    return [...this.items.values()].filter((o) => namespace === undefined || o.metadata?.namespace === namespace);
  }
}

class RecordingFence implements SideEffectFence {
  readonly token = { holderIdentity: 'operator-0', leaseTransitions: 1 };
  readonly asked: string[] = [];
  constructor(
    private readonly log: string[],
    private readonly refuses: (what: string) => boolean,
  ) {}
  check(what: string): void {
    this.asked.push(what);
    if (!this.refuses(what)) return;
    this.log.push(`fence refused: ${what}`);
    throw new FencedOutError(what, 'the test fence refuses');
  }
}

/** The state store contract (state-store.ts) in memory: basedOnRevision, no write for an equal state, the fence checked before a write. */
class InMemoryStateStore implements StateStore {
  readonly states = new Map<string, InternalState>();
  readonly written: InternalState[] = [];
  /** Runs once before the next update reads the state (a concurrent writer). */
  beforeNextUpdate: (() => void) | undefined;
  constructor(private readonly log: string[]) {}
  async load(deployment: FlinkDeploymentV1): Promise<LoadResult> {
    this.log.push('store.load');
    const state = this.states.get(deployment.metadata.name!);
    return state ? { kind: 'found', state: structuredClone(state), resourceVersion: String(state.revision) } : { kind: 'missing' };
  }
  async update(deployment: FlinkDeploymentV1, fn: StateUpdateFunction, options: StateUpdateOptions = {}): Promise<InternalState> {
    const hook = this.beforeNextUpdate;
    this.beforeNextUpdate = undefined;
    hook?.();
    const name = deployment.metadata.name!;
    const current = this.states.get(name) ?? emptyInternalState();
    const next = fn(structuredClone(current));
    if (sameValue(next, current)) return structuredClone(current);
    if (options.basedOnRevision !== undefined && options.basedOnRevision !== current.revision) {
      this.log.push(`store.update refused: decided on revision ${options.basedOnRevision}, found ${current.revision}`);
      throw new StatePreconditionError(stateConfigMapName(name), options.basedOnRevision, current.revision);
    }
    options.fence?.check(`write state ${stateConfigMapName(name)}`);
    const written: InternalState = {
      ...structuredClone(next),
      revision: current.revision + 1,
      ...(options.fence ? { lastWriter: { ...options.fence.token } } : {}),
    };
    this.states.set(name, written);
    this.written.push(structuredClone(written));
    this.log.push(
      `store.update revision ${written.revision}: ${written.phase}${written.jobIdToSubmit ? ` jobIdToSubmit=${written.jobIdToSubmit}` : ''}${written.pendingSavepoint ? ` pendingSavepoint(stopJob=${written.pendingSavepoint.stopJob})` : ''}`,
    );
    return structuredClone(written);
  }
}

class RecordingCluster implements FlinkClusterOperations {
  readonly rendered: ClusterRenderInputs[] = [];
  ha: HaMetadataSummary | undefined;
  /** deleteDeployments leaves the Deployments in the informer (it has not seen the deletion yet). */
  informerLagsDeletes = false;
  constructor(
    private readonly log: string[],
    private readonly deployments: MapReader<V1Deployment>,
  ) {}
  render(_deployment: FlinkDeploymentV1, inputs: ClusterRenderInputs): FlinkClusterObjects {
    this.log.push(`cluster.render jobId=${inputs.jobId}${inputs.restoreFrom ? ` restoreFrom=${inputs.restoreFrom}` : ''}`);
    this.rendered.push(structuredClone(inputs));
    const meta = (name: string) => ({ metadata: { name, namespace: NS } });
    return {
      configMap: meta(`flink-config-${NAME}`),
      jobManagerDeployment: meta(NAME),
      taskManagerDeployment: meta(taskManagerDeploymentName(NAME)),
      restService: meta(`${NAME}-rest`),
      internalService: meta(NAME),
    };
  }
  async apply(objects: FlinkClusterObjects, options: ApplyOptions): Promise<ApplyResult> {
    options.fence.check(`apply Deployment ${NS}/${objects.jobManagerDeployment.metadata?.name}`);
    this.log.push(`cluster.apply resetHaMetadata=${options.resetHaMetadata}`);
    return { written: ['ConfigMap/flink-config-orders', 'Deployment/orders-taskmanager', 'Deployment/orders'] };
  }
  async readHaMetadata(namespace: string, name: string): Promise<HaMetadataSummary | undefined> {
    this.log.push(`cluster.readHaMetadata ${namespace}/${name}`);
    return this.ha;
  }
  async readFlinkConfigMap(namespace: string, name: string): Promise<V1ConfigMap | undefined> {
    this.log.push(`cluster.readFlinkConfigMap ${namespace}/${name}`);
    return undefined;
  }
  async recordLastSavepoint(namespace: string, name: string, location: string, fence: SideEffectFence): Promise<void> {
    fence.check(`annotate ConfigMap ${namespace}/${name}`);
    this.log.push(`cluster.recordLastSavepoint ${location}`);
  }
  async deleteDeployments(namespace: string, names: readonly string[], fence: SideEffectFence): Promise<string[]> {
    for (const name of names) if (this.deployments.get(namespace, name)) fence.check(`delete Deployment ${namespace}/${name}`);
    this.log.push(`cluster.deleteDeployments ${names.join(',')}`);
    if (!this.informerLagsDeletes) for (const name of names) this.deployments.items.delete(`${namespace}/${name}`);
    return names.filter((name) => this.deployments.get(namespace, name) !== undefined);
  }
  async deleteServicesAndConfig(namespace: string, serviceNames: readonly string[], configMapName: string, fence: SideEffectFence): Promise<void> {
    fence.check(`delete Services of ${namespace}`);
    this.log.push(`cluster.deleteServicesAndConfig ${serviceNames.join(',')} ${configMapName}`);
  }
  async deleteHaMetadata(namespace: string, name: string, fence: SideEffectFence): Promise<void> {
    fence.check(`delete HA metadata of ${namespace}/${name}`);
    this.log.push('cluster.deleteHaMetadata');
  }
  async scaleTaskManagers(_namespace: string, _name: string, replicas: number, fence: SideEffectFence): Promise<void> {
    fence.check('scale the TaskManagers');
    this.log.push(`cluster.scaleTaskManagers ${replicas}`);
  }
  async listPods(_namespace: string, labelSelector: string): Promise<V1Pod[]> {
    this.log.push(`cluster.listPods ${labelSelector}`);
    return [];
  }
}

/** Flink's REST API: answers listJobs from `jobs`; every other call is recorded and answered only when scripted. */
class RecordingFlinkApi implements FlinkJobApi {
  jobs: FlinkJobOverview[] = [];
  constructor(private readonly log: string[]) {}
  private unexpected(call: string): never {
    this.log.push(`api.${call}`);
    throw new Error(`unexpected Flink REST call ${call}`);
  }
  async listJobs(): Promise<FlinkJobOverview[]> {
    this.log.push('api.listJobs');
    return structuredClone(this.jobs);
  }
  async stopWithSavepoint(jobId: string, options: { triggerId?: string }): Promise<string> {
    this.log.push(`api.stopWithSavepoint ${jobId}`);
    return options.triggerId ?? 'trigger';
  }
  async triggerSavepoint(jobId: string, options: { triggerId?: string }): Promise<string> {
    this.log.push(`api.triggerSavepoint ${jobId}`);
    return options.triggerId ?? 'trigger';
  }
  async getConfig(): Promise<FlinkDashboardConfig> {
    this.log.push('api.getConfig');
    return Promise.resolve({
      'refresh-interval': 3000,
      'flink-version': '1.20.0',
      'flink-revision': 'b2ca390 @ 2022-02-03T14:54:22+01:00',
    } as FlinkDashboardConfig);
  }
  async cancelJob(jobId: string): Promise<CancelJobResult> {
    return this.unexpected(`cancelJob ${jobId}`);
  }
  async getSavepointStatus(jobId: string): Promise<SavepointStatus> {
    return this.unexpected(`getSavepointStatus ${jobId}`);
  }
  async triggerCheckpoint(jobId: string, _type?: string, triggerId?: string): Promise<string> {
    this.log.push(`api.triggerCheckpoint ${jobId} ${triggerId}`);
    return triggerId ?? 'trigger';
  }
  async getCheckpointStatus(jobId: string, triggerId: string): Promise<CheckpointStatus> {
    return this.unexpected(`getCheckpointStatus ${jobId} ${triggerId}`);
  }
  async getCheckpoints(jobId: string): Promise<FlinkCheckpointingStatistics> {
    return this.unexpected(`getCheckpoints ${jobId}`);
  }
  async getExceptions(jobId: string): Promise<FlinkJobExceptions> {
    return this.unexpected(`getExceptions ${jobId}`);
  }
  async getJobMetrics(jobId: string): Promise<Record<string, string>> {
    return this.unexpected(`getJobMetrics ${jobId}`);
  }
  async disposeSavepoint(path: string): Promise<string> {
    return this.unexpected(`disposeSavepoint ${path}`);
  }
  async getDisposalStatus(triggerId: string): Promise<DisposalStatus> {
    return this.unexpected(`getDisposalStatus ${triggerId}`);
  }
}

interface HarnessOptions {
  deployment: FlinkDeploymentV1;
  state?: InternalState;
  cluster?: V1Deployment[];
  jobs?: FlinkJobOverview[];
  /** The fence refuses these checks. */
  refuses?: (what: string) => boolean;
  leading?: boolean;
  /** FlinkSessionJobs naming this deployment as their session cluster. */
  sessionJobs?: string[];
}

function harness(options: HarnessOptions) {
  const log: string[] = [];
  const clock = { now: NOW };
  const deployments = new MapReader<FlinkDeploymentV1>();
  deployments.put(options.deployment);
  const clusterDeployments = new MapReader<V1Deployment>();
  clusterDeployments.put(...(options.cluster ?? []));
  const store = new InMemoryStateStore(log);
  if (options.state) store.states.set(NAME, structuredClone(options.state));
  const cluster = new RecordingCluster(log, clusterDeployments);
  const api = new RecordingFlinkApi(log);
  api.jobs = options.jobs ?? [];
  const fence = new RecordingFence(log, options.refuses ?? (() => false));
  const statuses: FlinkDeploymentStatusV1[] = [];
  const events: Array<{ type: string; reason: string; message: string }> = [];
  const infoLines: Array<{ fields: Record<string, unknown>; message: string }> = [];
  const counters = { fencedOut: 0, driftDetected: 0, flinkUnreachable: 0 };
  let issued = 0;
  const status: StatusWriter = {
    async record(deployment, written, f) {
      f.check(`patch status of ${deployment.metadata.name}`);
      log.push('status.record');
      statuses.push(structuredClone(written));
      return { ...deployment, status: written };
    },
  };
  const deps: FlinkDeploymentReconcilerDependencies = {
    deployments,
    clusterDeployments,
    store,
    status,
    finalizers: {
      async add(deployment, f) {
        f.check('add the finalizer');
        log.push('finalizers.add');
        return { ...deployment, metadata: { ...deployment.metadata, finalizers: [...(deployment.metadata.finalizers ?? []), FLINK_DEPLOYMENT_FINALIZER] } };
      },
      async remove(_deployment, f) {
        f.check('remove the finalizer');
        log.push('finalizers.remove');
      },
    },
    legacy: {
      async migrateIfLegacy() {
        log.push('legacy.migrateIfLegacy');
        return { kind: 'already-migrated', message: '' };
      },
    },
    cluster,
    flinkApi: () => api,
    fenceFor: () => (options.leading === false ? undefined : fence),
    takeTrimmedSavepoints: () => [],
    returnTrimmedSavepoints: () => {},
    countTrimmedSavepoints: () => 0,
    forgetDeployment: () => log.push('forgetDeployment'),
    sessionJobsOf: (namespace, cluster) => (namespace === NS && cluster === NAME ? (options.sessionJobs ?? []) : []),
    counters: {
      fencedOut: () => void counters.fencedOut++,
      driftDetected: () => void counters.driftDetected++,
      flinkUnreachable: () => void counters.flinkUnreachable++,
    },
    flinkRestAccess: 'direct',
    configurationDefaults: () => ({}),
    events: { emit: (_d, type, reason, message) => void events.push({ type, reason, message }) },
    log: { info: (fields, message) => void infoLines.push({ fields, message }), warn: () => {}, debug: () => {} },
    timings: TIMINGS,
    specHash: (s) => `hash-of-${s.image}`,
    newJobId: () => jobIdNumber(++issued),
    now: () => clock.now,
  };
  const reconciler = new FlinkDeploymentReconciler(deps);
  return {
    log,
    clock,
    store,
    cluster,
    api,
    fence,
    statuses,
    events,
    infoLines,
    counters,
    clusterDeployments,
    pass: () => reconciler.reconcile({ namespace: NS, name: NAME }),
  };
}

describe('FlinkDeploymentReconciler (every dependency faked)', () => {
  test('a new FlinkDeployment: the intent (DEPLOYING + jobIdToSubmit) is written before the apply, then DEPLOYED, then the status once', async () => {
    const h = harness({ deployment: deploymentOf(spec(), 1, false) });
    const result = await h.pass();
    assert.deepEqual(h.log, [
      'store.load',
      'finalizers.add',
      `store.update revision 1: DEPLOYING jobIdToSubmit=${J1}`,
      `cluster.render jobId=${J1}`,
      'cluster.apply resetHaMetadata=false',
      'store.update revision 2: DEPLOYED',
      'status.record',
    ]);
    assert.deepEqual(h.fence.asked, [
      'add the finalizer',
      'write state orders-operator-state',
      'apply Deployment team-a/orders',
      'write state orders-operator-state',
      'patch status of orders',
    ]);
    const [intent, deployed] = h.store.written;
    assert.equal(intent?.phase, 'DEPLOYING');
    assert.equal(intent?.jobIdToSubmit, J1);
    assert.equal(intent?.lastReconciledGeneration, 1);
    assert.equal(intent?.lastReconciledSpec?.job?.state, 'running');
    assert.equal(intent?.reconciliationTimestamp, new Date(NOW).toISOString());
    assert.equal(deployed?.phase, 'DEPLOYED');
    assert.equal(deployed?.deployedJobId, J1);
    assert.equal(deployed?.jobIdToSubmit, undefined);
    assert.deepEqual(h.cluster.rendered, [{ spec: intent.lastReconciledSpec, generation: 1, specHash: 'hash-of-flink:1.20', jobId: J1 }]);
    assert.equal(h.statuses.length, 1);
    const status = h.statuses[0];
    assert.equal(status.lifecycleState, 'DEPLOYED');
    assert.equal(status.jobManagerDeploymentStatus, 'DEPLOYING');
    assert.deepEqual(status.jobStatus, { jobId: J1, state: 'RECONCILING' });
    assert.deepEqual(status.stateRef, { configMapName: 'orders-operator-state', revision: 2 });
    assert.equal(status.observedGeneration, 1);
    assert.equal(status.error, undefined);
    assert.deepEqual(
      h.events.map((e) => `${e.reason}: ${e.message}`),
      [`Submit: Deploying job ${J1} without state`],
    );
    assert.deepEqual(result, { requeueAfterMs: TIMINGS.progressCheckIntervalMs });
    // One info line for the decision: what, why, which step (issue 16).
    const decisions = h.infoLines.filter((l) => l.message.startsWith('reconcile step'));
    assert.deepEqual(decisions, [
      { fields: { namespace: NS, name: NAME, phase: 'NEW', step: 'deploy', why: 'first deployment' }, message: 'reconcile step deploy' },
    ]);
  });

  test('a RUNNING deployment with nothing to do: no state write, no apply, no Kubernetes write; only the status writer is given the status', async () => {
    const s = spec();
    const h = harness({
      deployment: deploymentOf(s),
      state: stateIn('RUNNING', s, { revision: 5 }),
      cluster: runningCluster(JOB_A),
      jobs: [jobOverview(JOB_A, 'RUNNING')],
    });
    const result = await h.pass();
    assert.deepEqual(h.log, ['store.load', 'api.listJobs', 'api.getConfig', 'status.record']);
    assert.deepEqual(h.fence.asked, ['patch status of orders']);
    assert.deepEqual(h.store.written, []);
    const status = h.statuses[0];
    assert.equal(status.lifecycleState, 'STABLE');
    assert.equal(status.jobManagerDeploymentStatus, 'READY');
    assert.deepEqual(status.jobStatus, {
      jobId: JOB_A,
      jobName: 'StateMachineExample',
      state: 'RUNNING',
      startTime: String(NOW - 2 * HOUR),
      updateTime: String(NOW - HOUR),
    });
    assert.deepEqual(status.stateRef, { configMapName: 'orders-operator-state', revision: 5 });
    assert.equal(status.error, undefined);
    assert.deepEqual(
      status.conditions?.map((c) => [c.type, c.status, c.reason]),
      [
        ['Ready', 'True', 'JobRunning'],
        ['Running', 'True', 'Running'],
      ],
    );
    assert.deepEqual(h.events, []);
    assert.deepEqual(result, { requeueAfterMs: TIMINGS.reconcileIntervalMs });
    assert.deepEqual(
      h.infoLines.filter((l) => l.message.startsWith('reconcile step')),
      [],
      'a steady pass that does nothing logs nothing at info',
    );
  });

  test('a suspend of a last-state deployment whose job Flink HA holds: the Deployments are deleted; no stop-with-savepoint, no apply', async () => {
    const ls = spec({ upgradeMode: 'last-state', ha: true });
    const h = harness({
      deployment: deploymentOf(suspendedSpec(ls), 2),
      state: stateIn('RUNNING', ls, { revision: 5 }),
      cluster: runningCluster(JOB_A),
      jobs: [jobOverview(JOB_A, 'RUNNING')],
    });
    h.cluster.ha = { jobIds: [JOB_A], hasCheckpoint: true };
    const result = await h.pass();
    assert.deepEqual(h.log, [
      'store.load',
      'api.listJobs',
      'api.getConfig',
      'cluster.readHaMetadata team-a/orders',
      'store.update revision 6: SUSPENDING',
      'cluster.deleteDeployments orders,orders-taskmanager',
      'store.update revision 7: SUSPENDED',
      'status.record',
    ]);
    assert.ok(!h.log.some((c) => /stopWithSavepoint|triggerSavepoint|cluster\.apply|cluster\.render|recordLastSavepoint/.test(c)), h.log.join('\n'));
    const state = h.store.states.get(NAME)!;
    assert.equal(state.phase, 'SUSPENDED');
    assert.equal(state.lastReconciledSpec?.job?.state, 'suspended');
    assert.equal(state.lastReconciledGeneration, 2);
    assert.equal(state.deployedJobId, JOB_A, 'the job id stays: the resume recovers it from Flink HA');
    assert.equal(state.upgradeSavepointPath, undefined);
    assert.equal(h.clusterDeployments.list().length, 0);
    const status = h.statuses[0];
    assert.equal(status.lifecycleState, 'SUSPENDED');
    assert.equal(status.jobStatus?.state, 'SUSPENDED');
    assert.equal(status.jobManagerDeploymentStatus, 'MISSING');
    assert.ok(h.events.some((e) => e.reason === 'Suspended'));
    assert.deepEqual(result, { requeueAfterMs: TIMINGS.reconcileIntervalMs });
  });

  test('a fence that refuses the stop-with-savepoint stops the pass there: the intent is recorded, Flink is not called, nothing after it', async () => {
    const s = spec();
    const h = harness({
      deployment: deploymentOf(newImage(s), 2),
      state: stateIn('RUNNING', s, { revision: 5 }),
      cluster: runningCluster(JOB_A),
      jobs: [jobOverview(JOB_A, 'RUNNING')],
      refuses: (what) => what.startsWith('stop Flink job'),
    });
    const result = await h.pass();
    assert.deepEqual(h.log, [
      'store.load',
      'api.listJobs',
      'api.getConfig',
      'store.update revision 6: STOPPING pendingSavepoint(stopJob=true)',
      `fence refused: stop Flink job ${JOB_A} with a savepoint`,
    ]);
    assert.deepEqual(h.fence.asked, ['write state orders-operator-state', `stop Flink job ${JOB_A} with a savepoint`]);
    assert.equal(h.statuses.length, 0, 'no status write after the refusal');
    assert.equal(h.counters.fencedOut, 1);
    assert.equal(h.store.states.get(NAME)?.pendingSavepoint?.jobId, JOB_A, 'the next pass (of the next term) follows the recorded intent');
    assert.deepEqual(result, { requeueAfterMs: TIMINGS.progressCheckIntervalMs });
  });

  test('a fence that refuses the first state write: nothing is rendered, applied or recorded', async () => {
    const h = harness({ deployment: deploymentOf(spec()), refuses: (what) => what.startsWith('write state') });
    const result = await h.pass();
    assert.deepEqual(h.log, ['store.load', 'fence refused: write state orders-operator-state']);
    assert.deepEqual(h.store.written, []);
    assert.equal(h.counters.fencedOut, 1);
    assert.deepEqual(result, { requeueAfterMs: TIMINGS.progressCheckIntervalMs });
  });

  test('a state that changed under the pass (another revision): the decision is not applied, nothing after it', async () => {
    const s = spec();
    const h = harness({
      deployment: deploymentOf(newImage(s), 2),
      state: stateIn('RUNNING', s, { revision: 5 }),
      cluster: runningCluster(JOB_A),
      jobs: [jobOverview(JOB_A, 'RUNNING')],
    });
    h.store.beforeNextUpdate = () => h.store.states.set(NAME, { ...h.store.states.get(NAME)!, revision: 6 });
    const result = await h.pass();
    assert.deepEqual(h.log, ['store.load', 'api.listJobs', 'api.getConfig', 'store.update refused: decided on revision 5, found 6']);
    assert.equal(h.statuses.length, 0);
    assert.deepEqual(result, { requeueAfterMs: TIMINGS.progressCheckIntervalMs });
  });

  test('not leading: nothing is read or written', async () => {
    const h = harness({ deployment: deploymentOf(spec()), leading: false });
    assert.deepEqual(await h.pass(), {});
    assert.deepEqual(h.log, []);
  });

  test('a FlinkDeployment without a spec: a status error naming spec, no exception, nothing deployed', async () => {
    const { spec: _spec, ...specless } = deploymentOf(spec(), 1, false);
    const h = harness({ deployment: specless as unknown as FlinkDeploymentV1 });
    const result = await h.pass();
    assert.deepEqual(h.log, ['store.load', 'finalizers.add', 'status.record']);
    const status = h.statuses[0];
    assert.match(status.error ?? '', /spec: required/);
    assert.match(status.error ?? '', /Nothing is deployed until the spec is fixed/);
    assert.equal(status.lifecycleState, 'CREATED');
    assert.equal(status.jobStatus, undefined);
    assert.deepEqual(
      h.events.map((e) => e.reason),
      ['ValidationError'],
    );
    assert.deepEqual(result, { requeueAfterMs: TIMINGS.reconcileIntervalMs });
  });

  test('a finished job whose Deployments the informer still lists after the shutdown delete: the next pass does not redeploy it', async () => {
    // Fails (see the report): shut-down 'FINISHED' records nothing before deleting (cluster-steps.ts shutDown),
    // so once the Deployments are gone the phase is still RUNNING and the missing JobManager is "recovered".
    const sl = spec({ upgradeMode: 'stateless' });
    const h = harness({
      deployment: deploymentOf(sl),
      state: stateIn('RUNNING', sl, { revision: 5 }),
      cluster: runningCluster(JOB_A),
      jobs: [jobOverview(JOB_A, 'FINISHED', NOW - 48 * HOUR)],
    });
    h.cluster.informerLagsDeletes = true;
    await h.pass();
    assert.ok(h.log.includes('cluster.deleteDeployments orders,orders-taskmanager'), h.log.join('\n'));
    h.clusterDeployments.items.clear(); // the informer catches up: both Deployments are gone
    h.log.length = 0;
    h.clock.now += 5_000;
    await h.pass();
    assert.ok(!h.log.some((c) => c.startsWith('cluster.apply')), `a finished job was deployed again:\n${h.log.join('\n')}`);
    assert.equal(h.store.states.get(NAME)?.phase, 'FINISHED');
  });

  const JOB_B = 'b'.repeat(32);
  test('a session cluster is not deleted while FlinkSessionJobs name it, nor while unmanaged jobs run; then it is (SessionReconciler.cleanupInternal)', async () => {
    const { job: _job, ...session } = spec();
    const deleting = () => {
      const d = deploymentOf(session);
      d.metadata.deletionTimestamp = new Date(NOW);
      return d;
    };
    const blocked = harness({ deployment: deleting(), state: stateIn('RUNNING', session), cluster: runningCluster(JOB_A), sessionJobs: ['job-b', 'job-a'] });
    await blocked.pass();
    assert.ok(!blocked.log.some((l) => l.startsWith('cluster.delete') || l === 'finalizers.remove'), blocked.log.join('\n'));
    assert.deepEqual(
      blocked.events.filter((e) => e.reason === 'CleanupFailed').map((e) => e.message.split(':')[0]),
      ['The session jobs [job-a, job-b] should be deleted first'],
    );
    assert.match(blocked.statuses.at(-1)?.error ?? '', /block-on-session-jobs/);
    assert.equal(blocked.statuses.at(-1)?.lifecycleState, 'DELETING');

    const unmanaged = harness({
      deployment: deleting(),
      state: stateIn('RUNNING', session),
      cluster: runningCluster(JOB_A),
      jobs: [jobOverview(JOB_B, 'RUNNING')],
    });
    await unmanaged.pass();
    assert.ok(!unmanaged.log.includes('finalizers.remove'));
    assert.match(unmanaged.events.find((e) => e.reason === 'CleanupFailed')?.message ?? '', new RegExp(`non terminated jobs \\[${JOB_B}\\]`));

    const free = harness({
      deployment: deleting(),
      state: stateIn('RUNNING', session),
      cluster: runningCluster(JOB_A),
      jobs: [jobOverview(JOB_B, 'CANCELED')],
    });
    await free.pass();
    assert.ok(free.log.includes('finalizers.remove'), free.log.join('\n'));
  });
});
