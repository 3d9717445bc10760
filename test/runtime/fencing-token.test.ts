import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  StaleLeaderError,
  assertNotStale,
  formatFencingToken,
  parseFencingToken,
  storedFencingToken,
  LEADER_ANNOTATION,
} from '../../src/runtime/fencing-token.js';

test('tokens round-trip through the annotation format, identities may contain slashes', () => {
  const token = { holderIdentity: 'flink-operator-7d9f/pod-1', leaseTransitions: 12 };
  assert.equal(formatFencingToken(token), 'flink-operator-7d9f/pod-1/12');
  assert.deepEqual(parseFencingToken(formatFencingToken(token)), token);
  assert.deepEqual(storedFencingToken({ annotations: { [LEADER_ANNOTATION]: 'a/0' } }), { holderIdentity: 'a', leaseTransitions: 0 });
  for (const bad of [undefined, '', 'noslash', '/3', 'a/', 'a/-1', 'a/01', 'a/x']) assert.equal(parseFencingToken(bad), undefined, String(bad));
});

test('a write is refused only when the stored token is from a newer term', () => {
  assert.doesNotThrow(() => assertNotStale(undefined, { holderIdentity: 'a', leaseTransitions: 0 }));
  assert.doesNotThrow(() => assertNotStale({ holderIdentity: 'a', leaseTransitions: 3 }, { holderIdentity: 'a', leaseTransitions: 3 }));
  assert.doesNotThrow(() => assertNotStale({ holderIdentity: 'a', leaseTransitions: 3 }, { holderIdentity: 'b', leaseTransitions: 4 }));
  assert.doesNotThrow(
    () => assertNotStale({ holderIdentity: 'old-pod', leaseTransitions: 0 }, { holderIdentity: 'new-pod', leaseTransitions: 0 }),
    'election off: a restarted pod takes over',
  );
  assert.throws(
    () => assertNotStale({ holderIdentity: 'b', leaseTransitions: 4 }, { holderIdentity: 'a', leaseTransitions: 3 }),
    (e: unknown) => e instanceof StaleLeaderError && /b\/4/.test(e.message) && /a\/3/.test(e.message),
  );
});
