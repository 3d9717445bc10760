/**
 * End to end on the development cluster, with the operator: a Flink 1.17 FlinkDeployment
 * (`flinkVersion: v1_17`, image `flink:1.17`) gets its configuration as `flink-conf.yaml`, the
 * only file Flink 1.17 reads, so the simulated 1.17 JobManager runs the job id the operator pinned
 * and restores from the upgrade savepoint — judged by the simulated Flink's lineage.
 *
 * Sources: Flink 1.x GlobalConfiguration.loadConfiguration reads only conf/flink-conf.yaml (a
 * config.yaml is never looked at, and without flink-conf.yaml the JobManager does not start);
 * Flink 1.x GlobalConfiguration.loadYAMLResource (the legacy `key: value` format); the native
 * application entry point reads its restore path only from that configuration
 * (KubernetesApplicationClusterEntrypoint: there are no CLI options in native mode).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { flinkDeployment } from '../../../src/api/flink-deployment-builder.js';
import type { FlinkDeploymentV1 } from '../../../src/api/flink-deployment.js';
import { startHarness, type OperatorHarness } from '../../e2e/operator-harness.js';

let h: OperatorHarness;
before(async () => {
  h = await startHarness({ operator: { reconcileIntervalMs: 500 } });
});
after(async () => {
  await h?.stop();
});

const stable = (generation: number) => (d: FlinkDeploymentV1) =>
  d.status?.lifecycleState === 'STABLE' && d.status?.observedGeneration === generation && d.status?.jobStatus?.state === 'RUNNING';

/** The rendered Flink ConfigMap's files, and the job id pinned in its flink-conf.yaml. */
async function renderedConfig(name: string): Promise<{ files: string[]; pinnedJobId: string | undefined; text: string }> {
  const cm = await h.core.readNamespacedConfigMap({ namespace: 'default', name: `flink-config-${name}` });
  const text = cm.data?.['flink-conf.yaml'] ?? '';
  return { files: Object.keys(cm.data ?? {}).sort(), pinnedJobId: /^\$internal\.pipeline\.job-id: ([0-9a-f]{32})$/m.exec(text)?.[1], text };
}

/** GET through the API server's service proxy to the JobManager's REST API. */
async function flinkGet<T>(name: string, path: string): Promise<T> {
  const res = await fetch(`${h.world.cluster.url}/api/v1/namespaces/default/services/${name}-rest:rest/proxy${path}`);
  assert.equal(res.status, 200, `GET ${path}`);
  return (await res.json()) as T;
}

test('standalone v1_17: the 1.17 JobManager runs the pinned job id from flink-conf.yaml; a savepoint upgrade restores from its savepoint', async () => {
  await h.create(flinkDeployment('legacy').withSpec({ flinkVersion: 'v1_17', image: 'flink:1.17', mode: 'standalone' }).build());
  const first = await h.waitFor('legacy', stable(1), 'legacy STABLE', 30_000);

  const rendered = await renderedConfig('legacy');
  assert.deepEqual(rendered.files, ['flink-conf.yaml', 'log4j-console.properties'], 'only the file Flink 1.17 reads');
  assert.ok(rendered.pinnedJobId, rendered.text);
  assert.match(rendered.text, /^jobmanager\.rpc\.address: legacy\.default$/m);
  assert.equal((await flinkGet<{ 'flink-version': string }>('legacy', '/config'))['flink-version'], '1.17.0', 'a Flink 1.17 JobManager');
  const effective = await flinkGet<Array<{ key: string; value: string }>>('legacy', '/jobmanager/config');
  assert.equal(effective.find((e) => e.key === 'jobmanager.rpc.address')?.value, 'legacy.default', 'the JobManager read the RPC address from flink-conf.yaml');

  const lineage = h.world.simulation.lineage('default', 'legacy');
  assert.equal(lineage.submissions.length, 1);
  assert.equal(lineage.submissions[0].jobId, rendered.pinnedJobId, 'the job runs with the id the operator pinned');
  assert.equal(first.status?.jobStatus?.jobId, rendered.pinnedJobId);

  await h.patch('legacy', { spec: { image: 'flink:1.17.2' } });
  const upgraded = await h.waitFor('legacy', stable(2), 'legacy STABLE on generation 2', 30_000);
  const after = h.world.simulation.lineage('default', 'legacy');
  assert.equal(after.savepoints.length, 1, 'one savepoint for the upgrade');
  const savepoint = after.savepoints[0];
  assert.equal(savepoint.kind, 'stop-with-savepoint');
  assert.equal(savepoint.status, 'COMPLETED');
  assert.equal(savepoint.jobId, rendered.pinnedJobId);
  assert.equal(after.submissions.length, 2, 'no job submitted twice');
  const renderedAfter = await renderedConfig('legacy');
  assert.equal(after.submissions[1].jobId, renderedAfter.pinnedJobId, 'the new job runs with the newly pinned id');
  assert.equal(after.submissions[1].restoredFrom, savepoint.location, 'restored from the upgrade savepoint');
  assert.equal(upgraded.status?.jobStatus?.jobId, renderedAfter.pinnedJobId);
  assert.match(
    renderedAfter.text,
    new RegExp(`^execution\\.savepoint\\.path: ${savepoint.location!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'),
    'the restore path is in flink-conf.yaml too',
  );
});

test('native v1_17: the restore path reaches the 1.17 JobManager only through flink-conf.yaml, and it restores from it', async () => {
  await h.create(flinkDeployment('legacy-native').withSpec({ flinkVersion: 'v1_17', image: 'flink:1.17', mode: 'native' }).build());
  await h.waitFor('legacy-native', stable(1), 'legacy-native STABLE', 30_000);
  const rendered = await renderedConfig('legacy-native');
  assert.deepEqual(rendered.files, ['flink-conf.yaml', 'log4j-console.properties']);
  assert.equal(h.world.simulation.lineage('default', 'legacy-native').submissions[0]?.jobId, rendered.pinnedJobId);

  await h.patch('legacy-native', { spec: { job: { parallelism: 1 } } });
  await h.waitFor('legacy-native', stable(2), 'legacy-native STABLE on generation 2', 30_000);
  const lineage = h.world.simulation.lineage('default', 'legacy-native');
  const savepoint = lineage.savepoints.find((s) => s.status === 'COMPLETED');
  assert.ok(savepoint?.location, JSON.stringify(lineage.savepoints));
  assert.equal(lineage.submissions.length, 2);
  assert.equal(lineage.submissions[1].restoredFrom, savepoint.location, 'restored from the savepoint named in flink-conf.yaml');
  assert.equal(lineage.submissions[1].jobId, (await renderedConfig('legacy-native')).pinnedJobId);
});
