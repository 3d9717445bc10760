/**
 * The crash test of a FlinkSessionJob savepoint upgrade (issue 18, "Done when"): the operator runs
 * as a child process (`flink-operator run`) against the development cluster; during the upgrade of
 * a session job it is SIGKILLed 1–2 times at random (seeded) moments and restarted. Each run must
 * converge to STABLE on the new spec with exactly one savepoint taken of the old job, the new job
 * restored from it, and no job id submitted twice — judged by the session cluster's lineage,
 * filtered to this session job's jobs (its entry class is unique per run).
 *
 * Used by test/e2e/crash-recovery.test.ts (two seeds) and `npm run test:crash -- --scenario
 * session-job-upgrade` (many).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { flinkDeployment } from '../../src/api/flink-deployment-builder.js';
import { flinkSessionJob } from '../../src/api/flink-session-job-builder.js';
import { FLINK_SESSION_JOB_PLURAL, type FlinkSessionJobV1 } from '../../src/api/flink-session-job.js';
import type { FlinkDeploymentV1 } from '../../src/api/flink-deployment.js';
import { seededRandom } from '../../src/devcluster/simulation/simulation-random.js';
import { emptyJar } from '../../src/flink/session-job-artifacts.js';
import { sessionJobStateConfigMapName } from '../../src/state/state-store.js';
import { OperatorProcess, until, type CrashRunResult, type CrashWorld } from './crash-recovery.js';

const GROUP = 'flink.apache.org';
const NS = 'default';
/** The session cluster every run's session job goes to (created by the first run of a world). */
const CLUSTER = 'crash-sessions';
/** Operator flags: the test's jar server is plain http on loopback. */
const JAR_FLAGS = ['--session-job-jar-scheme', 'http', '--session-job-jar-restricted-hosts'];
/** Kill delays are drawn from [0, this) ms after the change: the stop-with-savepoint (150 ms here) and the new submission. */
const KILL_WINDOW_MS = 250;

let jarServer: Promise<{ server: Server; base: string }> | undefined;

/** One jar server per process, serving an empty jar at any path (closed with `closeJarServer`). */
function jarBase(): Promise<string> {
  jarServer ??= new Promise((resolve) => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/java-archive' });
      res.end(Buffer.from(emptyJar()));
    });
    server.listen(0, '127.0.0.1', () => resolve({ server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }));
  });
  return jarServer.then((j) => j.base);
}

export async function closeJarServer(): Promise<void> {
  const current = jarServer;
  jarServer = undefined;
  if (current) await new Promise((resolve) => void current.then((j) => j.server.close(resolve)));
}

