/**
 * The crash test of FlinkStateSnapshot resources (issue 19, "Done when": "a crash-test scenario
 * with SIGKILL around a snapshot resource write"). The operator runs as a child process
 * (`flink-operator run`) with the FlinkStateSnapshot CRD installed, so it records its savepoints as
 * resources through the outbox of its state ConfigMap (`snapshotResourceWrites`). A FlinkDeployment
 * takes a periodic savepoint every 2 s; once it runs, the user creates ONE FlinkStateSnapshot
 * (savepoint, backoffLimit 0). The operator is SIGKILLed 1–2 times (seeded): an aimed kill waits
 * until the state ConfigMap shows an owed resource write and kills right then (between the outbox
 * write and the resource write, or between the resource write and the removal of the entry); an
 * unaimed one falls at a random moment. It is restarted after each kill.
 *
 * Judged by the world, not by logs, once the operator was left to settle (the user's snapshot final,
 * at least one periodic savepoint recorded, no intent, nothing owed):
 * - every savepoint in the operator's history (state ConfigMap) is one COMPLETED savepoint of the
 *   simulated Flink's lineage and has exactly one FlinkStateSnapshot with that `status.path`; the
 *   operator created no other resource (none lost, none duplicated);
 * - the user's snapshot is COMPLETED with a path and triggered exactly one savepoint in the lineage
 *   (its `status.triggerId`, fixed before the call, names exactly one lineage entry, at that path);
 * - every savepoint in the lineage is one of those (nothing Flink took is unaccounted for);
 * - nothing is owed (`pendingOperation` absent, so no `snapshotResourceWrites`), no job id ran twice.
 *
 * Assumptions: the world is crash-recovery.ts's; the FlinkStateSnapshot CRD is installed by the first
 * run of a world (the other scenarios run without it, as before). Each run deletes its FlinkDeployment
 * at the end so later runs' operators do not keep taking its periodic savepoints.
 * Caveats: the history limit is raised (100) so that no trimming deletes resources during a run.
 *
 * Used by test/e2e/crash-recovery.test.ts (two seeds) and `npm run test:crash -- --scenario
 * snapshot-resources` (many).
 */
import { ApiextensionsV1Api, CoreV1Api, CustomObjectsApi, type V1ConfigMap } from '@kubernetes/client-node';
import { flinkDeployment } from '../../src/api/flink-deployment-builder.js';
import type { FlinkDeploymentV1 } from '../../src/api/flink-deployment.js';
import { flinkStateSnapshot } from '../../src/api/flink-state-snapshot-builder.js';
import {
  FLINK_STATE_SNAPSHOT_CRD_NAME,
  FLINK_STATE_SNAPSHOT_PLURAL,
  FLINK_STATE_SNAPSHOT_VERSION,
  SNAPSHOT_TRIGGER_TYPE_LABEL,
  type FlinkStateSnapshot,
} from '../../src/api/flink-state-snapshot.js';
import { seededRandom } from '../../src/devcluster/simulation/simulation-random.js';
import { decodeStateConfigMap } from '../../src/state/state-configmap-codec.js';
import { stateConfigMapName } from '../../src/state/state-store.js';
import { OperatorProcess, until, type CrashRunResult, type CrashWorld } from './crash-recovery.js';
import { installCrd, STATE_SNAPSHOT_CRD_FILE } from './operator-harness.js';

const GROUP = 'flink.apache.org';
const NS = 'default';
/** Unaimed kills fall in [0, this) ms after the user's snapshot was created (a periodic savepoint is due every 2 s). */
const KILL_WINDOW_MS = 2_500;
/** An aimed kill waits this long at most for an owed resource write to show, then kills anyway. */
const AIM_TIMEOUT_MS = 6_000;

/** Installs the FlinkStateSnapshot CRD unless the world has it already. */
async function ensureSnapshotCrd(world: CrashWorld): Promise<void> {
  const kc = world.world.cluster.kubeConfig();
  const served = await kc
    .makeApiClient(ApiextensionsV1Api)
    .readCustomResourceDefinition({ name: FLINK_STATE_SNAPSHOT_CRD_NAME })
    .then(() => true)
    .catch(() => false);
  if (!served) await installCrd(kc, STATE_SNAPSHOT_CRD_FILE);
}

