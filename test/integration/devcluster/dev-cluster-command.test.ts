import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { eventually } from './raw-http.js';

const FIXTURE = 'test/integration/devcluster/dev-cluster-cli-fixture.ts';

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
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
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
});
