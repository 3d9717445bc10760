/**
 * The operator's default-configuration file (the Apache operator's flink-operator-config ConfigMap:
 * config.yaml, else flink-conf.yaml, in its configuration directory): its Apache-named operator
 * settings, its defaults for resources, and reloading it when it changes. Apache reads the file
 * with Flink's GlobalConfiguration and re-reads it every
 * kubernetes.operator.dynamic.config.check.interval (FlinkConfigManager.ConfigUpdater).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { followWatchedNamespaces, startupConfiguration } from '../../src/cli/run-command.js';
import { DefaultConfigurationSource, readDefaultConfigurationFile } from '../../src/runtime/default-configuration-source.js';
import { OperatorConfigError, resolveOperatorConfig } from '../../src/runtime/operator-config.js';

function confDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'flink-conf-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

/** A log that keeps what it was told, by level. */
function recordingLog() {
  const lines: Array<{ level: string; message: string }> = [];
  const at = (level: string) => (_fields: object, message: string) => void lines.push({ level, message });
  return { lines, log: { info: at('info'), warn: at('warn'), error: at('error') } };
}

test('config.yaml (nested YAML, as the Helm chart writes it) is read; flink-conf.yaml only without it', () => {
  const dir = confDir({
    'config.yaml': 'state:\n  savepoints.dir: s3://b/sp\nkubernetes.operator.reconcile.interval: 15 s\n',
    'flink-conf.yaml': 'state.savepoints.dir: s3://legacy/sp\n',
  });
  try {
    assert.deepEqual(readDefaultConfigurationFile(dir)?.flat, { 'state.savepoints.dir': 's3://b/sp', 'kubernetes.operator.reconcile.interval': '15 s' });
    rmSync(join(dir, 'config.yaml'));
    const legacy = readDefaultConfigurationFile(dir);
    assert.equal(legacy?.name, join(dir, 'flink-conf.yaml'));
    assert.deepEqual(legacy?.flat, { 'state.savepoints.dir': 's3://legacy/sp' });
  } finally {
    rmSync(dir, { recursive: true });
  }
});

test("Apache-named operator settings in the default configuration set the operator's knobs, below flags, env and --config", () => {
  const dir = confDir({
    'config.yaml': [
      'kubernetes.operator.reconcile.interval: 15 s',
      'kubernetes.operator.observer.progress-check.interval: 2 s',
      'kubernetes.operator.reconcile.parallelism: 7',
      'kubernetes.operator.user.artifacts.disallow-restricted-hosts: "false"',
      'state.savepoints.dir: s3://b/sp',
    ].join('\n'),
  });
  try {
    const { config, defaults } = startupConfiguration({ flinkConfDir: dir }, {});
    assert.equal(config.reconcileIntervalMs, 15_000, "Flink's duration syntax");
    assert.equal(config.progressCheckIntervalMs, 2_000);
    assert.equal(config.parallelism, 7);
    assert.equal(config.sessionJobJarRestrictedHosts, true, 'disallow … false = restricted hosts allowed');
    assert.equal(defaults?.flat['state.savepoints.dir'], 's3://b/sp');
    const overridden = startupConfiguration({ flinkConfDir: dir, parallelism: '3' }, { FLINK_OPERATOR_RECONCILE_INTERVAL: '20s' }).config;
    assert.equal(overridden.parallelism, 3, 'a flag wins');
    assert.equal(overridden.reconcileIntervalMs, 20_000, 'the environment wins');
    const viaEnv = startupConfiguration({}, { FLINK_CONF_DIR: dir }).config;
    assert.equal(viaEnv.flinkConfDir, dir, "FLINK_CONF_DIR names the directory, as for Apache's operator");
    assert.equal(viaEnv.parallelism, 7);
  } finally {
    rmSync(dir, { recursive: true });
  }
});

test('--config accepts the Apache names of its settings; a resource default there is refused with where it belongs', () => {
  const config = resolveOperatorConfig({
    file: { name: 'op.yaml', text: 'kubernetes.operator.reconcile.interval: 1 min\nkubernetes.operator.reconcile.parallelism: 4\n' },
  });
  assert.equal(config.reconcileIntervalMs, 60_000);
  assert.equal(config.parallelism, 4);
  assert.throws(
    () => resolveOperatorConfig({ file: { name: 'op.yaml', text: 'kubernetes.operator.periodic.savepoint.interval: 1 h\n' } }),
    (error: unknown) =>
      error instanceof OperatorConfigError &&
      /unknown setting "kubernetes.operator.periodic.savepoint.interval"; Apache operator keys that configure resources \(and Flink keys\) belong in the default configuration/.test(
        error.message,
      ),
  );
  assert.throws(
    () => resolveOperatorConfig({ file: { name: 'op.yaml', text: 'kubernetes.operator.reconcile.interval: soon\n' } }),
    /reconcileIntervalMs \(op\.yaml\): invalid duration "soon"/,
  );
});