export async function snapshotCrashRun(world: CrashWorld, seed: number): Promise<CrashRunResult> {
  const started = Date.now();
  const random = seededRandom(seed);
  const name = `snap-crash-${seed}`;
  const userSnapshotName = `${name}-user`;
  const kc = world.world.cluster.kubeConfig();
  const custom = kc.makeApiClient(CustomObjectsApi);
  const core = kc.makeApiClient(CoreV1Api);
  const deployments = { group: GROUP, version: 'v1', namespace: NS, plural: 'flinkdeployments' };
  const snapshots = { group: GROUP, version: FLINK_STATE_SNAPSHOT_VERSION, namespace: NS, plural: FLINK_STATE_SNAPSHOT_PLURAL };
  const readDeployment = async () => (await custom.getNamespacedCustomObject({ ...deployments, name })) as FlinkDeploymentV1;
  const readState = () => core.readNamespacedConfigMap({ namespace: NS, name: stateConfigMapName(name) });
  const listSnapshots = async () =>
    ((await custom.listNamespacedCustomObject(snapshots)) as { items: FlinkStateSnapshot[] }).items.filter(
      (s) => s.spec?.jobReference?.name === name || s.metadata.name === userSnapshotName,
    );

  await ensureSnapshotCrd(world);
  let operator = new OperatorProcess(world.kubeconfigPath, `${name}-op`);
  const killedDuring: string[] = [];
  try {
    await custom.createNamespacedCustomObject({
      ...deployments,
      body: flinkDeployment(name)
        .withFlinkConfiguration({
          'kubernetes.operator.periodic.savepoint.interval': '2 s',
          'kubernetes.operator.savepoint.history.max.count': '100',
        })
        .build(),
    });
    const running = await until(
      async () => {
        const d = await readDeployment();
        return d.status?.lifecycleState === 'STABLE' && d.status.jobStatus?.state === 'RUNNING' ? d : undefined;
      },
      30_000,
      `${name} STABLE`,
    );
    const jobId = running.status?.jobStatus?.jobId ?? '';
    await custom.createNamespacedCustomObject({
      ...snapshots,
      body: flinkStateSnapshot(userSnapshotName).of('FlinkDeployment', name).asSavepoint().withBackoffLimit(0).build(),
    });

    const kills = random() < 0.5 ? 1 : 2;
    for (let k = 0; k < kills; k++) {
      // Aimed at any owed write (the user's status comes first) or at a periodic savepoint's resource.
      const aim = random() < 0.3 ? undefined : random() < 0.5 ? 'any' : 'PERIODIC';
      if (aim) {
        const deadline = Date.now() + AIM_TIMEOUT_MS;
        while (Date.now() < deadline) {
          const cm = await readState().catch(() => undefined);
          const owed = cm?.data?.pendingOperation ? (decodeStateConfigMap(cm).snapshotResourceWrites ?? []) : [];
          if (owed.some((w) => aim === 'any' || w.triggerType === aim)) break;
          await new Promise((r) => setTimeout(r, 5));
        }
      } else await new Promise((r) => setTimeout(r, Math.floor(random() * KILL_WINDOW_MS)));
      await operator.kill();
      killedDuring.push(`${aim ? `aimed at ${aim}: ` : ''}${await describeKillPoint(readState, listSnapshots)}`);
      await new Promise((r) => setTimeout(r, Math.floor(random() * 200)));
      operator = new OperatorProcess(world.kubeconfigPath, `${name}-op-${k + 1}`);
    }

    // Settle: the user's snapshot final, then a moment with a periodic savepoint recorded (the run
    // exercised an operator-written resource) and nothing intended or owed, judged while
    // the operator is frozen (SIGSTOP), so the state, the resources and the lineage are one instant.
    await until(
      async () => {
        const user = (await listSnapshots()).find((s) => s.metadata.name === userSnapshotName);
        return user?.status?.state === 'COMPLETED' || user?.status?.state === 'FAILED' ? user : undefined;
      },
      45_000,
      `${userSnapshotName} final`,
    );
    const settled = await until(
      async () => {
        operator.pause();
        const cm = await readState();
        const periodicRecorded = decodeStateConfigMap(cm).savepointHistory.some((r) => r.triggerType === 'PERIODIC');
        if (cm.data?.pendingOperation === undefined && periodicRecorded) return cm;
        operator.resume();
        await new Promise((r) => setTimeout(r, 50));
        return undefined;
      },
      30_000,
      `${name}: a periodic savepoint recorded, nothing intended or owed`,
    );
    const state = decodeStateConfigMap(settled);
    const resources = await listSnapshots();
    const lineage = world.world.simulation.lineage(NS, name);

    const violations: string[] = [];
    const history = state.savepointHistory;
    const userSnapshot = resources.find((s) => s.metadata.name === userSnapshotName);
    const operatorResources = resources.filter((s) => s.metadata.name !== userSnapshotName);
    // (1) every recorded savepoint: a completed one of Flink's, exactly one resource at its path.
    for (const record of history) {
      const inLineage = lineage.savepoints.filter((s) => s.location === record.location && s.status === 'COMPLETED');
      if (inLineage.length !== 1) violations.push(`history record ${record.location}: ${inLineage.length} completed lineage savepoint(s) at that path`);
      const withPath = resources.filter((s) => s.status?.path === record.location);
      if (withPath.length !== 1)
        violations.push(
          `history record ${record.location}: ${withPath.length} FlinkStateSnapshot(s) with that path (${withPath.map((s) => s.metadata.name).join(', ')})`,
        );
      if (withPath.length === 1 && withPath[0].metadata.name !== record.snapshotResource)
        violations.push(`history record ${record.location} names resource ${record.snapshotResource}, found ${withPath[0].metadata.name}`);
    }
    const recorded = new Set(history.map((r) => r.location));
    for (const resource of operatorResources) {
      if (!recorded.has(resource.status?.path ?? ''))
        violations.push(`resource ${resource.metadata.name} (${resource.status?.state}, ${resource.status?.path}) matches no history record`);
    }
    const periodicResources = operatorResources.filter((s) => s.metadata.labels?.[SNAPSHOT_TRIGGER_TYPE_LABEL] === 'PERIODIC').length;
    const periodicRecords = history.filter((r) => r.triggerType === 'PERIODIC').length;
    if (periodicResources !== periodicRecords) violations.push(`${periodicResources} PERIODIC resources for ${periodicRecords} PERIODIC history records`);
    // (2) the user's snapshot: COMPLETED at a path, one lineage savepoint for its trigger id.
    const userPath = userSnapshot?.status?.path;
    const userTrigger = userSnapshot?.status?.triggerId;
    if (userSnapshot?.status?.state !== 'COMPLETED' || !userPath)
      violations.push(`user snapshot ${userSnapshot?.status?.state ?? 'missing'}: ${userSnapshot?.status?.error ?? 'no path'}`);
    const userSavepoints = lineage.savepoints.filter((s) => s.triggerId === userTrigger);
    if (userSavepoints.length !== 1 || userSavepoints[0].location !== userPath)
      violations.push(`user snapshot (trigger ${userTrigger}, path ${userPath}): lineage savepoints ${JSON.stringify(userSavepoints)}`);
    if (lineage.savepoints.filter((s) => s.location === userPath).length !== 1)
      violations.push(`user snapshot path ${userPath} not exactly once in the lineage`);
    // Nothing Flink took is unaccounted for: no savepoint lost (completed, never recorded) or taken twice.
    for (const s of lineage.savepoints)
      if (s.triggerId !== userTrigger && !(s.status === 'COMPLETED' && recorded.has(s.location ?? '')))
        violations.push(`lineage savepoint ${s.triggerId} (${s.status}, ${s.location}) is neither recorded nor the user's`);
    // (3) nothing owed (checked by the settle above), (4) no job id twice.
    const submitted = lineage.submissions.filter((s) => s.origin === 'submitted');
    const ids = submitted.map((s) => s.jobId);
    const duplicateJobIds = ids.filter((id, i) => ids.indexOf(id) !== i);
    if (submitted.length !== 1 || submitted[0].jobId !== jobId) violations.push(`expected one submission of ${jobId}, found ${ids.join(', ')}`);

    return {
      scenario: 'snapshot-resources',
      seed,
      kills,
      killedDuring,
      savepointsForUpgrade: userSavepoints.length,
      expectedSavepoints: 1,
      submissions: submitted.length,
      restoredFromUpgradeSavepoint: userSnapshot?.status?.state === 'COMPLETED' && !!userPath,
      duplicateJobIds,
      converged: violations.length === 0,
      violations,
      durationMs: Date.now() - started,
      detail: JSON.stringify({
        history: history.map((r) => `${r.triggerType} ${r.location} -> ${r.snapshotResource}`),
        resources: resources.map((s) => `${s.metadata.name} ${s.status?.state} ${s.status?.path}`),
        savepoints: lineage.savepoints.map((s) => `${s.triggerId} ${s.status} ${s.location}`),
      }),
    };
  } catch (error) {
    throw new Error(
      `snapshot-resources seed ${seed} (killed during: ${killedDuring.join(', ')}): ${(error as Error).message}\noperator output:\n${operator.output.join('').slice(-3000)}`,
    );
  } finally {
    await operator.kill();
    await custom.deleteNamespacedCustomObject({ ...deployments, name }).catch(() => undefined);
  }
}

/** Where the kill landed, from the state ConfigMap and the resources right after it (the process is gone: they stay put). */
async function describeKillPoint(readState: () => Promise<V1ConfigMap>, listSnapshots: () => Promise<FlinkStateSnapshot[]>): Promise<string> {
  const cm = await readState().catch(() => undefined);
  if (!cm) return 'no state';
  const state = decodeStateConfigMap(cm);
  const owed = state.snapshotResourceWrites ?? [];
  if (owed.length > 0) {
    const existing = new Map((await listSnapshots()).map((s) => [s.metadata.name, s.status?.state]));
    const written = (w: (typeof owed)[number]) =>
      w.action === 'delete' ? !existing.has(w.name) : existing.has(w.name) && (w.status === undefined || existing.get(w.name) === w.status.state);
    return owed.map((w) => `${w.triggerType} ${w.action} owed, ${written(w) ? 'already written' : 'not written'}`).join(' + ');
  }
  if (state.pendingSavepoint) return `${state.pendingSavepoint.triggerType} savepoint pending`;
  return `${state.phase}, nothing pending`;
}
