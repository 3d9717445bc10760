import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Command } from 'commander';
import { OperatorConfigError, parseDurationMs, resolveOperatorConfig } from '../../src/runtime/operator-config.js';
import { knobsMarkdownTable, OPERATOR_KNOBS } from '../../src/runtime/operator-knobs.js';
import { resolveFlinkRestAccess } from '../../src/flink/flink-rest-access.js';
import { configFromCommandLine } from '../../src/cli/run-command.js';
import { registerRunCommand } from '../../src/cli/run-command.js';

test('defaults match the documented ones', () => {
  const c = resolveOperatorConfig({ env: { POD_NAME: 'op-0', POD_NAMESPACE: 'flink-system' } });
  assert.deepEqual(c.namespaces, []);
  assert.equal(c.httpPort, 8085);
  assert.equal(c.reconcileIntervalMs, 60_000);
  assert.equal(c.progressCheckIntervalMs, 10_000);
  assert.equal(c.leaderElect, true, 'leader election is on by default (a second instance never acts)');
  assert.equal(c.leaseDurationMs, 15_000);
  assert.equal(c.renewDeadlineMs, 10_000);
  assert.equal(c.retryPeriodMs, 2_000);
  assert.equal(c.retryBaseDelayMs, 5);
  assert.equal(c.logFormat, 'json');
  assert.equal(c.flinkRestAccess, 'auto', 'auto: direct in a pod, the API server proxy outside one');
  assert.equal(c.identity, 'op-0');
  assert.equal(c.leaseNamespace, 'flink-system');
});

test('flag beats env beats config file beats default', () => {
  const file = { name: 'op.yaml', text: 'httpPort: 9000\nreconcileIntervalMs: 30s\nnamespaces: [a, b]\nlogFormat: pretty\nparallelism: 3\n' };
  const fromFile = resolveOperatorConfig({ file });
  assert.equal(fromFile.httpPort, 9000);
  assert.equal(fromFile.reconcileIntervalMs, 30_000);
  assert.deepEqual(fromFile.namespaces, ['a', 'b']);
  assert.equal(fromFile.logFormat, 'pretty');
  const fromEnv = resolveOperatorConfig({
    file,
    env: { FLINK_OPERATOR_HTTP_PORT: '9100', FLINK_OPERATOR_NAMESPACES: 'x, y', FLINK_OPERATOR_LEADER_ELECT: 'false' },
  });
  assert.equal(fromEnv.httpPort, 9100);
  assert.deepEqual(fromEnv.namespaces, ['x', 'y']);
  assert.equal(fromEnv.leaderElect, false);
  assert.equal(fromEnv.parallelism, 3, 'file value kept where env is silent');
  const fromFlag = resolveOperatorConfig({ file, env: { FLINK_OPERATOR_HTTP_PORT: '9100' }, flags: { httpPort: '9200', namespaces: ['z'] } });
  assert.equal(fromFlag.httpPort, 9200);
  assert.deepEqual(fromFlag.namespaces, ['z']);
});

test('bad values are rejected with the knob and source named', () => {
  assert.throws(() => resolveOperatorConfig({ flags: { httpPort: 'eighty' } }), /httpPort \(--http-port\)/);
  assert.throws(() => resolveOperatorConfig({ env: { FLINK_OPERATOR_LOG_FORMAT: 'xml' } }), /expected one of json, pretty/);
  assert.throws(() => resolveOperatorConfig({ file: { name: 'f.yaml', text: 'reconcileInterval: 5s' } }), /unknown setting "reconcileInterval"/);
  assert.throws(() => resolveOperatorConfig({ flags: { renewDeadlineMs: '20s' } }), OperatorConfigError, 'renew deadline must be below the lease duration');
  assert.throws(() => resolveOperatorConfig({ flags: { parallelism: '0' } }), /parallelism/);
  // The operator fetches session-job jars itself: a scheme it cannot fetch is refused at start, not at the first submission.
  assert.throws(
    () => resolveOperatorConfig({ env: { FLINK_OPERATOR_SESSION_JOB_JAR_SCHEMES: 'https,s3' } }),
    /sessionJobJarSchemes.*expected values among http, https, file, got s3/,
  );
  assert.deepEqual(resolveOperatorConfig({ env: { FLINK_OPERATOR_SESSION_JOB_JAR_SCHEMES: 'http,https' } }).sessionJobJarSchemes, ['http', 'https']);
});

test('durations accept units or milliseconds', () => {
  assert.equal(parseDurationMs('500ms'), 500);
  assert.equal(parseDurationMs('10s'), 10_000);
  assert.equal(parseDurationMs('1.5m'), 90_000);
  assert.equal(parseDurationMs('2h'), 7_200_000);
  assert.equal(parseDurationMs('250'), 250);
  assert.equal(parseDurationMs(42), 42);
  assert.throws(() => parseDurationMs('10 minutes'));
});

test('the run command exposes every knob as a flag; --namespace repeats', async () => {
  const program = new Command().exitOverride();
  let captured: Record<string, unknown> | undefined;
  registerRunCommand(program, { flinkDeployments: () => ({ reconcile: async () => ({}) }) });
  const run = program.commands.find((c) => c.name() === 'run')!;
  for (const knob of OPERATOR_KNOBS)
    assert.ok(
      run.options.some((o) => o.long === `--${knob.flag}`),
      `--${knob.flag}`,
    );
  run.action((opts: Record<string, unknown>) => {
    captured = opts;
  });
  await program.parseAsync([
    'node',
    'x',
    'run',
    '--namespace',
    'a',
    '--namespace',
    'b,c',
    '--http-port',
    '0',
    '--leader-elect',
    '--log-format',
    'pretty',
    '--lease-duration',
    '3s',
    '--renew-deadline',
    '2s',
    '--retry-period',
    '500ms',
  ]);
  const config = configFromCommandLine(captured!, {});
  assert.deepEqual(config.namespaces, ['a', 'b', 'c']);
  assert.equal(config.httpPort, 0);
  assert.equal(config.leaderElect, true);
  assert.equal(config.logFormat, 'pretty');
  assert.equal(config.leaseDurationMs, 3000);
});

test('the README table lists every knob, exactly as the code defines it', () => {
  const table = knobsMarkdownTable();
  for (const knob of OPERATOR_KNOBS) assert.ok(table.includes(`\`--${knob.flag}\``) && table.includes(knob.env));
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  assert.ok(readme.includes(table.trim()), 'README.md "Settings" is stale: paste knobsMarkdownTable() from src/runtime/operator-knobs.ts');
});

test('--flink-rest-access auto is direct in a pod (KUBERNETES_SERVICE_HOST and a mounted token), the service proxy outside one', () => {
  assert.equal(
    resolveFlinkRestAccess('auto', { KUBERNETES_SERVICE_HOST: '10.96.0.1' }, () => true),
    'direct',
  );
  assert.equal(
    resolveFlinkRestAccess('auto', { KUBERNETES_SERVICE_HOST: '10.96.0.1' }, () => false),
    'apiserver-proxy',
  );
  assert.equal(
    resolveFlinkRestAccess('auto', {}, () => true),
    'apiserver-proxy',
  );
  assert.equal(
    resolveFlinkRestAccess('direct', {}, () => false),
    'direct',
    'an explicit mode is kept',
  );
  assert.equal(
    resolveFlinkRestAccess('apiserver-proxy', { KUBERNETES_SERVICE_HOST: '10.96.0.1' }, () => true),
    'apiserver-proxy',
  );
});
