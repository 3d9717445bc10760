/**
 * The `flink-operator` command (package.json "bin") works on a fresh clone after `npm ci`, without
 * `npm run build`: it runs the TypeScript sources through tsx, and `npx flink-operator` finds it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const COMMANDS = ['run', 'dev-cluster', 'demo', 'migrate', 'inspect', 'validate'];

function binTarget(): string {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { bin?: Record<string, string> };
  const target = pkg.bin?.['flink-operator'];
  assert.ok(target, 'package.json has a "flink-operator" bin');
  return target;
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

function assertHelpListsCommands(result: { code: number | null; stdout: string; stderr: string }): void {
  assert.equal(result.code, 0, result.stderr + result.stdout);
  assert.match(result.stdout, /^Usage: flink-operator /m);
  for (const command of COMMANDS) assert.match(result.stdout, new RegExp(`^ {2}${command} `, 'm'), `--help lists ${command}`);
}

test('the "bin" is a committed launcher, not a build output', () => {
  const target = binTarget();
  assert.doesNotMatch(target, /^(\.\/)?dist\//, 'dist/ exists only after npm run build');
  const path = join(ROOT, target);
  assert.ok(existsSync(path), `${target} exists`);
  assert.match(readFileSync(path, 'utf8'), /^#!\/usr\/bin\/env node\n/, 'it starts with a node shebang');
});

test('flink-operator --help lists the commands (node_modules/.bin link, else the launcher run with node)', { timeout: 120_000 }, async () => {
  // npm links the bins of dependencies into node_modules/.bin, not the project's own; a link is
  // there only if someone made one (npm link flink-operator-ts, or an install of this package elsewhere).
  const linked = join(ROOT, 'node_modules/.bin/flink-operator');
  const result = existsSync(linked) ? await run(linked, ['--help']) : await run(process.execPath, [join(ROOT, binTarget()), '--help']);
  assertHelpListsCommands(result);
});

test('npx flink-operator --help works in the checkout without a build', { timeout: 120_000 }, async () => {
  // npx installs the project into its cache (as a link) to link its bin; a cache of its own, so that
  // a bin linked by an earlier run (of another package.json) is not reused.
  const cache = mkdtempSync(join(tmpdir(), 'flink-operator-npx-cache-'));
  try {
    const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx';
    assertHelpListsCommands(await run(npx, ['--offline', '--yes', 'flink-operator', '--help'], { npm_config_cache: cache }));
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
});

test('flink-operator --version prints the version', { timeout: 120_000 }, async () => {
  const result = await run(process.execPath, [join(ROOT, binTarget()), '--version']);
  assert.equal(result.code, 0, result.stderr);
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  assert.equal(result.stdout.trim(), pkg.version);
});
