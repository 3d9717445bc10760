/**
 * Shards (design/012-shards.md, issue 20): two operator installs on one development cluster, each
 * owning the FlinkDeployments its label selector matches (`flink-operator.io/shard=a` / `=b`), each
 * electing its leader on its own Lease. Judged by the API server's request log (every request of
 * each install carries its own User-Agent, Flink REST calls through the service proxy included),
 * by the stamps on the objects, and by the simulated Flink's lineage, never by logs.
 *
 * The watch semantics this relies on: a label-filtered watch turns a relabel into DELETED for the
 * selector the object leaves and ADDED for the one it enters (kube-apiserver's cacher,
 * k8s.io/apiserver/pkg/storage/cacher/cache_watcher.go `convertToWatchEvent`;
 * test/devcluster/selector-watch-transitions.test.ts checks the development cluster does the same).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { kubeConfigWithUserAgent } from '../integration/manifests/user-agent-kube-config.js';
import { flinkDeployment } from '../../src/api/flink-deployment-builder.js';
import type { FlinkDeploymentV1 } from '../../src/api/flink-deployment.js';
import type { RequestLogEntry } from '../../src/devcluster/apiserver/request-log.js';
import { makeFlinkDeploymentReconciler } from '../../src/reconciler/reconciler-wiring.js';
import { LEADER_ANNOTATION, parseFencingToken } from '../../src/runtime/fencing-token.js';
import { createLogger } from '../../src/runtime/logger.js';
import { Manager } from '../../src/runtime/manager.js';
import { SHARD_HANDOVER_REASON } from '../../src/runtime/shard-handover.js';
import { startHarness, testOperatorConfig, type OperatorHarness } from './operator-harness.js';

const SHARD_LABEL = 'flink-operator.io/shard';
const SHARD_A = 'default/flink-operator-shard-a';
const SHARD_B = 'default/flink-operator-shard-b';
const AGENT = { a: 'flink-operator-test/shard-a', b: 'flink-operator-test/shard-b' } as const;

let h: OperatorHarness;
const managers: Manager[] = [];

async function startShard(shard: 'a' | 'b'): Promise<Manager> {
  const kubeConfig = kubeConfigWithUserAgent(h.kubeConfig, AGENT[shard]);
  const config = testOperatorConfig({
    identity: `operator-${shard}`,
    leaseName: `flink-operator-shard-${shard}`,
    leaseNamespace: 'default',
    labelSelector: `${SHARD_LABEL}=${shard}`,
    // short leases: the hand-over grace is lease duration + retry period = 1.7 s
    leaseDurationMs: 1_500,
    renewDeadlineMs: 1_000,
    retryPeriodMs: 200,
  });
  const manager = new Manager({
    config,
    kubeConfig,
    makeReconciler: makeFlinkDeploymentReconciler,
    serveHttp: false,
    logger: createLogger({ format: 'json', level: config.logLevel as never }),
  });
  await manager.start();
  managers.push(manager);
  return manager;
}

before(async () => {
  h = await startHarness({ operator: false, simulation: { savepointDurationMs: 2_500 } });
  await startShard('a');
  await startShard('b');
});
after(async () => {
  await Promise.all(managers.map((m) => m.stop()));
  await h?.stop();
});

const stable = (generation: number) => (d: FlinkDeploymentV1) =>
  d.status?.lifecycleState === 'STABLE' && d.status?.observedGeneration === generation && d.status?.jobStatus?.state === 'RUNNING';

/** The FlinkDeployment an object name belongs to: `<name>`, `<name>-…` (state, services, TaskManagers, `-rest:rest` proxy), `flink-config-<name>`. */
function deploymentOf(objectName: string, deployments: readonly string[]): string | undefined {
  return deployments.find((d) => objectName === d || objectName.startsWith(`${d}-`) || objectName === `flink-config-${d}`);
}

const WRITES = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

/**
 * Requests of an install that touch a deployment: named writes (status patches included) and Flink
 * REST calls through the service proxy: every one (`any`), or only those that change something (`acts`: not GET).
 */
