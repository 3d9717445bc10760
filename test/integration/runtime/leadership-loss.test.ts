import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { kubeconfigYamlFor, startDevCluster } from '../../../src/devcluster/dev-cluster.js';
import { Manager } from '../../../src/runtime/manager.js';
import { resolveOperatorConfig } from '../../../src/runtime/operator-config.js';
import { createLogger } from '../../../src/runtime/logger.js';
import { flinkApi, flinkDeployment, installMinimalFlinkCrd, waitFor } from './cluster-fixtures.js';

/** A pass-through proxy to the API server that can cut one client off from the Lease (503). */
async function leaseCuttingProxy(target: string): Promise<{ url: string; cut: (on: boolean) => void; stop: () => Promise<void> }> {
  let cut = false;
  const server: Server = createServer((req, res) => {
    if (cut && (req.url ?? '').includes('/leases')) {
      res.writeHead(503, { 'content-type': 'application/json' }).end('{"kind":"Status","apiVersion":"v1","status":"Failure","code":503}');
      return;
    }
    const upstream = httpRequest(new URL(req.url ?? '/', target), { method: req.method, headers: req.headers }, (response) => {
      res.writeHead(response.statusCode ?? 502, response.headers);
      response.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    cut: (on) => (cut = on),
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

test('a leader cut off from its lease stops reconciling at once (in-flight reconciles aborted) and the standby takes over', { timeout: 30_000 }, async () => {
  const cluster = await startDevCluster();
  const kc = cluster.kubeConfig();
  await installMinimalFlinkCrd(kc);
  await flinkApi(kc).create(flinkDeployment('job'));
  const proxy = await leaseCuttingProxy(cluster.url);
  const kcViaProxy = new KubeConfig();
  kcViaProxy.loadFromString(kubeconfigYamlFor(proxy.url));
  const log: Array<{ who: string; event: string; at: number }> = [];
  const managers = ['op-a', 'op-b'].map(
    (identity) =>
      new Manager({
        config: resolveOperatorConfig({
          flags: {
            identity,
            leaderElect: true,
            leaseNamespace: 'default',
            leaseDurationMs: '1s',
            renewDeadlineMs: '600ms',
            retryPeriodMs: '100ms',
            reconcileIntervalMs: '50ms',
            shutdownTimeoutMs: '100ms',
            httpPort: '0',
            httpHost: '127.0.0.1',
            logLevel: 'silent',
          },
        }),
        kubeConfig: identity === 'op-a' ? kcViaProxy : kc,
        logger: createLogger({ level: 'silent' }),
        makeReconciler: () => ({
          async reconcile(_request, signal) {
            log.push({ who: identity, event: 'start', at: Date.now() });
            // a long reconcile: only an abort ends it early
            await new Promise<void>((resolve) => {
              const timer = setTimeout(resolve, 5_000);
              signal.addEventListener('abort', () => {
                clearTimeout(timer);
                log.push({ who: identity, event: 'aborted', at: Date.now() });
                resolve();
              });
            });
            return {};
          },
        }),
        serveHttp: false,
      }),
  );
  const [a, b] = managers as [Manager, Manager];
  try {
    await a.start();
    await waitFor(() => log.some((l) => l.who === 'op-a' && l.event === 'start'), 5000, 'op-a reconciling');
    await b.start();
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(b.isReconciling(), false);
    // op-a can no longer reach the Lease (its other traffic still flows)
    const cutAt = Date.now();
    proxy.cut(true);
    await waitFor(() => log.some((l) => l.who === 'op-a' && l.event === 'aborted'), 3000, 'op-a aborted its reconcile');
    const abortedAt = log.find((l) => l.who === 'op-a' && l.event === 'aborted')!.at;
    assert.ok(abortedAt - cutAt <= 600 + 100 + 150, `stopped within the renew deadline: ${abortedAt - cutAt} ms`);
    assert.equal(a.isReconciling(), false);
    await waitFor(() => log.some((l) => l.who === 'op-b' && l.event === 'start'), 5000, 'op-b takes over');
    const bStart = log.find((l) => l.who === 'op-b' && l.event === 'start')!.at;
    assert.ok(bStart > abortedAt, 'never two leaders reconciling at once');
    assert.equal(b.dependencies.fencingToken()?.leaseTransitions, 1);
    assert.equal(a.dependencies.fencingToken(), undefined);
    // op-a reaches the Lease again: it finds op-b's live lease and stays a standby
    proxy.cut(false);
    await new Promise((r) => setTimeout(r, 800));
    assert.equal(a.isReconciling(), false);
    assert.equal(log.filter((l) => l.who === 'op-a' && l.event === 'start' && l.at > abortedAt).length, 0);
  } finally {
    await Promise.all(managers.map((m) => m.stop()));
    await proxy.stop();
    await cluster.stop();
  }
});
