/**
 * The periodic savepoint/checkpoint schedule: durations and Quartz cron expressions as the Apache
 * operator accepts them (SnapshotUtils.interpretAsInterval / interpretAsCron with log4j's
 * CronExpression; examples from SnapshotUtilsTest), and the validation messages built on it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { nextDueAt, periodicScheduleProblem, readPeriodicSchedule } from '../../src/api/periodic-snapshot-schedule.js';
import { validateFlinkDeployment } from '../../src/api/spec-validation.js';
import { flinkDeployment } from '../../src/api/flink-deployment-builder.js';

const at = (iso: string) => Date.parse(iso);

test('durations and Quartz cron expressions give the next due time; off when blank or 0', () => {
  assert.equal(readPeriodicSchedule(''), undefined);
  assert.equal(readPeriodicSchedule('0'), undefined);
  assert.equal(nextDueAt(readPeriodicSchedule('10m')!, 0), 600_000);
  const every10Minutes = readPeriodicSchedule('0 */10 * * * ?')!;
  assert.equal(nextDueAt(every10Minutes, at('2026-03-01T12:03:00Z')), at('2026-03-01T12:10:00Z'));
  // Quartz weekdays are 1-7 = SUN-SAT: 6#3 is the third Friday; L the last day of the month.
  assert.equal(nextDueAt(readPeriodicSchedule('0 15 10 ? * 6#3')!, at('2024-01-01T00:00:00Z')), at('2024-01-19T10:15:00Z'));
  assert.equal(nextDueAt(readPeriodicSchedule('0 15 10 L * ?')!, at('2024-02-01T00:00:00Z')), at('2024-02-29T10:15:00Z'));
  assert.equal(nextDueAt(readPeriodicSchedule('*/2 * * * * ?')!, at('2026-03-01T12:00:01Z')), at('2026-03-01T12:00:02Z'));
  // A valid expression with no time left (SnapshotUtilsTest: Feb 29, 1999) is never due.
  assert.equal(nextDueAt(readPeriodicSchedule('0 0 0 29 2 ? 1999')!, at('2026-03-01T00:00:00Z')), undefined);
});

test('what Quartz refuses is refused, naming both accepted forms', () => {
  assert.match(periodicScheduleProblem('INVALID_CRON')!, /not a Flink duration.*or a Quartz cron expression/);
  assert.match(periodicScheduleProblem('*/5 * * * *')!, /has 5 fields; a Quartz cron expression has 6 or 7/);
  assert.match(periodicScheduleProblem('0 0 12 * * MON')!, /give '\?' in day-of-month or day-of-week/);
  assert.match(periodicScheduleProblem('0 0 12 ? * ?')!, /not both/);
  assert.equal(periodicScheduleProblem('0 0 12 ? * MON-FRI 2030'), undefined);
});

test('validation: periodic checkpoints and a changed checkpointTriggerNonce need Flink 1.19; cron intervals are checked', () => {
  const build = (flinkVersion: 'v1_18' | 'v1_20', config: Record<string, string>, nonce?: number) =>
    flinkDeployment('orders')
      .withSpec({ flinkVersion, job: { upgradeMode: 'savepoint', ...(nonce !== undefined ? { checkpointTriggerNonce: nonce } : {}) } })
      .withFlinkConfiguration(config)
      .build();
  const fields = (d: ReturnType<typeof build>, previous?: ReturnType<typeof build>) =>
    validateFlinkDeployment(d, previous ? { spec: previous.spec } : undefined).map((e) => `${e.field}: ${e.message}`);
  const periodic = { 'kubernetes.operator.periodic.checkpoint.interval': '0 */10 * * * ?' };
  assert.deepEqual(fields(build('v1_20', periodic)), []);
  assert.match(fields(build('v1_18', periodic)).join('\n'), /periodic.checkpoint.interval.*needs Flink 1.19 or newer.*flinkVersion is v1_18/);
  assert.match(fields(build('v1_18', {}, 2), build('v1_18', {}, 1)).join('\n'), /spec.job.checkpointTriggerNonce: a manual checkpoint needs Flink 1.19/);
  assert.deepEqual(fields(build('v1_20', {}, 2), build('v1_20', {}, 1)), []);
  assert.match(
    fields(build('v1_20', { 'kubernetes.operator.periodic.savepoint.interval': '0 0 12 * * MON' })).join('\n'),
    /periodic.savepoint.interval.*Quartz/,
  );
});
