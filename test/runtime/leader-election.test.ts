import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CoordinationV1Api, V1Lease } from '@kubernetes/client-node';
import { LeaderElector } from '../../src/runtime/leader-election.js';

/** An in-memory Lease endpoint with the API server's optimistic concurrency; records calls. */
class FakeLeaseApi {
  lease: V1Lease | undefined;
  rv = 1;
  readonly calls: string[] = [];
  failRenewalsOf = new Set<string>();
  async readNamespacedLease(p: { name: string; namespace: string }): Promise<V1Lease> {
    this.calls.push(`get ${p.namespace}/${p.name}`);
    if (!this.lease) throw Object.assign(new Error('not found'), { code: 404 });
    return structuredClone(this.lease);
  }
  async createNamespacedLease(p: { namespace: string; body: V1Lease }): Promise<V1Lease> {
    this.calls.push(`create ${p.body.spec?.holderIdentity}`);
    if (this.lease) throw Object.assign(new Error('exists'), { code: 409 });
    this.lease = { ...structuredClone(p.body), metadata: { ...p.body.metadata, resourceVersion: String(++this.rv) } };
    return structuredClone(this.lease);
  }
  async replaceNamespacedLease(p: { name: string; namespace: string; body: V1Lease }): Promise<V1Lease> {
    const holder = p.body.spec?.holderIdentity ?? '';
    this.calls.push(`update ${holder}`);
    if (this.failRenewalsOf.has(holder)) throw Object.assign(new Error('server unavailable'), { code: 503 });
    if (p.body.metadata?.resourceVersion !== this.lease?.metadata?.resourceVersion) throw Object.assign(new Error('conflict'), { code: 409 });
    this.lease = { ...structuredClone(p.body), metadata: { ...p.body.metadata, resourceVersion: String(++this.rv) } };
    return structuredClone(this.lease);
  }
  asApi(): CoordinationV1Api {
    return this as unknown as CoordinationV1Api;
  }
}

function elector(api: FakeLeaseApi, identity: string) {
  const e = new LeaderElector({
    api: api.asApi(),
    namespace: 'ns',
    leaseName: 'lock',
    identity,
    leaseDurationMs: 1000,
    renewDeadlineMs: 600,
    retryPeriodMs: 100,
  });
  const log: Array<{ what: string; at: number; transitions?: number }> = [];
  e.onStartedLeading((t) => log.push({ what: 'started', at: Date.now(), transitions: t.leaseTransitions }));
  e.onStoppedLeading(() => log.push({ what: 'stopped', at: Date.now() }));
  return { e, log };
}

async function waitFor(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(10);
  }
}

test('one of two candidates leads; on release the other takes over at once with a higher token', async () => {
  const api = new FakeLeaseApi();
  const a = elector(api, 'a');
  const b = elector(api, 'b');
  a.e.start();
  await waitFor(() => a.e.isLeader(), 1000);
  b.e.start();
  await sleep(400);
  assert.equal(b.e.isLeader(), false, 'the standby respects a live lease');
  assert.deepEqual(a.e.currentToken(), { holderIdentity: 'a', leaseTransitions: 0 });
  assert.equal(b.e.currentToken(), undefined);
  const releasedAt = Date.now();
  await a.e.stop();
  assert.deepEqual(
    a.log.map((l) => l.what),
    ['started', 'stopped'],
  );
  assert.equal(api.lease?.spec?.holderIdentity, '', 'released');
  await waitFor(() => b.e.isLeader(), 1000);
  assert.ok(Date.now() - releasedAt < 500, 'took over without waiting for the lease duration');
  assert.deepEqual(b.e.currentToken(), { holderIdentity: 'b', leaseTransitions: 1 });
  await b.e.stop();
});

test('a leader that cannot renew stops leading before the standby may take over', async () => {
  const api = new FakeLeaseApi();
  const a = elector(api, 'a');
  const b = elector(api, 'b');
  a.e.start();
  await waitFor(() => a.e.isLeader(), 1000);
  b.e.start();
  await sleep(150);
  const cutAt = Date.now();
  api.failRenewalsOf.add('a'); // partitioned: a's renewals fail from now on
  await waitFor(() => b.e.isLeader(), 3000);
  const lost = a.log.find((l) => l.what === 'stopped');
  const won = b.log.find((l) => l.what === 'started');
  assert.ok(lost, 'a noticed it lost leadership');
  assert.ok(lost.at - cutAt <= 600 + 150, `a stopped within the renew deadline: ${lost.at - cutAt} ms`);
  assert.ok(won!.at > lost.at, 'never two leaders at once');
  assert.ok(won!.at - cutAt >= 800, `b waited for the lease to expire: ${won!.at - cutAt} ms`);
  assert.equal(won!.transitions, 1);
  assert.equal(a.e.isLeader(), false);
  await a.e.stop();
  await b.e.stop();
});

test('a lease held by another instance is not taken while it is renewed', async () => {
  const api = new FakeLeaseApi();
  const a = elector(api, 'a');
  const b = elector(api, 'b');
  a.e.start();
  b.e.start();
  await sleep(1500); // longer than the lease duration: renewals keep it
  assert.equal([a.e.isLeader(), b.e.isLeader()].filter(Boolean).length, 1);
  const leader = a.e.isLeader() ? a : b;
  assert.equal(leader.log.filter((l) => l.what === 'started').length, 1, 'no flapping');
  assert.equal(api.lease?.spec?.leaseTransitions, 0);
  await a.e.stop();
  await b.e.stop();
});
