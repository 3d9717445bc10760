/**
 * Process-level leadership faults, each reproduced on purpose and judged by the simulated Flink's
 * lineage and by the objects the operator writes:
 *
 * (a) a paused leader: leader A and standby B (short leases); a savepoint upgrade starts; A is
 *     SIGSTOPped right after it triggered the stop-with-savepoint and stays stopped well past its
 *     lease; B takes over and finishes, then carries out two more upgrades; A gets SIGCONT. A must
 *     not act on what it knew before the pause: no job submitted twice, the JobManager Deployment
 *     and `flink-config-<name>` untouched, B's last job still the one running and in the status.
 * (b) two instances without leader election (`--no-leader-elect` where the flag exists, else
 *     without `--leader-elect`): three upgrades, a manual savepoint, a suspend and a resume, each
 *     waited for; exactly the expected submissions (each job id once) and one savepoint per action.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1ConfigMap, V1Deployment } from '@kubernetes/client-node';
import {
  actionDone,
  chaosDeployment,
  checkLineage,
  DeploymentHandle,
  GatedPattern,
  describeLineage,
  describeStatus,
  leaderElectionArgs,
  pollUntil,
  runningJobs,
  sleep,
  startChaosWorld,
  waitUntil,
  withoutLeaderElectionArgs,
  type ActionKind,
  type ChaosWorld,
  type CheckedAction,
} from './chaos.js';
import { SIMULATION_USER_AGENT } from '../../src/devcluster/simulated-cluster.js';
import { OperatorProcess } from './crash-recovery.js';

let world: ChaosWorld;
before(async () => {
  world = await startChaosWorld();
});
after(async () => {
  await world?.stop();
});

/** Resolves once the process logged that it started (informers synced), or after `fallbackMs`. */
async function started(p: OperatorProcess, fallbackMs = 8_000): Promise<void> {
  await pollUntil(() => (p.output.join('').includes('operator started') || !p.alive ? true : undefined), fallbackMs, 50);
}

function spawn(identity: string, args: string[]): OperatorProcess {
  return new OperatorProcess(world.kubeconfigPath, identity, { extraArgs: [...args, '--log-level', 'info', '--retry-max-delay', '1s'], keepChunks: 400 });
}

function summary(o: { metadata?: { resourceVersion?: string; annotations?: Record<string, string> } } | undefined): string {
  if (!o) return 'absent';
  return `resourceVersion ${o.metadata?.resourceVersion}, annotations ${JSON.stringify(o.metadata?.annotations ?? {})}`;
}

function jobManagerImage(d: V1Deployment | undefined): string | undefined {
  return d?.spec?.template.spec?.containers.find((c) => c.name === 'flink-main-container')?.image;
}

function logs(processes: OperatorProcess[]): string {
  return processes.map((p) => p.tail(2_500)).join('\n');
}

/**
 * Where A is frozen: each variant SIGSTOPs A from inside the API server the moment a request of
 * its arrives (a zero-delay rule whose path predicate pauses A), so A is stopped with that request
 * in flight and, on SIGCONT, handles its answer and goes on from there.
 */
interface PauseMoment {
  readonly slug: string;
  readonly title: string;
  readonly request: (name: string) => RegExp;
  /**
   * The API server answers that request only this long after it arrived (after SIGCONT): a slow
   * answer, so what A reads is current while what it is about to do is not.
   */
  readonly answerAfterMs?: number;
  /** The verb of the request whose answer is slow (the first one of it that matches). */
  readonly answerVerb?: string;
}

const PAUSE_MOMENTS: readonly PauseMoment[] = [
  {
    slug: 'stop',
    title: 'its stop-with-savepoint request to Flink',
    request: (name) => new RegExp(`/services/[^/]*${name}-rest[^/]*/proxy/jobs/[0-9a-f]+/stop`),
  },
  {
    // the deploy step of upgrade 1 applies the Flink ConfigMap first: A wrote it in this term (the
    // first deploy), so it replaces it without reading it, locked on that write's resourceVersion
    slug: 'deploy',
    title: 'its deploy step, its locked write of the Flink ConfigMap answered only after it woke up',
    request: (name) => new RegExp(`/configmaps/flink-config-${name}(\\?|$)`),
    answerVerb: 'update',
    answerAfterMs: 9_000,
  },
];

