/**
 * `flink-operator demo --exit` (the README's first command without the wait): the whole product on
 * the development cluster, run as a user would run it, in its own process.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

test('the demo walks through deploy, savepoint upgrade, suspend and resume, then exits', { timeout: 180_000 }, async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'demo', '--exit'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  assert.equal(code, 0, output);
  assert.match(output, /lifecycle STABLE, job RUNNING, JobManager READY, observedGeneration 1/);
  assert.match(output, /lifecycle STABLE, job RUNNING, JobManager READY, observedGeneration 2/);
  assert.match(output, /lifecycle SUSPENDED/);
  assert.match(output, /observedGeneration 4/);
  assert.match(output, /kubectl get configmap demo-operator-state -o yaml\n(apiVersion: v1\n)?data:/, 'the state ConfigMap is shown');
  assert.match(output, /lastReconciledSpec: \|/, 'specs are readable YAML blocks');
  const restores = [...output.matchAll(/job [0-9a-f]{32} restored from (\S+)/g)].map((m) => m[1]);
  assert.deepEqual(restores.length, 3, output);
  assert.equal(restores[0], '(nothing)');
  assert.match(restores[1], /savepoint-/);
  assert.match(restores[2], /savepoint-/);
  assert.notEqual(restores[1], restores[2], 'the resume restored from the suspend savepoint, not the upgrade one');
  assert.match(output, /Demo finished\./);
});
