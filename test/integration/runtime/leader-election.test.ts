import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { CoordinationV1Api, CoreV1Api } from '@kubernetes/client-node';
import { startDevCluster } from '../../../src/devcluster/dev-cluster.js';
import { LEADER_ANNOTATION, StaleLeaderError, type FencingToken } from '../../../src/runtime/fencing-token.js';
import { fencedStateWrite } from './fenced-write.js';
import { flinkApi, flinkDeployment, installMinimalFlinkCrd, waitFor } from './cluster-fixtures.js';

interface Mark {
  at: number;
  event: string;
  identity: string;
  key?: string;
  token?: FencingToken;
  port?: number;
}

const LEASE_MS = 2000;
const RETRY_MS = 200;

/** Starts an operator process; collects its MARK lines. */
function operator(kubeconfig: string, identity: string, marks: Mark[]): ChildProcess {
  const script = fileURLToPath(new URL('./operator-process.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    env: {
      ...process.env,
      KUBECONFIG: kubeconfig,
      FLINK_OPERATOR_IDENTITY: identity,
      FLINK_OPERATOR_LEADER_ELECT: 'true',
      FLINK_OPERATOR_LEASE_NAMESPACE: 'default',
      FLINK_OPERATOR_LEASE_DURATION: `${LEASE_MS}ms`,
      FLINK_OPERATOR_RENEW_DEADLINE: '1500ms',
      FLINK_OPERATOR_RETRY_PERIOD: `${RETRY_MS}ms`,
      FLINK_OPERATOR_RECONCILE_INTERVAL: '300ms',
      FLINK_OPERATOR_HTTP_PORT: '0',
      FLINK_OPERATOR_HTTP_HOST: '127.0.0.1',
      FLINK_OPERATOR_LOG_LEVEL: 'warn',
      FLINK_OPERATOR_SHUTDOWN_TIMEOUT: '3s',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  createInterface(child.stderr).on('line', (line) => {
    if (line.startsWith('MARK ')) marks.push(JSON.parse(line.slice(5)) as Mark);
  });
  return child;
}

async function get(url: string): Promise<{ status: number; text: string }> {
  const response = await fetch(url);
  return { status: response.status, text: await response.text() };
}

test(
  "two operators with leader election: only the leader reconciles, a standby takes over after SIGKILL, the old leader's late write is refused",
  { timeout: 60_000 },
  async () => {
    const dir = await mkdtemp(join(tmpdir(), 'runtime-le-'));
    const kubeconfig = join(dir, 'kubeconfig');
    const cluster = await startDevCluster({ kubeconfigPath: kubeconfig });
    const kc = cluster.kubeConfig();
    const core = kc.makeApiClient(CoreV1Api);
    const marks: Mark[] = [];
    const children: ChildProcess[] = [];
    try {
      await installMinimalFlinkCrd(kc);
      await flinkApi(kc).create(flinkDeployment('job-a'));

      const a = operator(kubeconfig, 'op-a', marks);
      children.push(a);
      await waitFor(() => marks.some((m) => m.identity === 'op-a' && m.event === 'write-ok'), 20_000, 'op-a leads and writes');
      const b = operator(kubeconfig, 'op-b', marks);
      children.push(b);
      await waitFor(() => marks.some((m) => m.identity === 'op-b' && m.event === 'ready'), 20_000, 'op-b started');
      const portOf = (id: string) => marks.find((m) => m.identity === id && m.event === 'ready')!.port!;
      await waitFor(async () => (await get(`http://127.0.0.1:${portOf('op-b')}/readyz`)).status === 200, 5000, 'op-b ready as a standby');
      const observeFrom = Date.now();
      await new Promise((r) => setTimeout(r, 1200));

      // only the leader reconciles
      const reconcilers = new Set(marks.filter((m) => m.event === 'reconcile' && m.at >= observeFrom).map((m) => m.identity));
      assert.deepEqual([...reconcilers], ['op-a']);
      const aToken = marks.find((m) => m.identity === 'op-a' && m.event === 'reconcile')!.token!;
      // The token names the shard (design/012): the Lease, default/flink-operator-lock.
      assert.deepEqual(aToken, { holderIdentity: 'op-a', leaseTransitions: 0, shard: 'default/flink-operator-lock' });

      // /healthz, /readyz and /metrics of leader and standby
      for (const id of ['op-a', 'op-b']) {
        const base = `http://127.0.0.1:${portOf(id)}`;
        assert.equal((await get(`${base}/healthz`)).status, 200);
        assert.equal((await get(`${base}/readyz`)).status, 200, `${id} ready (leader or healthy standby)`);
        const metrics = (await get(`${base}/metrics`)).text;
        assert.match(metrics, new RegExp(`^flink_operator_leader ${id === 'op-a' ? 1 : 0}$`, 'm'));
        assert.match(metrics, /flink_operator_informer_synced\{resource="flinkdeployments"\} 1/);
        assert.match(metrics, /flink_operator_api_requests_total\{verb="get",code="200"\} \d+/);
        if (id === 'op-a') assert.match(metrics, /flink_operator_reconcile_total\{result="success"\} \d+/);
        else assert.doesNotMatch(metrics, /flink_operator_reconcile_total\{/);
      }

      // kill the leader hard: no lease release
      const killedAt = Date.now();
      a.kill('SIGKILL');
      await waitFor(() => marks.some((m) => m.identity === 'op-b' && m.event === 'write-ok'), 10_000, 'op-b takes over');
      const takeover = marks.find((m) => m.identity === 'op-b' && m.event === 'reconcile')!;
      const takeoverMs = takeover.at - killedAt;
      // the standby waits one lease duration after it last saw a renewal (observed at most one
      // retry period late), then acquires on its next retry tick
      assert.ok(takeoverMs <= LEASE_MS + 2 * RETRY_MS + 800, `took over after ${takeoverMs} ms`);
      assert.deepEqual(takeover.token, { holderIdentity: 'op-b', leaseTransitions: 1, shard: 'default/flink-operator-lock' });

      // the old leader's late state write is refused
      const before = await core.readNamespacedConfigMap({ namespace: 'default', name: 'job-a-operator-state' });
      assert.equal(before.metadata?.annotations?.[LEADER_ANNOTATION], 'op-b/1@default/flink-operator-lock');
      await assert.rejects(fencedStateWrite(core, 'default', 'job-a-operator-state', aToken, { reconciledBy: 'op-a (late)' }), StaleLeaderError);
      const after = await core.readNamespacedConfigMap({ namespace: 'default', name: 'job-a-operator-state' });
      assert.equal(after.data?.reconciledBy, 'op-b');
      // and the resourceVersion lock: a write based on a read that the leader has since overwritten conflicts
      await waitFor(
        async () =>
          (await core.readNamespacedConfigMap({ namespace: 'default', name: 'job-a-operator-state' })).metadata?.resourceVersion !==
          before.metadata?.resourceVersion,
        5000,
        'op-b writes again',
      );
      await core
        .replaceNamespacedConfigMap({ namespace: 'default', name: 'job-a-operator-state', body: { ...before, data: { reconciledBy: 'stale read' } } })
        .then(
          () => assert.fail('a stale resourceVersion must conflict'),
          (error: { code?: number }) => assert.equal(error.code, 409),
        );

      // graceful shutdown of the new leader releases the lease
      const exited = new Promise<number | null>((resolve) => b.once('exit', (code) => resolve(code)));
      b.kill('SIGTERM');
      assert.equal(await exited, 0);
      assert.ok(marks.some((m) => m.identity === 'op-b' && m.event === 'exited'));
      const lease = await kc.makeApiClient(CoordinationV1Api).readNamespacedLease({ namespace: 'default', name: 'flink-operator-lock' });
      assert.equal(lease.spec?.holderIdentity ?? '', '', 'lease released on shutdown');
    } catch (error) {
      if (process.env.DEBUG_MARKS) console.log(marks.map((m) => JSON.stringify(m)).join('\n'));
      throw error;
    } finally {
      for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await cluster.stop();
      await rm(dir, { recursive: true, force: true });
    }
  },
);