function touches(
  entries: readonly RequestLogEntry[],
  agent: string,
  deployments: readonly string[],
  mode: 'any' | 'acts' = 'any',
): Map<string, RequestLogEntry[]> {
  const out = new Map<string, RequestLogEntry[]>();
  for (const e of entries) {
    if (e.userAgent !== agent || !e.name) continue;
    const acts = (e.subresource === 'proxy' && (mode === 'any' || e.method !== 'GET')) || WRITES.has(e.verb);
    const owner = acts ? deploymentOf(e.name, deployments) : undefined;
    if (owner) out.set(owner, [...(out.get(owner) ?? []), e]);
  }
  return out;
}

/** The shard named by the stamp (LEADER_ANNOTATION) of every object the operator wrote for `name`. */
async function stampedShards(name: string): Promise<Map<string, string | undefined>> {
  const out = new Map<string, string | undefined>();
  const note = (kind: string, object: { metadata?: { name?: string; annotations?: Record<string, string> } }) => {
    const stamp = object.metadata?.annotations?.[LEADER_ANNOTATION];
    if (stamp) out.set(`${kind}/${object.metadata?.name}`, parseFencingToken(stamp)?.shard);
  };
  for (const d of (await h.apps.listNamespacedDeployment({ namespace: 'default' })).items)
    if (deploymentOf(d.metadata?.name ?? '', [name])) note('Deployment', d);
  for (const c of (await h.core.listNamespacedConfigMap({ namespace: 'default' })).items)
    if (deploymentOf(c.metadata?.name ?? '', [name])) note('ConfigMap', c);
  return out;
}

test('two installs with disjoint selectors split the deployments: none is touched by both', async () => {
  const names = { a: ['a1', 'a2'], b: ['b1', 'b2'] };
  for (const shard of ['a', 'b'] as const) {
    for (const name of names[shard]) {
      await h.create(
        flinkDeployment(name)
          .withLabels({ [SHARD_LABEL]: shard })
          .withSpec({ job: { upgradeMode: 'savepoint' } })
          .build(),
      );
    }
  }
  const all = [...names.a, ...names.b];
  for (const name of all) await h.waitFor(name, stable(1), `${name} to be STABLE`, 30_000);
  // a spec change on each, so each install also upgrades (stop-with-savepoint, Flink REST) what it owns
  for (const name of all) await h.patch(name, { spec: { job: { parallelism: 3 } } });
  for (const name of all) await h.waitFor(name, stable(2), `${name} to be STABLE on generation 2`, 30_000);

  const log = h.world.cluster.requestLog.entries();
  for (const shard of ['a', 'b'] as const) {
    const touched = touches(log, AGENT[shard], all);
    assert.deepEqual([...touched.keys()].sort(), names[shard], `install ${shard} acted on exactly its own deployments`);
    for (const name of names[shard]) {
      const verbs = new Set(touched.get(name)!.map((e) => `${e.verb} ${e.resource}${e.subresource ? `/${e.subresource}` : ''}`));
      assert.ok(verbs.has('patch flinkdeployments/status'), `${shard} wrote ${name}'s status`);
      assert.ok(
        [...verbs].some((v) => v.endsWith('services/proxy')),
        `${shard} talked to ${name}'s Flink`,
      );
    }
  }
  // what was created (creates carry no name in the log) carries its creator's shard
  for (const shard of ['a', 'b'] as const) {
    for (const name of names[shard]) {
      const stamps = await stampedShards(name);
      assert.ok(stamps.has(`ConfigMap/${name}-operator-state`) && stamps.has(`Deployment/${name}`), `${name}: ${[...stamps.keys()].join(', ')}`);
      for (const [object, owner] of stamps) assert.equal(owner, shard === 'a' ? SHARD_A : SHARD_B, `${object} stamped by its own shard`);
    }
  }
  for (const name of all) {
    const lineage = h.world.simulation.lineage('default', name);
    assert.equal(lineage.savepoints.length, 1, `${name}: one savepoint for its upgrade`);
    assert.equal(lineage.submissions.length, 2, `${name}: two submissions (create, upgrade)`);
  }
});

