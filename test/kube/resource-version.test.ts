import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareResourceVersions, isAtLeast, isComparableResourceVersion } from '../../src/kube/resource-version.js';

test('resourceVersions compare by length first, then lexically', () => {
  assert.equal(compareResourceVersions('9', '10'), -1);
  assert.equal(compareResourceVersions('10', '9'), 1);
  assert.equal(compareResourceVersions('123', '123'), 0);
  assert.equal(compareResourceVersions('124', '123'), 1);
  assert.equal(compareResourceVersions('99999999999999999999', '100000000000000000000'), -1, 'beyond Number precision');
});

test('non-decimal, empty or zero-padded resourceVersions are not comparable', () => {
  for (const bad of ['', '0', '01', 'abc', '12a', ' 12', '-1', '1.5', undefined, null]) {
    assert.equal(isComparableResourceVersion(bad), false, String(bad));
    assert.equal(compareResourceVersions(bad, '5'), undefined, String(bad));
    assert.equal(compareResourceVersions('5', bad), undefined, String(bad));
  }
});

test('isAtLeast is false when the order is unknown', () => {
  assert.equal(isAtLeast('10', '9'), true);
  assert.equal(isAtLeast('9', '9'), true);
  assert.equal(isAtLeast('8', '9'), false);
  assert.equal(isAtLeast('x', '9'), false);
});
