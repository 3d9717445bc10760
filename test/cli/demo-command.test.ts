/**
 * `flink-operator demo` (the README's first command), run as a user would run it, in its own
 * process: the walkthrough (`--exit`), what it prints of the state ConfigMap, and that it leaves no
 * temporary directory behind, whether it finishes or is stopped with Ctrl-C (SIGINT).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { diffConfigMapData } from '../../src/cli/demo-command.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Starts the demo with a TMPDIR of its own (so that what it leaves there can be checked);
 * `interruptWhen` sends SIGINT once the output matches.
 */
async function runDemoProcess(args: string[], interruptWhen?: RegExp): Promise<{ code: number | null; output: string; leftovers: string[] }> {
  const tmp = mkdtempSync(join(tmpdir(), 'demo-test-tmp-'));
  try {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'demo', ...args], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, TMPDIR: tmp, KUBECONFIG: '' },
    });
    let output = '';
    let interrupted = false;
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (interruptWhen && !interrupted && interruptWhen.test(output)) {
        interrupted = true;
        child.kill('SIGINT');
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const timer = setTimeout(() => child.kill('SIGKILL'), 150_000);
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    clearTimeout(timer);
    const kubeconfig = /\(kubeconfig (\S+)\)/.exec(output)?.[1];
    assert.ok(kubeconfig, `the demo printed its kubeconfig path: ${output}`);
    assert.ok(kubeconfig.startsWith(tmp), `the kubeconfig is in a temporary directory: ${kubeconfig}`);
    assert.equal(existsSync(dirname(kubeconfig)), false, `the kubeconfig's temporary directory ${dirname(kubeconfig)} is removed`);
    return { code, output, leftovers: readdirSync(tmp).filter((name) => name.startsWith('flink-operator-demo-')) };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** One `demo --exit` run, shared by the tests that read its output. */
let exitRun: ReturnType<typeof runDemoProcess> | undefined;
const demoExit = () => (exitRun ??= runDemoProcess(['--exit']));

test('the demo walks through deploy, savepoint upgrade, suspend and resume, then exits', { timeout: 180_000 }, async () => {
  const { code, output, leftovers } = await demoExit();
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
  assert.match(output, /demo-on-request\s+\S*savepoint-\S+\s+\S+\s+COMPLETED/, 'the FlinkStateSnapshot the demo creates is taken and listed');
  assert.match(output, /session job: lifecycle STABLE, job RUNNING [0-9a-f]{32}/, 'the session job runs on the session cluster');
  assert.match(output, /kubectl get configmap demo-session-job\.sessionjob-state -o yaml/);
  assert.match(output, /Demo finished\./);
  assert.deepEqual(leftovers, [], 'no temporary directory is left behind');
});

test('the demo prints the whole state ConfigMap once, then only what changed in its data at each later step', { timeout: 180_000 }, async () => {
  const { code, output } = await demoExit();
  assert.equal(code, 0, output);
  assert.equal([...output.matchAll(/^kind: ConfigMap$/gm)].length, 1, `the whole ConfigMap is printed once: ${output}`);
  assert.equal([...output.matchAll(/^ {2}formatVersion: "2"$/gm)].length, 1, 'unchanged keys are printed once');
  const changes = [...output.matchAll(/^State ConfigMap demo-operator-state, what changed in its data \(revision (\d+) → (\d+)\):\n((?: {2}.*\n)+)/gm)];
  assert.equal(changes.length, 2, `after the upgrade and after the resume: ${output}`);
  const [upgrade, resume] = changes.map((m) => m[3]);
  assert.match(
    upgrade,
    /^ {2}~ lastReconciledSpec:\n {4}- image: flink:1\.20\n {4}\+ image: flink:1\.20\.1\n {2}~ /m,
    'a spec change shows the changed line only',
  );
  assert.match(upgrade, /^ {2}\+ deployedFrom: file:\S+savepoint-/m, 'an added key');
  assert.match(upgrade, /^ {2}~ lastReconciledGeneration: 1 → 2$/m);
  assert.match(upgrade, /^ {2}~ savepointHistory:\n {4}- \[\]\n {4}\+ - location: /m);
  assert.doesNotMatch(upgrade, /formatVersion|deploymentUid|taskmanager\.numberOfTaskSlots/, 'unchanged keys and lines are not repeated');
  assert.match(resume, /^ {2}~ lastReconciledGeneration: 2 → 4$/m);
  assert.equal(changes[0][2], changes[1][1], 'each diff starts from the revision shown before');
});

test('Ctrl-C during the walkthrough stops the demo and removes its temporary directories', { timeout: 180_000 }, async () => {
  const { code, output, leftovers } = await runDemoProcess([], /== 1\. Create FlinkDeployment/);
  assert.equal(code, 130, output);
  assert.match(output, /Stopping the operator and the development cluster\./);
  assert.doesNotMatch(output, /Demo finished/);
  assert.deepEqual(leftovers, [], 'no temporary directory is left behind');
});

test('Ctrl-C after the walkthrough stops the demo (exit 0) and removes its temporary directories', { timeout: 180_000 }, async () => {
  const { code, output, leftovers } = await runDemoProcess([], /press Ctrl-C to stop/);
  assert.equal(code, 0, output);
  assert.deepEqual(leftovers, [], 'no temporary directory is left behind');
});

test('diffConfigMapData: added, removed, changed one-line and multi-line values', () => {
  assert.deepEqual(
    diffConfigMapData(
      { a: '1', gone: 'x', same: 's', spec: 'image: flink:1.20\nparallelism: 2\nmode: native\n' },
      { a: '2', added: 'y', same: 's', spec: 'image: flink:1.20.1\nparallelism: 2\n' },
    ),
    ['  ~ a: 1 → 2', '  + added: y', '  - gone: x', '  ~ spec:', '    - image: flink:1.20', '    + image: flink:1.20.1', '    - mode: native'],
  );
  assert.deepEqual(diffConfigMapData({ k: 'v' }, { k: 'v' }), []);
  assert.deepEqual(diffConfigMapData({}, { multi: 'l1\nl2\n' }), ['  + multi:', '      l1', '      l2']);
});
