/**
 * What kubectl users of the Apache operator are used to, with the real kubectl on the development
 * cluster: `kubectl get flinkdeployments -o wide` columns, and the operator's Events listed by
 * `kubectl get events --sort-by=.lastTimestamp` (the recorder writes lastTimestamp/firstTimestamp).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { CoreV1Api, type CoreV1Event } from '@kubernetes/client-node';
import { KubernetesEventRecorder } from '../../../src/runtime/event-recorder.js';
import { KubectlRunner } from '../../integration/devcluster/kubectl-runner.js';
import { startLegacyCluster, type LegacyCluster } from '../../migration/legacy-cluster.js';
import { captureVariants } from '../../migration/legacy-variants.js';

let lc: LegacyCluster;
let kubectl: KubectlRunner;
before(async () => {
  lc = await startLegacyCluster();
  kubectl = new KubectlRunner(lc.cluster.kubeconfigYaml());
  const green = captureVariants().find((v) => v.label.includes('green'))!;
  await lc.createLegacy({ ...green.object, metadata: { ...green.object.metadata, name: 'green' } }, green.status);
});
after(async () => {
  kubectl?.cleanup();
  await lc?.stop();
});

test('kubectl get flinkdeployments: the Apache columns; -o wide adds mode, Flink version, upgrade mode, job id, error', async () => {
  const narrow = await kubectl.ok(['get', 'flinkdeployments']);
  assert.match(narrow.split('\n')[0], /^NAME +JOB STATUS +LIFECYCLE STATE +AGE$/);
  assert.match(narrow, /^green +RUNNING +STABLE +\S+$/m);
  const wide = await kubectl.ok(['get', 'flinkdeployments', '-o', 'wide']);
  assert.match(wide.split('\n')[0], /^NAME +JOB STATUS +LIFECYCLE STATE +AGE +MODE +FLINK VERSION +UPGRADE MODE +JOB ID +ERROR$/);
  const green = (await lc.getV1beta1('green')) as {
    spec: { flinkVersion?: string; job?: { upgradeMode?: string } };
    status?: { jobStatus?: { jobId?: string } };
  };
  const row = wide.split('\n').find((l) => l.startsWith('green '))!;
  assert.ok(row.includes(green.spec.flinkVersion!), row);
  assert.ok(row.includes(green.spec.job!.upgradeMode!), row);
  assert.ok(row.includes(green.status!.jobStatus!.jobId!), row);
});

async function recordEvents(): Promise<CoreV1Event[]> {
  let now = Date.parse('2026-01-01T00:00:00Z');
  const recorder = new KubernetesEventRecorder({ api: lc.kubeConfig.makeApiClient(CoreV1Api), instance: 'op-0', now: () => (now += 60_000) });
  const subject = { apiVersion: 'flink.apache.org/v1', kind: 'FlinkDeployment', metadata: { name: 'green', namespace: 'default', uid: 'u-green' } };
  recorder.normal(subject, 'Submit', 'Deploying job first');
  recorder.warning(subject, 'SavepointError', 'savepoint failed');
  recorder.normal(subject, 'Submit', 'Deploying job first'); // aggregated: lastTimestamp moves to the newest
  await recorder.flush();
  return (await lc.kubeConfig.makeApiClient(CoreV1Api).listNamespacedEvent({ namespace: 'default' })).items;
}

test('the operator events carry firstTimestamp and lastTimestamp (what --sort-by=.lastTimestamp sorts on)', async () => {
  const events = await recordEvents();
  const ours = events.filter((e) => e.source?.component === 'flink-operator');
  assert.equal(ours.length, 2);
  for (const e of ours) {
    assert.ok(e.firstTimestamp instanceof Date && e.lastTimestamp instanceof Date, `${e.reason}: both timestamps set`);
  }
  const sorted = [...ours].sort((a, b) => a.lastTimestamp!.getTime() - b.lastTimestamp!.getTime()).map((e) => e.reason);
  assert.deepEqual(sorted, ['SavepointError', 'Submit'], 'the aggregated Submit was seen last');
});

test(
  // kubectl sorts the rows of the Table it asks for with includeObject=Object (kube-apiserver's TableOptions), so the
  // rows must carry the whole objects, not only their metadata.
  'kubectl get events --sort-by=.lastTimestamp lists the operator events, oldest first',
  async () => {
    const out = await kubectl.ok(['get', 'events', '--sort-by=.lastTimestamp']);
    const reasons = out
      .split('\n')
      .slice(1)
      .filter(Boolean)
      .map((l) => l.split(/ +/)[2]);
    assert.deepEqual(reasons.slice(-2), ['SavepointError', 'Submit']);
  },
);
