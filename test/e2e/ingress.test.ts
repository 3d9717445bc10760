/**
 * End-to-end: the Flink UI behind an Ingress (spec.ingress) on the development cluster, seen as a
 * user sees it, with the real kubectl. The Ingress is created with the deployment, follows an
 * ingress-only change without a redeploy (the simulated Flink's lineage shows one submission, the
 * JobManager pod is the same), and is deleted when spec.ingress is removed.
 * `kubernetes.operator.ingress.manage: false` leaves Ingresses alone, with Apache's Warning event;
 * `kubernetes.rest-service.exposed.type` sets the REST Service's type.
 *
 * Expected rendering: the Apache operator's IngressUtils and docs/content/docs/operations/ingress.md
 * (path-based: no host, `kubectl get ing` shows HOSTS *; host-based: the resolved host).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Ingress, V1Pod } from '@kubernetes/client-node';
import { flinkDeployment } from '../../src/api/flink-deployment-builder.js';
import type { FlinkDeploymentV1 } from '../../src/api/flink-deployment.js';
import { KubectlRunner } from '../integration/devcluster/kubectl-runner.js';
import { startHarness, type OperatorHarness } from './operator-harness.js';

let h: OperatorHarness;
let kubectl: KubectlRunner;
before(async () => {
  h = await startHarness();
  kubectl = new KubectlRunner(h.world.cluster.kubeconfigYaml());
});
after(async () => {
  kubectl?.cleanup();
  await h?.stop();
});

const stable = (generation: number) => (d: FlinkDeploymentV1) =>
  d.status?.lifecycleState === 'STABLE' && d.status?.observedGeneration === generation && d.status?.jobStatus?.state === 'RUNNING';

/** `kubectl get ingress <name> -o json`, or undefined when kubectl says NotFound. */
async function ingress(name: string): Promise<V1Ingress | undefined> {
  const r = await kubectl.run(['get', 'ingress', name, '-o', 'json']);
  if (r.code !== 0) {
    assert.match(r.stderr, /NotFound|not found/, r.stderr);
    return undefined;
  }
  return JSON.parse(r.stdout) as V1Ingress;
}

async function jobManagerPods(name: string): Promise<V1Pod[]> {
  const pods = await h.core.listNamespacedPod({ namespace: 'default', labelSelector: `app=${name},component=jobmanager` });
  return pods.items.filter((p) => !p.metadata?.deletionTimestamp);
}