export async function sessionJobCrashRun(world: CrashWorld, seed: number): Promise<CrashRunResult> {
  const started = Date.now();
  const random = seededRandom(seed);
  const name = `sj-crash-${seed}`;
  const entryClass = `com.example.crash${seed}.Main`;
  const kc = world.world.cluster.kubeConfig();
  const custom = kc.makeApiClient(CustomObjectsApi);
  const core = kc.makeApiClient(CoreV1Api);
  const params = { group: GROUP, version: 'v1', namespace: NS, plural: FLINK_SESSION_JOB_PLURAL };
  const read = async () => (await custom.getNamespacedCustomObject({ ...params, name })) as FlinkSessionJobV1;
  const stableAt = (generation: number) => async () => {
    const j = await read();
    return j.status?.lifecycleState === 'STABLE' && j.status.observedGeneration === generation && j.status.jobStatus?.state === 'RUNNING' ? j : undefined;
  };

  let operator = new OperatorProcess(world.kubeconfigPath, `${name}-op`, { extraArgs: JAR_FLAGS });
  const killedDuring: string[] = [];
  try {
    const existing = await custom
      .getNamespacedCustomObject({ group: GROUP, version: 'v1', namespace: NS, plural: 'flinkdeployments', name: CLUSTER })
      .catch(() => undefined);
    if (!existing)
      await custom.createNamespacedCustomObject({
        group: GROUP,
        version: 'v1',
        namespace: NS,
        plural: 'flinkdeployments',
        body: flinkDeployment(CLUSTER).withoutJob().build(),
      });
    await until(
      async () => {
        const d = (await custom.getNamespacedCustomObject({
          group: GROUP,
          version: 'v1',
          namespace: NS,
          plural: 'flinkdeployments',
          name: CLUSTER,
        })) as FlinkDeploymentV1;
        return d.status?.lifecycleState === 'STABLE' ? d : undefined;
      },
      30_000,
      'the session cluster STABLE',
    );
    const body = flinkSessionJob(name)
      .onCluster(CLUSTER)
      .withJob({ jarURI: `${await jarBase()}/${name}.jar`, entryClass, parallelism: 1, upgradeMode: 'savepoint' })
      .build();
    await custom.createNamespacedCustomObject({ ...params, body });
    const before = await until(stableAt(1), 30_000, `${name} STABLE before the change`);
    const changedAt = Date.now();
    await custom.patchNamespacedCustomObject(
      { ...params, name, body: { spec: { job: { parallelism: 2 } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const kills = random() < 0.5 ? 1 : 2;
    for (let k = 0; k < kills; k++) {
      await new Promise((r) => setTimeout(r, Math.floor(random() * KILL_WINDOW_MS)));
      await operator.kill();
      const cm = await core.readNamespacedConfigMap({ namespace: NS, name: sessionJobStateConfigMapName(name) }).catch(() => undefined);
      const data = cm?.data ?? {};
      const pending = data.pendingOperation ?? '';
      killedDuring.push(
        pending.includes('pendingSavepoint')
          ? 'savepoint pending'
          : pending.includes('jobIdToSubmit')
            ? `${data.phase} submission pending`
            : `${data.phase ?? 'no state'} (rev ${data.revision})`,
      );
      await new Promise((r) => setTimeout(r, Math.floor(random() * 200)));
      operator = new OperatorProcess(world.kubeconfigPath, `${name}-op-${k + 1}`, { extraArgs: JAR_FLAGS });
    }
    const after = await until(stableAt(2), 45_000, `${name} STABLE on generation 2`);

    const lineage = world.world.simulation.lineage(NS, CLUSTER);
    const submitted = lineage.submissions.filter((s) => s.entryClass === entryClass && s.origin === 'submitted');
    const ours = new Set(submitted.map((s) => s.jobId));
    const newSavepoints = lineage.savepoints.filter((s) => ours.has(s.jobId) && Date.parse(s.triggeredAt) >= changedAt);
    const ids = submitted.map((s) => s.jobId);
    const duplicateJobIds = ids.filter((id, i) => ids.indexOf(id) !== i);
    const completed = newSavepoints.filter((s) => s.status === 'COMPLETED');
    const newest = submitted.at(-1);
    const restored =
      completed.length === 1 &&
      completed[0].jobId === before.status?.jobStatus?.jobId &&
      newest?.restoredFrom === completed[0].location &&
      newest.jobId === after.status?.jobStatus?.jobId;
    return {
      scenario: 'session-job-upgrade',
      seed,
      kills,
      killedDuring,
      savepointsForUpgrade: newSavepoints.length,
      expectedSavepoints: 1,
      submissions: submitted.length,
      restoredFromUpgradeSavepoint: restored,
      duplicateJobIds,
      converged: newSavepoints.length === 1 && submitted.length === 2,
      durationMs: Date.now() - started,
      detail: JSON.stringify({ savepoints: newSavepoints, submissions: submitted }),
    };
  } catch (error) {
    throw new Error(
      `session-job-upgrade seed ${seed} (killed during: ${killedDuring.join(', ')}): ${(error as Error).message}\noperator output:\n${operator.output.join('').slice(-3000)}`,
    );
  } finally {
    await operator.kill();
    await custom.deleteNamespacedCustomObject({ ...params, name }).catch(() => undefined);
  }
}
