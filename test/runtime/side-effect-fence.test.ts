import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { FencingToken } from '../../src/runtime/fencing-token.js';
import { FencedOutError, fenceForPass, type LeaseTerm } from '../../src/runtime/side-effect-fence.js';

/** A lease term a test steers by hand, with the clock the fence reads. */
function term(token: FencingToken | undefined, validUntil: number): LeaseTerm & { token: FencingToken | undefined; validUntil: number } {
  const t = {
    token,
    validUntil,
    currentToken: () => t.token,
    leaseValidUntil: () => (t.token ? t.validUntil : 0),
  };
  return t;
}

const A1: FencingToken = { holderIdentity: 'op-a', leaseTransitions: 1 };

test('a pass in a valid term may act; its token is the one it started with', () => {
  const now = 10_000;
  const lease = term(A1, now + 5_000);
  const fence = fenceForPass({ term: lease, signal: new AbortController().signal, marginMs: 1_000, now: () => now })!;
  assert.deepEqual(fence.token, A1);
  fence.check('apply');
});

test('no fence at all while not leading', () => {
  assert.equal(fenceForPass({ term: term(undefined, 0), signal: new AbortController().signal, marginMs: 1_000 }), undefined);
});

test('a process paused past its lease is refused the moment it runs again, before any timer fired', () => {
  let now = 10_000;
  const lease = term(A1, now + 5_000);
  const fence = fenceForPass({ term: lease, signal: new AbortController().signal, marginMs: 1_000, now: () => now })!;
  now += 4_500; // SIGSTOP … SIGCONT: the elector still believes it leads, its watchdog has not run
  assert.throws(
    () => fence.check('replace Deployment default/orders'),
    (e: unknown) => e instanceof FencedOutError && /valid for 500 ms only/.test(e.message),
  );
});

test('aborted, lost, or superseded terms are refused', () => {
  const now = 10_000;
  const abort = new AbortController();
  const lease = term(A1, now + 5_000);
  const fence = fenceForPass({ term: lease, signal: abort.signal, marginMs: 1_000, now: () => now })!;
  lease.token = { holderIdentity: 'op-a', leaseTransitions: 3 };
  assert.throws(() => fence.check('stop job'), /term changed from op-a\/1 to op-a\/3/);
  lease.token = undefined;
  assert.throws(() => fence.check('stop job'), /no longer leads/);
  lease.token = A1;
  abort.abort();
  assert.throws(() => fence.check('stop job'), /aborted/);
});
