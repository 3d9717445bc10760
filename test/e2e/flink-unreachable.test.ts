/**
 * An operator that cannot reach Flink's REST API says so (issue 16; after 10 s of silence from an available JobManager, FLINK_UNREACHABLE_GRACE_MS): run with
 * `--flink-rest-access direct` outside the cluster network (the development cluster's
 * `<name>-rest.<ns>.svc` does not resolve here), every job used to look STABLE with
 * `Ready=True` "Job is running". Now: status.error names the cause and what to check, Ready is
 * Unknown (FlinkUnreachable), a Warning event and a metric count it; nothing is stopped or
 * resubmitted meanwhile (judged by the simulated Flink's lineage).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { flinkDeployment } from '../../src/api/flink-deployment-builder.js';
import { startHarness, type OperatorHarness } from './operator-harness.js';

let h: OperatorHarness;
before(async () => {
  h = await startHarness({ operator: { flinkRestAccess: 'direct' } });
});
after(async () => {
  await h?.stop();
});

test('with Flink unreachable the status says so: error, Ready Unknown, a Warning event, a metric; nothing is resubmitted', { timeout: 60_000 }, async () => {
  await h.create(flinkDeployment('blind').build());
  const d = await h.waitFor('blind', (x) => (x.status?.error ?? '').includes("Flink's REST API does not answer"), 'the unreachable error', 20_000);
  assert.match(d.status!.error!, /--flink-rest-access apiserver-proxy \(or auto\)/, 'says what to check');
  const ready = d.status?.conditions?.find((c) => c.type === 'Ready');
  assert.equal(ready?.status, 'Unknown');
  assert.equal(ready?.reason, 'FlinkUnreachable');
  assert.notEqual(d.status?.lifecycleState, 'STABLE', 'never STABLE while the job cannot be seen');
  assert.equal(d.status?.jobStatus?.state, 'RECONCILING');
  const events = await h.events('blind');
  assert.ok(
    events.some((e) => e.type === 'Warning' && e.reason === 'FlinkUnreachable'),
    `a FlinkUnreachable event (${events.map((e) => e.reason).join(', ')})`,
  );
  const metrics = await (await fetch(`http://127.0.0.1:${h.manager!.httpPort()}/metrics`)).text();
  const count = Number(/^flink_operator_flink_rest_unreachable_total (\d+)/m.exec(metrics)?.[1] ?? 0);
  assert.ok(count >= 1, `flink_operator_flink_rest_unreachable_total counts it (${count})`);
  await new Promise((r) => setTimeout(r, 1_000));
  const lineage = h.world.simulation.lineage('default', 'blind');
  assert.equal(lineage.submissions.length, 1, 'the job was submitted once and is left alone');
  assert.equal(lineage.savepoints.length, 0);
  assert.equal(lineage.cancellations.length, 0);
});