for (const { slug, title, request: pattern, answerAfterMs, answerVerb } of PAUSE_MOMENTS) {
  test(`a leader paused past its lease during ${title} does not act on stale knowledge when it wakes up`, { timeout: 150_000 }, async (t) => {
    const name = `paused-${slug}`;
    const h = new DeploymentHandle(world.kubeConfig, `lf-paused-${slug}`, name);
    const lease = `lf-paused-${slug}-lease`;
    const args = [...leaderElectionArgs(lease), '--namespace', h.namespace];
    const processes: OperatorProcess[] = [];
    const sim = world.world.simulation;
    const faults = world.world.cluster.faults;
    const t0 = Date.now();
    try {
      await h.ensureNamespace();
      const a = spawn(`${name}-a`, args);
      processes.push(a);
      await waitUntil(async () => ((await h.leaseHolder(lease)) === a.identity ? true : undefined), 30_000, 'A to lead');
      const b = spawn(`${name}-b`, args);
      processes.push(b);
      await started(b);

      await h.create(chaosDeployment(name, h.namespace, 'savepoint'));
      await waitUntil(actionDone(world, h, 'resume', 0), 40_000, 'STABLE before the upgrade', async () => describeStatus(await h.read()));
      const actions: CheckedAction[] = [];

      // upgrade 1: A is frozen the moment its request arrives
      let armed = true;
      let pausedAt = 0;
      let pausedRequest = '';
      const target = pattern(name);
      if (answerAfterMs !== undefined) faults.delay({ verb: answerVerb ?? 'get', path: target }, answerAfterMs, 1);
      faults.delay(
        {
          path: new GatedPattern((path) => {
            if (armed && target.test(path)) {
              armed = false;
              a.pause();
              pausedAt = Date.now();
              pausedRequest = path;
            }
            return false;
          }),
        },
        0,
      );
      let startedAt = Date.now();
      await h.patch({ spec: { flinkConfiguration: { 'chaos.revision': '1' } } });
      actions.push({ kind: 'upgrade', startedAt, label: '#1 upgrade (A paused)' });
      await waitUntil(() => (pausedAt > 0 ? true : undefined), 20_000, `A's request (${target})`);
      const holderAtPause = await h.leaseHolder(lease);
      await waitUntil(async () => ((await h.leaseHolder(lease)) === b.identity ? true : undefined), 15_000, 'B to take the lease');
      await waitUntil(actionDone(world, h, 'upgrade', startedAt), 30_000, 'B to finish upgrade 1', async () => describeStatus(await h.read()));

      for (const revision of ['2', '3']) {
        startedAt = Date.now();
        await h.patch({ spec: { flinkConfiguration: { 'chaos.revision': revision } } });
        actions.push({ kind: 'upgrade', startedAt, label: `#${revision} upgrade (by B)` });
        await waitUntil(actionDone(world, h, 'upgrade', startedAt), 30_000, `B to finish upgrade ${revision}`, async () => describeStatus(await h.read()));
      }
      await sleep(Math.max(0, 3_000 - (Date.now() - pausedAt)));

      const jmBefore = await h.jobManagerDeployment();
      const configBefore = await h.flinkConfigMap();
      const dBefore = await h.read();
      const bLastJob = sim.lineage(h.namespace, name).submissions.at(-1)!.jobId;
      const pausedForMs = Date.now() - pausedAt;
      if (answerAfterMs !== undefined && Date.now() - pausedAt > answerAfterMs - 500) {
        assert.fail(`harness: B needed ${Date.now() - pausedAt} ms; A's slow answer (${answerAfterMs} ms) came before SIGCONT`);
      }
      a.resume();
      const resumedAt = Date.now();
      // 3 s after SIGCONT, and after A's slow answer
      await sleep(Math.max(3_000, (answerAfterMs ?? 0) - (resumedAt - pausedAt) + 3_000));

      const jmAfter = await h.jobManagerDeployment();
      const configAfter: V1ConfigMap | undefined = await h.flinkConfigMap();
      const dAfter = await h.read();
      const lineage = sim.lineage(h.namespace, name);
      const live = runningJobs(world.world, h.namespace, name).filter((j) => j.state !== 'FINISHED' && j.state !== 'CANCELED' && j.state !== 'FAILED');

      const problems: string[] = [];
      const violations = checkLineage({ lineage, mode: 'savepoint', actions, t0, finalJobId: dAfter?.status?.jobStatus?.jobId, finalSuspended: false });
      for (const v of violations) problems.push(`[${v.invariant}] ${v.detail}`);
      if (jmAfter?.metadata?.resourceVersion !== jmBefore?.metadata?.resourceVersion) {
        problems.push(
          `the JobManager Deployment was rewritten after SIGCONT: before ${summary(jmBefore)}, image ${jobManagerImage(jmBefore)}; after ${summary(jmAfter)}, image ${jobManagerImage(jmAfter)}`,
        );
      }
      const revision = (cm: V1ConfigMap | undefined) => /chaos\.revision:\s*"?([^"\n]*)/.exec(cm?.data?.['config.yaml'] ?? '')?.[1];
      if (
        configAfter?.metadata?.resourceVersion !== configBefore?.metadata?.resourceVersion ||
        JSON.stringify(configAfter?.data) !== JSON.stringify(configBefore?.data)
      ) {
        problems.push(
          `flink-config-${name} was rewritten after SIGCONT: before ${summary(configBefore)} (chaos.revision ${revision(configBefore)}); after ${summary(configAfter)} (chaos.revision ${revision(configAfter)})`,
        );
      }
      const newSubmissions = lineage.submissions.filter((s) => Date.parse(s.at) >= resumedAt);
      if (newSubmissions.length > 0)
        problems.push(`submissions after SIGCONT: ${newSubmissions.map((s) => `${s.jobId} (${s.origin}) from ${s.restoredFrom} on ${s.podName}`).join('; ')}`);
      const newSavepoints = lineage.savepoints.filter((p) => Date.parse(p.triggeredAt) >= resumedAt);
      if (newSavepoints.length > 0) problems.push(`savepoints after SIGCONT: ${newSavepoints.map((p) => `${p.kind} of ${p.jobId} ${p.status}`).join('; ')}`);
      if (live.length !== 1 || live[0].jobId !== bLastJob || live[0].state !== 'RUNNING') {
        problems.push(
          `B's last job ${bLastJob} should be the only one running; Flink runs [${live.map((j) => `${j.jobId} ${j.state} on ${j.pod}`).join(', ')}]`,
        );
      }
      if (
        dAfter?.status?.jobStatus?.jobId !== bLastJob ||
        dAfter?.status?.lifecycleState !== 'STABLE' ||
        dAfter?.status?.observedGeneration !== dAfter?.metadata.generation
      ) {
        problems.push(`status after SIGCONT: ${describeStatus(dAfter)} (before: ${describeStatus(dBefore)}); expected STABLE with job ${bLastJob}`);
      }
      const requests = world.world.cluster.requestLog
        .entries({ namespace: h.namespace, excludeUserAgentPrefix: SIMULATION_USER_AGENT })
        .filter((e) => e.time >= pausedAt - 500 && e.verb !== 'watch' && e.verb !== 'list' && !(e.resource === 'flinkdeployments' && e.verb === 'get'))
        .map(
          (e) =>
            `+${((e.time - t0) / 1000).toFixed(2)}s ${e.verb} ${e.resource}${e.subresource ? `/${e.subresource}` : ''} ${e.name} ${e.code}${e.subresource === 'proxy' ? ` ${e.path.replace(/^.*\/proxy/, '')}` : ''}`,
        );
      const story = [
        `A (${holderAtPause === a.identity ? 'the leader' : `NOT the leader: the Lease said ${holderAtPause}`}) SIGSTOPped at +${((pausedAt - t0) / 1000).toFixed(1)}s on ${pausedRequest}, for ${pausedForMs} ms; SIGCONT at +${((resumedAt - t0) / 1000).toFixed(1)}s`,
        `lineage: ${describeLineage(lineage, t0)}`,
      ];
      t.diagnostic(story.join('\n'));
      if (process.env.LEADERSHIP_LOGS) t.diagnostic(`requests from the pause on:\n${requests.join('\n')}\noperator output:\n${logs(processes)}`);
      if (problems.length > 0)
        assert.fail([...story, ...problems, `requests from the pause on:\n${requests.join('\n')}`, `operator output:\n${logs(processes)}`].join('\n'));
    } finally {
      faults.clear();
      for (const p of processes) p.resume();
      await h.cleanUp().catch(() => undefined);
      await Promise.all(processes.map((p) => p.kill()));
    }
  });
}