test('a deployment relabelled from a to b in the middle of a savepoint upgrade moves once: one savepoint, one submission, RUNNING under b', async () => {
  await h.create(
    flinkDeployment('mv')
      .withLabels({ [SHARD_LABEL]: 'a' })
      .withSpec({ job: { upgradeMode: 'savepoint' } })
      .build(),
  );
  const first = await h.waitFor('mv', stable(1), 'mv to be STABLE under a', 30_000);
  const firstJob = first.status?.jobStatus?.jobId;
  await h.patch('mv', { spec: { image: 'flink:1.20.1' } });
  // shard a has triggered the stop-with-savepoint; it takes 2.5 s in the simulated Flink
  await h.waitUntil(
    () => h.world.simulation.lineage('default', 'mv').savepoints.find((s) => s.status === 'IN_PROGRESS'),
    'the upgrade savepoint to be in progress',
    15_000,
  );
  const relabelledAt = Date.now();
  await h.patch('mv', { metadata: { labels: { [SHARD_LABEL]: 'b' } } });

  const done = await h.waitFor('mv', stable(2), 'mv to be STABLE on generation 2 under b', 30_000);
  await new Promise((r) => setTimeout(r, 1_000)); // give a stale writer time to show itself

  // Flink: exactly one savepoint (the upgrade's) and one new submission, restored from it
  const lineage = h.world.simulation.lineage('default', 'mv');
  assert.equal(lineage.savepoints.length, 1, JSON.stringify(lineage.savepoints));
  assert.equal(lineage.savepoints[0].kind, 'stop-with-savepoint');
  assert.equal(lineage.savepoints[0].jobId, firstJob);
  assert.equal(lineage.submissions.length, 2, JSON.stringify(lineage.submissions));
  assert.equal(lineage.submissions[1].restoredFrom, lineage.savepoints[0].location);
  assert.equal(done.status?.jobStatus?.jobId, lineage.submissions[1].jobId);
  assert.equal(done.status?.jobStatus?.state, 'RUNNING');

  // the state and every object written since are b's, at hand-over epoch 1
  const cm = await h.stateConfigMap('mv');
  const stamp = parseFencingToken(cm?.metadata?.annotations?.[LEADER_ANNOTATION]);
  assert.equal(stamp?.shard, SHARD_B);
  assert.equal(stamp?.epoch, 1);
  for (const [object, owner] of await stampedShards('mv')) assert.equal(owner, SHARD_B, `${object} now stamped by b`);

  // the request log: b changed nothing for mv before its takeover (the first PUT of mv's state by b;
  // it may read Flink while it waits), a wrote nothing and called mv's Flink never after it
  const log = h.world.cluster.requestLog.entries();
  const byB = touches(log, AGENT.b, ['mv'], 'acts').get('mv') ?? [];
  const takeover = byB.find((e) => e.verb === 'update' && e.resource === 'configmaps' && e.name === 'mv-operator-state');
  assert.ok(takeover, 'b took over with a write of the state ConfigMap');
  assert.ok(takeover.time >= relabelledAt + 1_700, `the takeover waited the hand-over grace (${takeover.time - relabelledAt} ms)`);
  assert.deepEqual(
    byB.filter((e) => e.time < takeover.time),
    [],
    'b did nothing to mv before taking it over',
  );
  const byA = touches(log, AGENT.a, ['mv']).get('mv') ?? [];
  assert.deepEqual(
    byA.filter((e) => e.time >= takeover.time).map((e) => `${e.verb} ${e.resource}/${e.name}`),
    [],
    'a acted on mv no more after the takeover',
  );
  assert.ok(byA.length > 0, 'a did act on mv before');

  const handovers = (await h.events('mv')).filter((e) => e.reason === SHARD_HANDOVER_REASON);
  assert.equal(handovers.length, 1, 'one ShardHandover event');
  assert.equal(handovers[0].type, 'Normal');
  assert.match(handovers[0].message ?? '', /flink-operator-shard-b.*took this resource over from shard default\/flink-operator-shard-a/);
});
