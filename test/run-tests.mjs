#!/usr/bin/env node
// Runs every test/**/*.test.ts file with node's built-in test runner, TypeScript loaded through tsx.
// Node 20's `--test` does not expand globs and ignores .ts files when given a directory, hence this list.
// Usage: node test/run-tests.mjs [--unit] [path-substring ...]
//   --unit        only files outside test/integration and test/e2e
//   substrings    only files whose path contains one of them
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const unitOnly = args.includes('--unit');
const filters = args.filter((a) => !a.startsWith('--'));

function walk(dir) {
  const out = [];
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) out.push(...walk(path));
    else if (entry.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

let files = walk(join(root, 'test'))
  .map((f) => relative(root, f))
  .sort();
if (unitOnly) files = files.filter((f) => !/test\/(integration|e2e)\//.test(f));
if (filters.length) files = files.filter((f) => filters.some((s) => f.includes(s)));
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
const concurrency = process.env.TEST_CONCURRENCY ?? '2';
const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, '--test-reporter=spec', ...files], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, FORCE_COLOR: '0' },
});
process.exit(result.status ?? 1);
