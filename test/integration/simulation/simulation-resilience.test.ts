import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { type Harness, deployment, eventually, freshNamespace, patchDeployment, rolledOut, startHarness } from './simulation-harness.js';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h.sc.stop();
});

test('the simulation keeps converging through dropped watches, 410 relists, failed watches and failed writes', async () => {
  const ns = await freshNamespace(h);
  await h.apps.createNamespacedDeployment({ namespace: ns, body: deployment('tough', { replicas: 2 }) });
  await rolledOut(h, ns, 'tough', 2, 1);
  const faults = h.sc.cluster.faults;

  // every watch dropped; the next ones answered 410 (relist) or 500 (client-node stops the informer: it must be restarted)
  faults.expireNextWatch(2, 'http');
  faults.failNext({ verb: 'watch' }, { code: 500 }, 2);
  faults.closeAllWatches();
  // writes of the simulation fail for a while
  faults.failNext({ verb: 'update', subresource: 'status' }, { code: 500 }, 3);
  faults.failNext({ verb: 'create', resource: 'pods' }, 'reset', 1);
  faults.failNext({ verb: 'patch', resource: 'pods', subresource: 'status' }, { code: 503 }, 2);

  await patchDeployment(h, ns, 'tough', { spec: { replicas: 3 } });
  await rolledOut(h, ns, 'tough', 3, 2);
  await eventually(
    async () => (await h.core.listNamespacedPod({ namespace: ns })).items.filter((p) => p.status?.phase === 'Running').length === 3,
    'three running pods',
  );
  assert.equal((await h.core.listNamespacedPod({ namespace: ns })).items.length, 3, 'no pod created twice');
  assert.ok(h.errors.length > 0, 'the injected failures were seen (and survived)');
  assert.ok(
    h.errors.some((e) => /informer$/.test(e.what)),
    'an informer was stopped by a failed watch and restarted',
  );
});