test('two instances without leader election submit each job once and take one savepoint per action', { timeout: 180_000 }, async (t) => {
  const name = 'no-election';
  const h = new DeploymentHandle(world.kubeConfig, 'lf-two', name);
  const args = [...withoutLeaderElectionArgs(world, 'lf-two-lease'), '--namespace', h.namespace];
  const processes: OperatorProcess[] = [];
  const sim = world.world.simulation;
  const t0 = Date.now();
  const notes: string[] = [];
  try {
    await h.ensureNamespace();
    processes.push(spawn('two-1', args), spawn('two-2', args));
    await Promise.all(processes.map((p) => started(p)));

    await h.create(chaosDeployment(name, h.namespace, 'savepoint'));
    await waitUntil(actionDone(world, h, 'resume', 0), 40_000, 'STABLE before the actions', async () => describeStatus(await h.read()));

    const plan: Array<{ kind: ActionKind; change: Record<string, unknown>; label: string }> = [
      { kind: 'upgrade', change: { spec: { flinkConfiguration: { 'chaos.revision': '1' } } }, label: '#1 upgrade (chaos.revision 1)' },
      { kind: 'upgrade', change: { spec: { job: { parallelism: 3 } } }, label: '#2 upgrade (parallelism 3)' },
      { kind: 'upgrade', change: { spec: { image: 'flink:1.20.1' } }, label: '#3 upgrade (image)' },
      { kind: 'manual-savepoint', change: { spec: { job: { savepointTriggerNonce: 1 } } }, label: '#4 manual savepoint' },
      { kind: 'suspend', change: { spec: { job: { state: 'suspended' } } }, label: '#5 suspend' },
      { kind: 'resume', change: { spec: { job: { state: 'running' } } }, label: '#6 resume' },
    ];
    const actions: CheckedAction[] = [];
    for (const step of plan) {
      const startedAt = Date.now();
      await h.patch(step.change);
      actions.push({ kind: step.kind, startedAt, label: step.label });
      const done = await pollUntil(actionDone(world, h, step.kind, startedAt), 25_000);
      if (!done) {
        notes.push(`${step.label} not done within 25 s: ${describeStatus(await h.read().catch(() => undefined))}`);
        break;
      }
      await sleep(300); // let a second instance's late reaction show up in this action's window
    }

    const lineage = sim.lineage(h.namespace, name);
    const d = await h.read();
    const problems = [...notes];
    const violations = checkLineage({ lineage, mode: 'savepoint', actions, t0, finalJobId: d?.status?.jobStatus?.jobId, finalSuspended: false });
    for (const v of violations) problems.push(`[${v.invariant}] ${v.detail}`);
    const ids = lineage.submissions.map((s) => s.jobId);
    const distinct = new Set(ids).size;
    const expectedSubmissions = 1 + 3 + 1; // first deployment, three upgrades, the resume
    if (ids.length !== expectedSubmissions || distinct !== expectedSubmissions) {
      problems.push(`${ids.length} submissions of ${distinct} distinct job ids, expected ${expectedSubmissions} of ${expectedSubmissions}`);
    }
    const completed = lineage.savepoints.filter((p) => p.status === 'COMPLETED');
    const stops = completed.filter((p) => p.kind === 'stop-with-savepoint').length;
    const manual = completed.filter((p) => p.kind === 'savepoint').length;
    if (stops !== 4 || manual !== 1)
      problems.push(`${stops} completed stop-with-savepoints (expected 4: three upgrades and the suspend) and ${manual} savepoints (expected 1: the nonce)`);
    const story = [
      `two instances ${world.noLeaderElectFlag ? 'with --no-leader-elect' : 'without --leader-elect (no --no-leader-elect flag)'}`,
      `lineage: ${describeLineage(lineage, t0)}`,
      `final: ${describeStatus(d)}`,
    ];
    t.diagnostic(story.join('\n'));
    if (problems.length > 0) assert.fail([...story, ...problems, `operator output:\n${logs(processes)}`].join('\n'));
  } finally {
    await h.cleanUp().catch(() => undefined);
    await Promise.all(processes.map((p) => p.kill()));
  }
});