test('an explicitly named directory without a file is a startup error that says what to do; the default one missing means no defaults', () => {
  const dir = confDir({});
  try {
    const startup = startupConfiguration({ flinkConfDir: dir }, {});
    assert.throws(
      () =>
        new DefaultConfigurationSource({
          dir,
          explicit: startup.defaultsDirExplicit,
          initial: startup.defaults,
          dynamic: false,
          checkIntervalMs: 1000,
          log: recordingLog().log,
        }),
      /no config.yaml or flink-conf.yaml there; create one \(it may be empty\) or leave --flink-conf-dir \/ FLINK_CONF_DIR unset/,
    );
    const quiet = new DefaultConfigurationSource({
      dir: join(dir, 'absent'),
      explicit: false,
      initial: undefined,
      dynamic: false,
      checkIntervalMs: 1000,
      log: recordingLog().log,
    });
    assert.ok(quiet.current().isEmpty);
  } finally {
    rmSync(dir, { recursive: true });
  }
});

test('a changed file replaces the defaults and tells the listeners; a broken one keeps the last good defaults', () => {
  const dir = confDir({ 'config.yaml': 'state.savepoints.dir: s3://one/sp\nkubernetes.operator.not.a.key: x\n' });
  const { lines, log } = recordingLog();
  try {
    const source = new DefaultConfigurationSource({
      dir,
      explicit: true,
      initial: readDefaultConfigurationFile(dir),
      dynamic: true,
      checkIntervalMs: 60_000,
      log,
    });
    assert.equal(source.current().for('ns', 'v1_20')['state.savepoints.dir'], 's3://one/sp');
    assert.equal(
      lines.filter((l) => l.level === 'warn' && l.message.includes('kubernetes.operator.not.a.key')).length,
      1,
      'an unknown key is reported at start',
    );
    const changes: string[] = [];
    source.onChange((next) => changes.push(next.for('ns', 'v1_20')['state.savepoints.dir'] ?? '(none)'));

    assert.equal(source.check(), false, 'an unchanged file changes nothing');
    writeFileSync(
      join(dir, 'config.yaml'),
      'state.savepoints.dir: s3://two/sp\nkubernetes.operator.not.a.key: x\nkubernetes.operator.reconcile.interval: 5 s\n',
    );
    assert.equal(source.check(), true);
    assert.deepEqual(changes, ['s3://two/sp']);
    assert.equal(lines.filter((l) => l.message.includes('kubernetes.operator.not.a.key')).length, 1, 'reported once, not at every reload');
    assert.ok(lines.some((l) => l.level === 'warn' && l.message.includes('take effect on restart: kubernetes.operator.reconcile.interval')));

    writeFileSync(join(dir, 'config.yaml'), 'state: [unclosed');
    assert.equal(source.check(), false);
    assert.equal(source.current().for('ns', 'v1_20')['state.savepoints.dir'], 's3://two/sp', 'the last good defaults stay');
    assert.ok(lines.some((l) => l.level === 'error' && l.message.includes('the last good one stays')));
  } finally {
    rmSync(dir, { recursive: true });
  }
});

test('with dynamic namespaces, a changed kubernetes.operator.watched.namespaces moves the watch, unless a flag sets the namespaces', () => {
  const dir = confDir({ 'config.yaml': 'kubernetes.operator.dynamic.namespaces.enabled: "true"\nkubernetes.operator.watched.namespaces: team-a\n' });
  try {
    for (const [flags, expected] of [
      [{ flinkConfDir: dir }, [['team-a', 'team-b']]],
      [{ flinkConfDir: dir, namespace: ['pinned'] }, []],
    ] as const) {
      const startup = startupConfiguration(flags, {});
      assert.equal(startup.config.dynamicNamespaces, true);
      const source = new DefaultConfigurationSource({
        dir,
        explicit: true,
        initial: startup.defaults,
        dynamic: true,
        checkIntervalMs: 60_000,
        log: recordingLog().log,
      });
      const calls: string[][] = [];
      followWatchedNamespaces(
        { setWatchedNamespaces: (ns) => Promise.resolve(void calls.push([...ns])) },
        source,
        startup.config,
        startup.resolveWith!,
        recordingLog().log,
      );
      writeFileSync(
        join(dir, 'config.yaml'),
        'kubernetes.operator.dynamic.namespaces.enabled: "true"\nkubernetes.operator.watched.namespaces: team-b,team-a\n',
      );
      source.check();
      assert.deepEqual(calls, expected);
      writeFileSync(join(dir, 'config.yaml'), 'kubernetes.operator.dynamic.namespaces.enabled: "true"\nkubernetes.operator.watched.namespaces: team-a\n');
    }
  } finally {
    rmSync(dir, { recursive: true });
  }
});
