/**
 * The JobManager log of a deployed Flink job, read with `kubectl logs deploy/NAME` as a user would:
 * its submission, a checkpoint, and after an upgrade from a stop-with-savepoint, the restore.
 * Wording: apache/flink Dispatcher ("Received JobGraph submission"), CheckpointCoordinator
 * ("Completed checkpoint …", "Starting job … from savepoint …", "Restoring job … from …" with
 * CompletedCheckpoint.toString), JobMaster ("Triggering stop-with-savepoint for job …").
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { KubectlRunner } from '../devcluster/kubectl-runner.js';
import { type Harness, eventually, freshNamespace, patchDeployment, rolledOut, startHarness } from './simulation-harness.js';
import { DEMO_JOB_ID, applyRendered, renderFlinkResources } from './rendered-flink-resources.js';

let h: Harness;
let kubectl: KubectlRunner;
before(async () => {
  h = await startHarness({ checkpointIntervalMs: 40 });
  kubectl = new KubectlRunner(h.sc.cluster.kubeconfigYaml());
});
after(async () => {
  kubectl.cleanup();
  await h.sc.stop();
});

async function viaProxy(ns: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${h.sc.cluster.url}/api/v1/namespaces/${ns}/services/logged-rest:rest/proxy${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

const jmLog = (ns: string) => kubectl.ok(['logs', '-n', ns, 'deploy/logged', '-c', 'flink-main-container']);

test('the JobManager log shows the submission, checkpoints, the stop-with-savepoint and, after the upgrade, the restore', async () => {
  const ns = await freshNamespace(h, 'logs');
  await applyRendered(h, ns, renderFlinkResources('logged'));
  await rolledOut(h, ns, 'logged', 1, 1);
  await eventually(async () => (await jmLog(ns)).includes(`Completed checkpoint 1 for job ${DEMO_JOB_ID}`), 'checkpoint 1 in the log');
  const first = await jmLog(ns);
  assert.match(first, new RegExp(`Received JobGraph submission '[^']*' \\(${DEMO_JOB_ID}\\)\\.`));
  assert.match(first, new RegExp(`switched from state CREATED to RUNNING\\.`));

  const trigger = await viaProxy(ns, `/jobs/${DEMO_JOB_ID}/stop`, { drain: false });
  assert.equal(trigger.status, 202);
  const done = await eventually(async () => {
    const r = await viaProxy(ns, `/jobs/${DEMO_JOB_ID}/savepoints/${trigger.body['request-id']}`);
    return r.body?.status?.id === 'COMPLETED' ? r.body : undefined;
  }, 'stop-with-savepoint completed');
  const location: string = done.operation.location;
  const stopped = await jmLog(ns);
  assert.match(stopped, new RegExp(`Triggering stop-with-savepoint for job ${DEMO_JOB_ID}\\.`));
  assert.match(stopped, new RegExp(`switched from state RUNNING to FINISHED\\.`));

  const jm = await h.apps.readNamespacedDeployment({ namespace: ns, name: 'logged' });
  const args = [...jm.spec!.template.spec!.containers[0].args!, '--fromSavepoint', location];
  await patchDeployment(h, ns, 'logged', { spec: { template: { spec: { containers: [{ name: 'flink-main-container', args }] } } } });
  await rolledOut(h, ns, 'logged', 1, 2);
  const escaped = location.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  await eventually(
    async () => new RegExp(`Restoring job ${DEMO_JOB_ID} from Savepoint \\d+ @ \\d+ for ${DEMO_JOB_ID} located at ${escaped}\\.`).test(await jmLog(ns)),
    'restore line',
  );
  const restored = await jmLog(ns);
  assert.match(restored, new RegExp(`Starting job ${DEMO_JOB_ID} from savepoint ${escaped} `));
  // the new process starts with a fresh log: the old JobManager's lines are not in it
  assert.doesNotMatch(restored, /Triggering stop-with-savepoint/);
});
