/** The one-line-per-change diff text `migrate --dry-run` and `inspect` print. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeJsonDiff, dottedPath } from '../../src/state/json-patch-text.js';

test('paths read like kubectl field paths (dots, [index], quoted keys with dots or slashes)', () => {
  assert.equal(dottedPath('/job/args/2', 'spec'), 'spec.job.args[2]');
  assert.equal(dottedPath('/flinkConfiguration/state.savepoints.dir', 'spec'), 'spec.flinkConfiguration["state.savepoints.dir"]');
  assert.equal(dottedPath('/a~1b', ''), '["a/b"]');
  assert.equal(dottedPath('', ''), '(root)');
});

test('adds, removes and replaces show the old and new values; long values are cut', () => {
  const before = { job: { parallelism: 2, state: 'running' }, image: 'flink:1.20', big: 'x'.repeat(500) };
  const after = { job: { parallelism: 4 }, image: 'flink:1.20', restartNonce: 3, big: 'y' };
  const lines = describeJsonDiff(before, after, { prefix: 'spec', maxValueChars: 20 });
  assert.deepEqual(lines.sort(), [
    '+ spec.restartNonce: 3',
    '- spec.job.state: "running"',
    '~ spec.big: "xxxxxxxxxxxxxxxxxx… → "y"', // 20 characters with the ellipsis,
    '~ spec.job.parallelism: 2 → 4',
  ]);
  assert.deepEqual(describeJsonDiff(before, structuredClone(before)), []);
});
