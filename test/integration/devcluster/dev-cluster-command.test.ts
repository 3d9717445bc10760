import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { KubectlRunner } from './kubectl-runner.js';
import { eventually } from './raw-http.js';

const FIXTURE = 'test/integration/devcluster/dev-cluster-cli-fixture.ts';
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
/** The `flink-operator` command itself (package.json "bin"), as a user runs it. */
const FLINK_OPERATOR = join(ROOT, 'src/cli/flink-operator');

/** A child process whose output is collected; `stop()` ends it (SIGTERM, then SIGKILL) and waits. */
function startProcess(args: string[]): { child: ChildProcess; output: () => string; exited: Promise<number | null>; stop: () => Promise<void> } {
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, KUBECONFIG: '' } });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  // A child ended by a signal resolves with null; the signal is kept in its output for the assertion message.
  const exited = new Promise<number | null>((r) =>
    child.on('exit', (code, signal) => {
      if (signal !== null) out += `\n[ended by ${signal}]`;
      r(code);
    }),
  );
  return {
    child,
    output: () => out,
    exited,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** The README's example FlinkDeployment (section "Install"). */
const ORDERS = `apiVersion: flink.apache.org/v1
kind: FlinkDeployment
metadata:
  name: orders
spec:
  image: flink:1.20
  flinkVersion: v1_20
  serviceAccount: flink
  mode: standalone
  flinkConfiguration:
    taskmanager.numberOfTaskSlots: "2"
    execution.checkpointing.dir: s3://my-bucket/checkpoints
    execution.checkpointing.savepoint-dir: s3://my-bucket/savepoints
  jobManager:
    resource: { cpu: 1, memory: 2048m }
  taskManager:
    resource: { cpu: 1, memory: 2048m }
  job:
    jarURI: local:///opt/flink/examples/streaming/StateMachineExample.jar
    parallelism: 2
    upgradeMode: savepoint
`;

describe('flink-operator dev-cluster', () => {
  it('serves in the foreground, writes a usable kubeconfig, logs its URL, and stops cleanly on SIGTERM', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'devcluster-cli-'));
    const kubeconfig = join(dir, 'kubeconfig');
    const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE, 'dev-cluster', '--kubeconfig', kubeconfig, '--port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    // A child ended by a signal resolves with null; the signal is kept in its output for the assertion message.
    const exited = new Promise<number | null>((r) =>
      child.on('exit', (code, signal) => {
        if (signal !== null) out += `\n[ended by ${signal}]`;
        r(code);
      }),
    );
    try {
      await eventually(() => existsSync(kubeconfig) && /serving at http:\/\/127\.0\.0\.1:\d+/.test(out), 60_000, 'dev cluster start');
      const yaml = readFileSync(kubeconfig, 'utf8');
      assert.match(yaml, /insecure-skip-tls-verify: true/);
      const url = /serving at (http:\/\/127\.0\.0\.1:\d+)/.exec(out)![1];
      assert.match(yaml, new RegExp(`server: ${url}`));
      const kc = new KubeConfig();
      kc.loadFromFile(kubeconfig);
      assert.equal(kc.getContextObject(kc.getCurrentContext())!.namespace, 'default');
      const ns = await kc.makeApiClient(CoreV1Api).readNamespace({ name: 'default' });
      assert.equal(ns.metadata!.name, 'default');
      child.kill('SIGTERM');
      assert.equal(await exited, 0);
    } finally {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it(
    'runs the simulation by default: the README sequence (dev-cluster, run --flink-rest-access apiserver-proxy, kubectl apply) ends STABLE with a RUNNING job',
    { timeout: 240_000 },
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'devcluster-cli-sim-'));
      const kubeconfig = join(dir, 'kubeconfig');
      const cluster = startProcess([
        FLINK_OPERATOR,
        'dev-cluster',
        '--kubeconfig',
        kubeconfig,
        '--pod-ready-delay',
        '300ms',
        '--job-start-delay',
        '300ms',
        '--savepoint-duration',
        '0.3s',
      ]);
      let operator: ReturnType<typeof startProcess> | undefined;
      let kubectl: KubectlRunner | undefined;
      try {
        await eventually(
          () => {
            if (cluster.child.exitCode !== null) throw new Error(`flink-operator dev-cluster exited ${cluster.child.exitCode}: ${cluster.output()}`);
            return existsSync(kubeconfig) && /serving at http:\/\/127\.0\.0\.1:\d+/.test(cluster.output());
          },
          60_000,
          'dev cluster start',
        );
        assert.match(cluster.output(), /simulated kubelet, controllers and Flink: pod ready 300ms, job start 300ms, savepoint 300ms/);
        operator = startProcess([
          FLINK_OPERATOR,
          'run',
          '--kubeconfig',
          kubeconfig,
          '--flink-rest-access',
          'apiserver-proxy',
          '--http-port',
          '0',
          '--http-host',
          '127.0.0.1',
          '--progress-check-interval',
          '1s',
        ]);
        kubectl = new KubectlRunner(readFileSync(kubeconfig, 'utf8'));
        await kubectl.ok(['apply', '--server-side', '-f', join(ROOT, 'crds/')]);
        // The CRD is served once it is Established; the first apply of a FlinkDeployment may race it.
        const deadline = Date.now() + 150_000;
        let applied = false;
        let last = '';
        for (;;) {
          assert.equal(cluster.child.exitCode, null, `the dev cluster exited: ${cluster.output()}`);
          assert.equal(operator.child.exitCode, null, `the operator exited: ${operator.output()}`);
          if (!applied) applied = (await kubectl.run(['apply', '-f', '-'], ORDERS)).code === 0;
          if (applied) {
            const r = await kubectl.run(['get', 'flinkdeployment', 'orders']);
            last = r.stdout + r.stderr;
            if (/^orders\s+RUNNING\s+STABLE\s/m.test(r.stdout)) break;
          }
          if (Date.now() > deadline)
            assert.fail(
              `orders never became STABLE with a RUNNING job; last kubectl get: ${last}\noperator: ${operator.output()}\ncluster: ${cluster.output()}`,
            );
          await new Promise((r) => setTimeout(r, 500));
        }
        const pods = await kubectl.ok(['get', 'pods']);
        assert.match(pods, /^orders-[0-9a-f]+-\S+\s+1\/1\s+Running/m, 'the JobManager pod runs');
        assert.match(pods, /^orders-taskmanager-\S+\s+1\/1\s+Running/m, 'the TaskManager pod runs');
      } finally {
        kubectl?.cleanup();
        await operator?.stop();
        await cluster.stop();
        rmSync(dir, { recursive: true, force: true });
      }
      assert.equal(await cluster.exited, 0, cluster.output());
    },
  );

  it('--api-only serves the API server alone, and refuses simulation timings', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'devcluster-cli-api-only-'));
    const kubeconfig = join(dir, 'kubeconfig');
    const refused = startProcess(['--import', 'tsx', FIXTURE, 'dev-cluster', '--kubeconfig', kubeconfig, '--api-only', '--pod-ready-delay', '1s']);
    const apiOnly = startProcess(['--import', 'tsx', FIXTURE, 'dev-cluster', '--kubeconfig', kubeconfig, '--api-only']);
    try {
      assert.notEqual(await refused.exited, 0);
      assert.match(refused.output(), /--api-only leaves out/);
      await eventually(() => /serving at http:\/\/127\.0\.0\.1:\d+/.test(apiOnly.output()), 60_000, 'dev cluster start');
      assert.match(apiOnly.output(), /API server only, no simulation/);
      await apiOnly.stop();
      assert.equal(await apiOnly.exited, 0, apiOnly.output());
    } finally {
      await refused.stop();
      await apiOnly.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
  it('--tls serves HTTPS, so kubectl can act as a ServiceAccount with a token from kubectl create token', async () => {
    // kubectl drops a kubeconfig's or --token's bearer token on plain http:// (kubernetes/kubectl#744),
    // which is why a user needs --tls to try RBAC as a ServiceAccount.
    const dir = mkdtempSync(join(tmpdir(), 'devcluster-cli-tls-'));
    const kubeconfig = join(dir, 'kubeconfig');
    const cluster = startProcess(['--import', 'tsx', FIXTURE, 'dev-cluster', '--kubeconfig', kubeconfig, '--tls']);
    let kubectl: KubectlRunner | undefined;
    try {
      await eventually(() => existsSync(kubeconfig) && /serving at https:\/\/127\.0\.0\.1:\d+/.test(cluster.output()), 60_000, 'dev cluster start');
      kubectl = new KubectlRunner(readFileSync(kubeconfig, 'utf8'));
      await kubectl.ok(['create', 'serviceaccount', 'reader']);
      const token = (await kubectl.ok(['create', 'token', 'reader'])).trim();
      const refused = await kubectl.run(['get', 'configmaps', '--token', token]);
      assert.notEqual(refused.code, 0);
      // the RBAC authorizer's words (plugin/pkg/auth/authorizer/rbac/rbac.go via responsewriters.ForbiddenStatusError)
      assert.match(
        refused.stderr,
        /configmaps is forbidden: User "system:serviceaccount:default:reader" cannot list resource "configmaps" in API group "" in the namespace "default"/,
      );
      await kubectl.ok(['create', 'rolebinding', 'reader-view', '--clusterrole=view', '--serviceaccount=default:reader']);
      let listed = '';
      await eventually(
        async () => {
          const r = await kubectl!.run(['get', 'configmaps', '--token', token, '-o', 'name']);
          listed = r.stdout;
          return r.code === 0;
        },
        10_000,
        'the view ClusterRole to take effect',
      );
      assert.match(listed, /configmap\/kube-root-ca\.crt/);
      await cluster.stop();
      assert.equal(await cluster.exited, 0);
    } finally {
      kubectl?.cleanup();
      await cluster.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