test('spec.ingress: created with the deployment, updated by an ingress-only change without a redeploy, deleted when removed', async () => {
  await h.create(
    flinkDeployment('ui')
      .withSpec({
        job: { upgradeMode: 'savepoint' },
        ingress: {
          template: '/{{namespace}}/{{name}}(/|$)(.*)',
          className: 'nginx',
          annotations: { 'nginx.ingress.kubernetes.io/rewrite-target': '/$2' },
        },
      })
      .build(),
  );
  const deployed = await h.waitFor('ui', stable(1), 'ui STABLE');

  const table = await kubectl.ok(['get', 'ing', 'ui']);
  assert.match(table, /^NAME\s+CLASS\s+HOSTS\s+ADDRESS\s+PORTS\s+AGE\n/);
  assert.match(table, /\nui\s+nginx\s+\*\s+80\s+\d+s\n/, 'path-based: any host');
  const first = await ingress('ui');
  assert.ok(first);
  assert.deepEqual(first.spec?.rules, [
    {
      http: {
        paths: [{ path: '/default/ui(/|$)(.*)', pathType: 'ImplementationSpecific', backend: { service: { name: 'ui-rest', port: { number: 8081 } } } }],
      },
    },
  ]);
  assert.equal(first.metadata?.annotations?.['nginx.ingress.kubernetes.io/rewrite-target'], '/$2');
  assert.equal(first.metadata?.labels?.component, 'ingress');
  assert.equal(first.metadata?.ownerReferences?.[0]?.uid, deployed.metadata.uid, 'owned by the FlinkDeployment');

  const lineageBefore = h.world.simulation.lineage('default', 'ui');
  assert.equal(lineageBefore.submissions.length, 1);
  const podsBefore = (await jobManagerPods('ui')).map((p) => p.metadata?.uid).sort();
  assert.equal(podsBefore.length, 1);
  const jobManagerBefore = await h.apps.readNamespacedDeployment({ namespace: 'default', name: 'ui' });

  // An ingress-only change: host-based routing, another class.
  await h.patch('ui', {
    spec: { ingress: { template: '{{name}}.{{namespace}}.flink.k8s.io', className: 'traefik', annotations: null } },
  });
  const updated = await h.waitUntil(async () => {
    const i = await ingress('ui');
    return i?.spec?.rules?.[0]?.host === 'ui.default.flink.k8s.io' ? i : undefined;
  }, 'the Ingress to route by host');
  assert.equal(updated.spec?.ingressClassName, 'traefik');
  assert.deepEqual(updated.spec?.rules?.[0]?.http?.paths, [
    { pathType: 'ImplementationSpecific', backend: { service: { name: 'ui-rest', port: { number: 8081 } } } },
  ]);
  assert.equal(updated.metadata?.annotations?.['nginx.ingress.kubernetes.io/rewrite-target'], undefined);
  assert.match(await kubectl.ok(['get', 'ingress', 'ui']), /\nui\s+traefik\s+ui\.default\.flink\.k8s\.io\s+80\s+\d+s\n/);
  await h.waitFor('ui', stable(2), 'ui STABLE on generation 2');

  // ... and the job was not touched: no new submission, no savepoint, the same JobManager pod and Deployment.
  const lineageAfter = h.world.simulation.lineage('default', 'ui');
  assert.equal(lineageAfter.submissions.length, 1, 'no new job submission');
  assert.equal(lineageAfter.savepoints.length, lineageBefore.savepoints.length, 'no savepoint (no upgrade)');
  assert.equal(lineageAfter.cancellations.length, 0);
  assert.deepEqual((await jobManagerPods('ui')).map((p) => p.metadata?.uid).sort(), podsBefore, 'the JobManager pod was not restarted');
  const jobManagerAfter = await h.apps.readNamespacedDeployment({ namespace: 'default', name: 'ui' });
  assert.equal(jobManagerAfter.metadata?.resourceVersion, jobManagerBefore.metadata?.resourceVersion, 'the JobManager Deployment was not written');

  // Removing spec.ingress deletes the Ingress, still without touching the job.
  await h.patch('ui', { spec: { ingress: null } });
  await h.waitUntil(async () => ((await ingress('ui')) === undefined ? true : undefined), 'the Ingress to be deleted');
  await h.waitFor('ui', stable(3), 'ui STABLE on generation 3');
  assert.equal(h.world.simulation.lineage('default', 'ui').submissions.length, 1);
  assert.deepEqual((await jobManagerPods('ui')).map((p) => p.metadata?.uid).sort(), podsBefore);
});

test('kubernetes.operator.ingress.manage: false creates no Ingress and warns; kubernetes.rest-service.exposed.type sets the REST Service type', async () => {
  await h.create(
    flinkDeployment('unmanaged')
      .withSpec({
        flinkConfiguration: { 'kubernetes.operator.ingress.manage': 'false', 'kubernetes.rest-service.exposed.type': 'NodePort' },
        ingress: { template: '{{name}}.example.com' },
      })
      .build(),
  );
  await h.waitFor('unmanaged', stable(1), 'unmanaged STABLE');
  assert.equal(await ingress('unmanaged'), undefined, 'no Ingress');
  const warning = await h.waitUntil(async () => (await h.events('unmanaged')).find((e) => e.reason === 'IngressManagement'), 'the IngressManagement warning');
  assert.equal(warning.type, 'Warning');
  assert.match(warning.message ?? '', /^Ingress management is turned off but ingress set in spec/);
  assert.match(await kubectl.ok(['get', 'service', 'unmanaged-rest']), /\nunmanaged-rest\s+NodePort\s+/);
});

test('deleting the FlinkDeployment garbage-collects its Ingress (owner reference)', async () => {
  await h.create(
    flinkDeployment('owned')
      .withSpec({ ingress: { template: '{{name}}.{{namespace}}.flink.k8s.io' } })
      .build(),
  );
  await h.waitFor('owned', stable(1), 'owned STABLE');
  assert.equal((await ingress('owned'))?.spec?.rules?.[0]?.host, 'owned.default.flink.k8s.io');
  await h.delete('owned');
  await h.waitUntil(async () => ((await h.get('owned')) === undefined ? true : undefined), 'owned deleted');
  await h.waitUntil(async () => ((await ingress('owned')) === undefined ? true : undefined), 'its Ingress to be garbage-collected');
});
