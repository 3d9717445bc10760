/**
 * End to end: an admin edits a running deployment's state ConfigMap with the real kubectl (no
 * admission policy installed, or a break-glass user), and the operator says who changed what, once.
 *
 * `kubectl patch` writes with the field manager `kubectl-patch` (its --field-manager default,
 * kubernetes/kubectl pkg/cmd/patch/patch.go); the API server records it in managedFields
 * (https://kubernetes.io/docs/reference/using-api/server-side-apply/#field-management).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { CoreV1Event } from '@kubernetes/client-node';
import { flinkDeployment } from '../../src/api/flink-deployment-builder.js';
import type { FlinkDeploymentV1 } from '../../src/api/flink-deployment.js';
import { STATE_CHANGED_OUTSIDE_OPERATOR_REASON } from '../../src/state/foreign-state-write.js';
import { STATE_DIGEST_ANNOTATION } from '../../src/state/state-configmap-codec.js';
import { KubectlRunner } from '../integration/devcluster/kubectl-runner.js';
import { startHarness, type OperatorHarness } from './operator-harness.js';

let h: OperatorHarness;
let kubectl: KubectlRunner;
before(async () => {
  h = await startHarness();
  kubectl = new KubectlRunner(h.world.cluster.kubeconfigYaml());
});
after(async () => {
  kubectl?.cleanup();
  await h?.stop();
});

const TIMEOUT = 30_000;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const stable = (generation: number) => (d: FlinkDeploymentV1) =>
  d.status?.lifecycleState === 'STABLE' && d.status?.observedGeneration === generation && d.status?.jobStatus?.state === 'RUNNING';

/** The StateChangedOutsideOperator events of `name`, and how many times they were recorded in all (an Event's count aggregates repeats). */
async function foreignWriteEvents(name: string): Promise<{ events: CoreV1Event[]; total: number }> {
  const events = (await h.events(name)).filter((e) => e.reason === STATE_CHANGED_OUTSIDE_OPERATOR_REASON);
  return { events, total: events.reduce((sum, e) => sum + (e.count ?? 1), 0) };
}

test('a kubectl patch of the state ConfigMap: one Warning naming kubectl-patch and the key; own writes and a restart add none', async () => {
  const name = 'edited-state';
  await h.create(flinkDeployment(name).build());
  await h.waitFor(name, stable(1), 'running', TIMEOUT);
  const before = await h.stateConfigMap(name);
  assert.ok(before?.metadata?.annotations?.[STATE_DIGEST_ANNOTATION], 'the operator records the digest of what it wrote');
  assert.equal((await foreignWriteEvents(name)).total, 0, 'the operator’s own writes are not reported');

  const edited = '2026-01-01T00:00:00Z';
  await kubectl.ok(['patch', 'configmap', `${name}-operator-state`, '--type', 'merge', '-p', JSON.stringify({ data: { reconciliationTimestamp: edited } })]);

  const { events } = await h.waitUntil(async () => {
    const found = await foreignWriteEvents(name);
    return found.total > 0 ? found : undefined;
  }, 'the StateChangedOutsideOperator event');
  const event = events[0];
  assert.equal(event.type, 'Warning');
  assert.equal(event.involvedObject.kind, 'FlinkDeployment');
  assert.match(event.message ?? '', /field manager kubectl-patch/);
  assert.match(event.message ?? '', new RegExp(`reconciliationTimestamp: "[^"]+" → "${edited}"`), event.message);
  // the operator proceeds with the edited state and records a fresh digest over it
  await h.waitUntil(async () => {
    const cm = await h.stateConfigMap(name);
    return (
      cm?.data?.reconciliationTimestamp === edited &&
      cm.metadata?.annotations?.[STATE_DIGEST_ANNOTATION] !== before.metadata?.annotations?.[STATE_DIGEST_ANNOTATION]
    );
  }, 'the acknowledged digest');

  // the operator's own later writes (a spec change: an upgrade through several state writes) are not reported
  const current = await h.get(name);
  await h.patch(name, { spec: { job: { parallelism: (current?.spec?.job?.parallelism ?? 1) + 1 } } });
  await h.waitFor(name, stable(2), 'upgraded', TIMEOUT);
  assert.equal((await foreignWriteEvents(name)).total, 1, 'once per foreign change');

  // a restarted operator reads the acknowledged content: not reported again
  await h.stopOperator();
  await h.startOperator();
  await h.waitFor(name, (d) => stable(2)(d), 'running after the restart', TIMEOUT);
  await sleep(1_000);
  assert.equal((await foreignWriteEvents(name)).total, 1, 'not re-reported after a restart');
});
