/**
 * The typo check of spec.flinkConfiguration (issue 21, "Typos in flinkConfiguration"): which keys
 * get a "did you mean", and which real keys must not. Flink's keys are from its configuration
 * reference (docs/layouts/shortcodes/generated/*.html in apache/flink); Flink ignores a key it
 * does not know, which is why a typo is silent there.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { flattenFlinkConfiguration } from '../../src/api/flink-configuration.js';
import { FlinkConfigurationTypoMemo, flinkConfigurationTypoNote, flinkConfigurationTypos, maxTypoDistance } from '../../src/api/flink-configuration-typos.js';
import { FLINK_OPTION_KEYS } from '../../src/api/flink-option-names.js';

const suggestionFor = (key: string) => flinkConfigurationTypos({ [key]: 'x' })[0]?.suggestion;

/** Typos people make, and the key they meant (true positives). */
const TYPOS: ReadonlyArray<readonly [string, string]> = [
  ['taskmanager.numberOfTaskSlot', 'taskmanager.numberOfTaskSlots'],
  ['taskmanager.numberoftaskslots', 'taskmanager.numberOfTaskSlots'], // case only: Flink's keys are case-sensitive
  ['state.savepoint.dir', 'state.savepoints.dir'],
  ['state.checkpoint.dir', 'state.checkpoints.dir'],
  ['high-availability.storagedir', 'high-availability.storageDir'],
  ['high-availability.typ', 'high-availability.type'],
  ['execution.checkpointing.intervall', 'execution.checkpointing.interval'],
  ['execution.checkpointing.savepoint.dir', 'execution.checkpointing.savepoint-dir'],
  ['jobmanager.memory.proccess.size', 'jobmanager.memory.process.size'],
  ['taskmanager.memory.process_size', 'taskmanager.memory.process.size'],
  ['restart-strategy.fixed-delay.attemps', 'restart-strategy.fixed-delay.attempts'],
  ['pipeline.max-paralelism', 'pipeline.max-parallelism'],
  ['parallelism.defualt', 'parallelism.default'],
  ['kubernetes.rest-service.exposed-type', 'kubernetes.rest-service.exposed.type'],
  ['metrics.reporter', 'metrics.reporters'],
  ['kubernetes.operater.periodic.savepoint.interval', 'kubernetes.operator.periodic.savepoint.interval'],
];

/** Keys that are right, or not ours to judge (false positives the thresholds must avoid). */
const NOT_TYPOS: readonly string[] = [
  // user-chosen segments and open families
  's3.access-key',
  's3.secret-key',
  's3.endpoint',
  's3.path.style.access',
  'fs.s3a.access.key',
  'fs.azure.account.key.acct.blob.core.windows.net',
  'metrics.reporter.prom.factory.class',
  'metrics.reporter.prom.port',
  'containerized.master.env.AWS_REGION',
  'containerized.taskmanager.env.AWS_REGION',
  'kubernetes.jobmanager.annotations.team', // nested `annotations: {team: a}` flattened
  'kubernetes.rest-service.annotations.prometheus.io/scrape',
  'pipeline.jobvertex-parallelism-overrides.bc764cd8ddf7a0cff126f51c16239658',
  'pipeline.global-job-parameters.env',
  'env.java.opts.all',
  'external-resource.gpu.amount',
  'state.backend.rocksdb.compaction.style',
  'job.autoscaler.enabled',
  'security.delegation.token.provider.hadoopfs.enabled',
  // real keys next to other real keys
  'metrics.scope.jm',
  'metrics.scope.tm',
  'taskmanager.memory.network.min',
  'taskmanager.memory.network.max',
  'rest.port',
  'web.port',
  'state.backend',
  'state.backend.type',
  'high-availability',
  'execution.savepoint.path',
  'execution.state-recovery.path',
  'akka.ask.timeout',
  'pekko.ask.timeout',
  // the operator's keys: judged by the UnsupportedOption check, not here
  'kubernetes.operator.periodic.savepoint.interval',
  'kubernetes.operator.periodic.savepoint.intervall',
  // a user's own job parameters and the development cluster's simulator keys
  'app.input-topic',
  'my.custom.setting',
  'simulator.job.fail-after',
];

test('each typo of the table gets the key that was meant', () => {
  for (const [typo, meant] of TYPOS) assert.equal(suggestionFor(typo), meant, typo);
});

test('no key of the false-positive table is flagged', () => {
  for (const key of NOT_TYPOS) assert.equal(suggestionFor(key), undefined, key);
});

test('no known Flink key is flagged', () => {
  assert.deepEqual(flinkConfigurationTypos(Object.fromEntries(FLINK_OPTION_KEYS.map((k) => [k, 'x']))), []);
});

test("the nested form of issue 21's typo flattens to the same key, with the message the user reads", () => {
  const typos = flinkConfigurationTypos(flattenFlinkConfiguration({ taskmanager: { numberOfTaskSlot: 2 }, 'state.savepoints.dir': 's3://b/sp' }));
  assert.deepEqual(typos, [
    {
      key: 'taskmanager.numberOfTaskSlot',
      suggestion: 'taskmanager.numberOfTaskSlots',
      message: 'taskmanager.numberOfTaskSlot is not a Flink option; did you mean taskmanager.numberOfTaskSlots?',
    },
  ]);
  assert.match(flinkConfigurationTypoNote(typos) ?? '', /^Warning: spec\.flinkConfiguration: taskmanager\.numberOfTaskSlot is not a Flink option/);
  assert.equal(flinkConfigurationTypoNote([]), undefined);
});

test('a suggestion of an operator key says so', () => {
  const [typo] = flinkConfigurationTypos({ 'kubernetes.operater.periodic.savepoint.interval': '1h' });
  assert.equal(
    typo?.message,
    'kubernetes.operater.periodic.savepoint.interval is not a Flink or operator option; did you mean kubernetes.operator.periodic.savepoint.interval?',
  );
});

test('the threshold grows with the key: one edit for short keys, three for long ones', () => {
  assert.equal(maxTypoDistance(9), 1);
  assert.equal(maxTypoDistance(18), 2);
  assert.equal(maxTypoDistance(40), 3);
  // `rest.prot` is two edits from rest.port: too far for a 9-character key (it might be anything).
  assert.equal(suggestionFor('rest.prot'), undefined);
  assert.equal(suggestionFor('rest.pork'), 'rest.port');
});

test('the memo measures a configuration once per generation and again for a new one', () => {
  const memo = new FlinkConfigurationTypoMemo();
  const first = memo.typos('uid-1', 1, { 'taskmanager.numberOfTaskSlot': 2 });
  assert.equal(first.length, 1);
  assert.equal(memo.typos('uid-1', 1, { 'taskmanager.numberOfTaskSlots': 2 }), first, 'same generation: the cached answer');
  assert.deepEqual(memo.typos('uid-1', 2, { 'taskmanager.numberOfTaskSlots': 2 }), []);
  memo.forget('uid-1');
  assert.equal(memo.typos('uid-1', 2, { 'taskmanager.numberOfTaskSlot': 2 }).length, 1);
});
