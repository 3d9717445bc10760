/**
 * What a deploy and a savepoint upgrade cost the API server (issue 22): per state transition (one
 * revision of the state ConfigMap, design/005) at most 4 Kubernetes API requests of the operator's,
 * exactly one state ConfigMap write, at most one status patch (observation patches included: an
 * observation-only change waits for the next transition's patch, observation-hold.ts), no GET of
 * the state ConfigMap of a new deployment (its create is the check), no pod LIST of a JobManager that
 * becomes available quickly, and no GET of the Flink ConfigMap the operator itself wrote in its term.
 *
 * Judged by the development cluster's request log, with the operator's requests told apart by their
 * own User-Agent (the Flink REST calls through the service proxy carry it too, and are counted apart:
 * in `direct` mode they do not reach the API server).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { kubeConfigWithUserAgent } from '../integration/manifests/user-agent-kube-config.js';
import { flinkDeployment } from '../../src/api/flink-deployment-builder.js';
import type { FlinkDeploymentV1 } from '../../src/api/flink-deployment.js';
import type { RequestLogEntry } from '../../src/devcluster/apiserver/request-log.js';
import { makeFlinkDeploymentReconciler } from '../../src/reconciler/reconciler-wiring.js';
import { createLogger } from '../../src/runtime/logger.js';
import { Manager } from '../../src/runtime/manager.js';
import { startHarness, testOperatorConfig, type OperatorHarness } from './operator-harness.js';

const AGENT = 'flink-operator-test/request-budget';
let h: OperatorHarness;
let manager: Manager;

before(async () => {
  h = await startHarness({ operator: false });
  // a hold longer than any step of these flows takes on a loaded CI machine (the default is 1 s)
  const config = testOperatorConfig({ identity: 'budget-operator', observationHoldMs: 5_000 });
  manager = new Manager({
    config,
    kubeConfig: kubeConfigWithUserAgent(h.kubeConfig, AGENT),
    makeReconciler: makeFlinkDeploymentReconciler,
    serveHttp: false,
    logger: createLogger({ format: 'json', level: config.logLevel as never }),
  });
  await manager.start();
  // the informers' initial LISTs (FlinkDeployments, state ConfigMaps, Deployments, Services) are not part of any flow
  await h.waitUntil(
    () => h.world.cluster.requestLog.entries().filter((e) => e.userAgent === AGENT && e.verb === 'list').length >= 4 || undefined,
    'the informers to list',
  );
});
after(async () => {
  await manager?.stop();
  await h?.stop();
});

const stable = (generation: number) => (d: FlinkDeploymentV1) =>
  d.status?.lifecycleState === 'STABLE' && d.status?.observedGeneration === generation && d.status?.jobStatus?.state === 'RUNNING';

async function stateRevision(name: string): Promise<number> {
  return Number((await h.stateConfigMap(name))?.data?.revision ?? 0);
}

/** The operator's requests since the last reset: Kubernetes API requests (leader election's Lease and watches apart) and Flink REST calls. */
function operatorRequests(): { kube: RequestLogEntry[]; flink: RequestLogEntry[] } {
  const mine = h.world.cluster.requestLog.entries().filter((e) => e.userAgent === AGENT && e.verb !== 'watch' && e.resource !== 'leases');
  return { kube: mine.filter((e) => e.subresource !== 'proxy'), flink: mine.filter((e) => e.subresource === 'proxy') };
}

const count = (entries: readonly RequestLogEntry[], verb: string, resource: string, subresource = '', namePattern?: RegExp) =>
  entries.filter((e) => e.verb === verb && e.resource === resource && e.subresource === subresource && (!namePattern || namePattern.test(e.name))).length;

const describe = (entries: readonly RequestLogEntry[]) =>
  entries.map((e) => `${e.verb} ${e.resource}${e.subresource ? `/${e.subresource}` : ''} ${e.name}`).join('\n');

test('a new deployment to STABLE, then a savepoint upgrade: at most 4 Kubernetes requests and 1 status patch per state transition', async () => {
  h.world.cluster.requestLog.reset();
  await h.create(
    flinkDeployment('budget')
      .withSpec({ job: { upgradeMode: 'savepoint' } })
      .build(),
  );
  await h.waitFor('budget', stable(1), 'budget STABLE');
  const deployTransitions = await stateRevision('budget');
  const deploy = operatorRequests();
  assert.equal(deployTransitions, 3, 'intent, result, running');
  assert.ok(
    deploy.kube.length <= 4 * deployTransitions,
    `deploy: ${deploy.kube.length} requests for ${deployTransitions} transitions:\n${describe(deploy.kube)}`,
  );
  assert.ok(count(deploy.kube, 'patch', 'flinkdeployments', 'status') <= deployTransitions, `status patches:\n${describe(deploy.kube)}`);
  assert.equal(count(deploy.kube, 'get', 'configmaps', '', /-operator-state$/), 0, 'no GET of the state ConfigMap of a new deployment');
  assert.equal(count(deploy.kube, 'list', 'pods'), 0, 'no pod LIST of a JobManager that is available at once');
  // a create names no object in its path: the two are the state ConfigMap and the Flink configuration
  assert.equal(count(deploy.kube, 'create', 'configmaps'), 2, 'the state ConfigMap and the Flink configuration are created');
  assert.equal(count(deploy.kube, 'update', 'configmaps', '', /-operator-state$/), deployTransitions - 1, 'one state write per transition');

  h.world.cluster.requestLog.reset();
  await h.patch('budget', { spec: { job: { parallelism: 3 } } });
  await h.waitFor('budget', stable(2), 'budget STABLE on generation 2', 20_000);
  const upgradeTransitions = (await stateRevision('budget')) - deployTransitions;
  const upgrade = operatorRequests();
  assert.ok(upgradeTransitions >= 4, `a savepoint upgrade takes several steps (${upgradeTransitions})`);
  assert.ok(
    upgrade.kube.length <= 4 * upgradeTransitions,
    `upgrade: ${upgrade.kube.length} requests for ${upgradeTransitions} transitions:\n${describe(upgrade.kube)}`,
  );
  assert.ok(count(upgrade.kube, 'patch', 'flinkdeployments', 'status') <= upgradeTransitions, `status patches:\n${describe(upgrade.kube)}`);
  assert.equal(count(upgrade.kube, 'get', 'configmaps'), 0, 'the Flink ConfigMap this operator wrote is not read again');
  assert.equal(count(upgrade.kube, 'update', 'configmaps', '', /^flink-config-budget$/), 1, 'the new Flink configuration is written');
  assert.ok(
    upgrade.flink.some((e) => e.method === 'POST'),
    'the savepoint was triggered through Flink REST',
  );
});
