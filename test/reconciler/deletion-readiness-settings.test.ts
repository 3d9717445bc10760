/**
 * Reading `kubernetes.operator.resource.deletion.propagation`, `observer.rest-ready.delay` and `checkpoint.trigger.grace-period` from a
 * resource's flinkConfiguration. Apache: RESOURCE_DELETION_PROPAGATION is an enum option, default
 * Foreground, and Flink reads enum values case-insensitively (ConfigurationUtils.convertToEnum);
 * OPERATOR_OBSERVER_REST_READY_DELAY is a duration, default 10 s, which this operator does not
 * take (it is 0 here: READY already needs Flink's REST API to answer; design/ has why).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deploymentOperatorSettings } from '../../src/reconciler/deployment-operator-settings.js';

const settingsOf = (flinkConfiguration: Record<string, string>) => deploymentOperatorSettings({ flinkConfiguration });

const propagation: Array<[string | undefined, string]> = [
  [undefined, 'Foreground'],
  ['Foreground', 'Foreground'],
  ['Background', 'Background'],
  ['orphan', 'Orphan'],
  [' BACKGROUND ', 'Background'],
  ['Cascade', 'Foreground'],
];
for (const [value, expected] of propagation) {
  test(`resource.deletion.propagation ${JSON.stringify(value)} → ${expected}`, () => {
    const config: Record<string, string> = value === undefined ? {} : { 'kubernetes.operator.resource.deletion.propagation': value };
    assert.equal(settingsOf(config).deletionPropagation, expected);
  });
}

const readyDelay: Array<[string | undefined, number]> = [
  [undefined, 0],
  ['10 s', 10_000],
  ['1 min', 60_000],
  ['0', 0],
  ['soon', 0],
];
for (const [value, expected] of readyDelay) {
  test(`observer.rest-ready.delay ${JSON.stringify(value)} → ${expected} ms`, () => {
    const config: Record<string, string> = value === undefined ? {} : { 'kubernetes.operator.observer.rest-ready.delay': value };
    assert.equal(settingsOf(config).restReadyDelayMs, expected);
  });
}

// Apache's CHECKPOINT_TRIGGER_GRACE_PERIOD: its own key, default 1 min, beside the savepoints' one.
test('checkpoint.trigger.grace-period governs checkpoints, savepoint.trigger.grace-period savepoints', () => {
  const both = settingsOf({ 'kubernetes.operator.checkpoint.trigger.grace-period': '5 min', 'kubernetes.operator.savepoint.trigger.grace-period': '2 min' });
  assert.equal(both.checkpointTriggerGracePeriodMs, 300_000);
  assert.equal(both.triggerGracePeriodMs, 120_000);
  assert.equal(settingsOf({}).checkpointTriggerGracePeriodMs, 60_000);
});
