import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startDevCluster } from '../../../src/devcluster/dev-cluster.js';
import { Manager } from '../../../src/runtime/manager.js';
import { resolveOperatorConfig } from '../../../src/runtime/operator-config.js';
import { createLogger } from '../../../src/runtime/logger.js';
import type { ReconcileRequest } from '../../../src/runtime/reconcile.js';
import { openWatch } from '../devcluster/watch-client.js';
import { flinkApi, flinkDeployment, installMinimalFlinkCrd, waitFor } from './cluster-fixtures.js';

// The real watch cache keeps a bounded window of events per resource type; a client that re-watches
// from a resourceVersion the window no longer reaches gets an ERROR 410 Expired event and must relist
// (apiserver pkg/storage/cacher/watch_cache.go getAllEventsSinceLocked; client-node ListWatch relists on 410).
test('the operator relists after its re-watch falls out of the watch window and converges on every object', { timeout: 60_000 }, async () => {
  const cluster = await startDevCluster({ watchHistorySize: 20 });
  const kc = cluster.kubeConfig();
  await installMinimalFlinkCrd(kc);
  const flink = flinkApi(kc);
  await flink.create(flinkDeployment('first'));
  const config = resolveOperatorConfig({
    flags: { httpPort: '0', httpHost: '127.0.0.1', identity: 'op-relist', reconcileIntervalMs: '60s', logLevel: 'silent' },
  });
  // the reconciler records the spec image it saw in the status: what a user sees as "reconciled"
  const manager = new Manager({
    config,
    kubeConfig: kc,
    logger: createLogger({ level: 'silent' }),
    makeReconciler: () => ({
      async reconcile(request: ReconcileRequest) {
        const current = await flink.get(request.namespace, request.name).catch(() => undefined);
        if (!current) return {};
        const image = current.spec.image;
        if (current.status?.observedImage !== image) await flink.replaceStatus({ ...current, status: { observedImage: image } });
        return {};
      },
    }),
  });
  const reconciled = async (name: string, image: string) => {
    const fd = await flink.get('default', name).catch(() => undefined);
    return fd?.status?.observedImage === image;
  };
  await manager.start();
  try {
    await waitFor(() => reconciled('first', 'flink:2.2'), 5000, 'first reconcile');
    const fdWatches = { verb: 'watch', resource: 'flinkdeployments' };
    const fdRequests = () => cluster.requestLog.entries({ resource: 'flinkdeployments' }).filter((e) => e.verb === 'watch' || e.verb === 'list');
    const before = fdRequests().length;
    const rvBefore = (await flink.get('default', 'first')).metadata.resourceVersion!;

    // cut the operator's watches off and hold its re-watch while more events than the window holds happen
    cluster.faults.delay(fdWatches, 1500, 1);
    cluster.faults.closeAllWatches();
    const names = Array.from({ length: 8 }, (_, i) => `later-${i}`);
    for (const name of names) await flink.create(flinkDeployment(name));
    for (const name of ['first', ...names]) {
      const fd = await flink.get('default', name);
      await flink.replace({ ...fd, spec: { ...fd.spec, image: 'flink:2.3' } });
      const again = await flink.get('default', name);
      await flink.replace({ ...again, spec: { ...again.spec, image: 'flink:2.4' } });
    }

    for (const name of ['first', ...names]) await waitFor(() => reconciled(name, 'flink:2.4'), 15_000, `${name} reconciled after the relist`);

    // the window really no longer reaches the operator's last resourceVersion …
    const expired = await openWatch(cluster.url, `/apis/flink.apache.org/v1/namespaces/default/flinkdeployments?watch=true&resourceVersion=${rvBefore}`);
    await expired.waitFor(1);
    assert.equal(expired.events[0].type, 'ERROR');
    assert.equal(expired.events[0].object.code, 410);
    await expired.waitEnd();
    // … and the request log shows the held re-watch (answered with the 410 event), then a relist, then a new watch
    const after = fdRequests()
      .slice(before)
      .filter((e) => e.userAgent !== 'node') // the check above is ours (fetch), not the operator's
      .map((e) => e.verb);
    assert.deepEqual(after.slice(0, 3), ['watch', 'list', 'watch'], JSON.stringify(after));
  } finally {
    await manager.stop();
    await cluster.stop();
  }
});
