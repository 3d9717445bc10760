/**
 * The catalog of the Apache operator's `kubernetes.operator.*` keys: every documented key is in it
 * exactly once, and what the operator reports about keys it does not honour.
 * Source of the key list: apache/flink-kubernetes-operator @ 6e9caeb4,
 * docs/layouts/shortcodes/generated/kubernetes_operator_config_configuration.html (80 keys) and
 * kubernetes_operator_metric_configuration.html (12 keys).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { apacheOptionCatalog, apacheOptionsMarkdownTable, isOperatorWideKey, unhonouredOperatorKeys } from '../../src/runtime/apache-option-catalog.js';
import { OPERATOR_KNOBS } from '../../src/runtime/operator-knobs.js';

const APACHE_KEYS = [
  'checkpoint.trigger.grace-period',
  'checkpoint.type',
  'cluster.health-check.checkpoint-progress.enabled',
  'cluster.health-check.checkpoint-progress.window',
  'cluster.health-check.enabled',
  'cluster.health-check.restarts.threshold',
  'cluster.health-check.restarts.window',
  'cluster.resource-view.refresh-interval',
  'config.cache.size',
  'config.cache.timeout',
  'deployment.readiness.timeout',
  'deployment.rollback.enabled',
  'dynamic.config.check.interval',
  'dynamic.config.enabled',
  'dynamic.namespaces.enabled',
  'events.exceptions.limit-per-reconciliation',
  'events.exceptions.stacktrace-lines',
  'exception.field.max.length',
  'exception.label.mapper',
  'exception.stacktrace.enabled',
  'exception.stacktrace.max.length',
  'exception.throwable.list.max.count',
  'flink.client.cancel.timeout',
  'flink.client.timeout',
  'health.canary.resource.timeout',
  'health.probe.enabled',
  'health.probe.port',
  'ingress.manage',
  'jm-deployment-recovery.enabled',
  'jm-deployment.shutdown-ttl',
  'jm-deployment.startup.probe.enabled',
  'job.drain-on-savepoint-deletion',
  'job.restart.failed',
  'job.savepoint-on-deletion',
  'job.submission.timeout',
  'job.upgrade.ignore-pending-savepoint',
  'job.upgrade.inplace-scaling.enabled',
  'job.upgrade.last-state-fallback.enabled',
  'job.upgrade.last-state.job-cancel.enabled',
  'job.upgrade.last-state.max.allowed.checkpoint.age',
  'josdk.metrics.enabled',
  'jvm.metrics.enabled',
  'kubernetes.client.metrics.enabled',
  'kubernetes.client.metrics.http.response.code.groups.enabled',
  'kubernetes.client.metrics.slow.request.threshold',
  'label.selector',
  'leader-election.enabled',
  'leader-election.lease-duration',
  'leader-election.lease-name',
  'leader-election.renew-deadline',
  'leader-election.retry-period',
  'metrics.histogram.sample.size',
  'metrics.scope.k8soperator.resource',
  'metrics.scope.k8soperator.resourcens',
  'metrics.scope.k8soperator.system',
  'observer.progress-check.interval',
  'observer.rest-ready.delay',
  'periodic.checkpoint.interval',
  'periodic.savepoint.interval',
  'plugins.listeners.<listener-name>.class',
  'pod-template.merge-arrays-by-name',
  'rate-limiter.limit',
  'rate-limiter.refresh-period',
  'reconcile.interval',
  'reconcile.parallelism',
  'resource.cleanup.timeout',
  'resource.deletion.propagation',
  'resource.lifecycle.metrics.enabled',
  'resource.lifecycle.namespace.histograms.enabled',
  'resource.metrics.enabled',
  'retry.initial.interval',
  'retry.interval.multiplier',
  'retry.max.attempts',
  'retry.max.interval',
  'savepoint.cleanup.enabled',
  'savepoint.dispose-on-delete',
  'savepoint.format.type',
  'savepoint.history.max.age',
  'savepoint.history.max.age.threshold',
  'savepoint.history.max.count',
  'savepoint.history.max.count.threshold',
  'savepoint.trigger.grace-period',
  'session.deletion.block-on-session-jobs',
  'session.deletion.block-on-unmanaged-jobs',
  'snapshot.resource.enabled',
  'startup.stop-on-informer-error',
  'termination.timeout',
  'user.artifacts.allowed-schemes',
  'user.artifacts.base.dir',
  'user.artifacts.disallow-restricted-hosts',
  'user.artifacts.http.header',
  'watched.namespaces',
];

test('every documented Apache key is in the catalog exactly once, and nothing else', () => {
  assert.equal(APACHE_KEYS.length, 92);
  assert.deepEqual([...apacheOptionCatalog().keys()].sort(), [...APACHE_KEYS].sort());
});

test("an operator-wide key is a knob's Apache name, and the knob answers to it", () => {
  for (const option of apacheOptionCatalog().values()) {
    if (option.handling.kind !== 'operator') continue;
    const knob = OPERATOR_KNOBS.find((k) => k.key === (option.handling as { knob: string }).knob);
    assert.equal(knob?.apacheKey, `kubernetes.operator.${option.key}`);
    assert.ok(isOperatorWideKey(`kubernetes.operator.${option.key}`));
  }
  assert.ok(isOperatorWideKey('kubernetes.operator.reconcile.interval'));
  assert.ok(!isOperatorWideKey('kubernetes.operator.periodic.savepoint.interval'), 'a per-resource key is a default for resources');
  assert.ok(!isOperatorWideKey('state.savepoints.dir'));
});

test('keys that are not honoured are named with why; honoured and Flink keys are not', () => {
  const report = unhonouredOperatorKeys({
    'kubernetes.operator.periodic.savepoint.interval': '10 min',
    'kubernetes.operator.reconcile.interval': '30 s',
    'kubernetes.operator.periodic.savepont.interval': '10 min',
    'kubernetes.operator.exception.stacktrace.enabled': 'true',
    'kubernetes.operator.flink.client.timeout': '10 s',
    'kubernetes.operator.job.submission.timeout': '20 min',
    'kubernetes.operator.default-configuration.namespace.team-a.kubernetes.operator.job.drain-on-savepoint-deletion': 'true',
    'kubernetes.operator.session.block-on-session-jobs': 'false',
    'state.savepoints.dir': 's3://b/sp',
  });
  assert.deepEqual(
    report.map((r) => `${r.key} ${r.message}`),
    [
      'kubernetes.operator.periodic.savepont.interval is not an Apache operator option; did you mean kubernetes.operator.periodic.savepoint.interval?',
      "kubernetes.operator.exception.stacktrace.enabled is not implemented by this operator (status.error carries the error's message, not a serialized Java exception (README: status.error))",
      "kubernetes.operator.job.submission.timeout cannot be changed here: it stays at Apache's default 10 min",
      'kubernetes.operator.default-configuration.namespace.team-a.kubernetes.operator.job.drain-on-savepoint-deletion is not implemented by this operator (a deletion savepoint is always taken without draining)',
    ],
  );
});

test("in a resource's own configuration an operator-wide key is reported too: it configures the operator, not the resource", () => {
  assert.deepEqual(
    unhonouredOperatorKeys({ 'kubernetes.operator.reconcile.interval': '30 s', 'kubernetes.operator.savepoint.history.max.count': '5' }, 'resource').map(
      (r) => `${r.key} ${r.message}`,
    ),
    ["kubernetes.operator.reconcile.interval configures the operator, not a resource: set it in the operator's default configuration (config.yaml)"],
  );
});

test('README lists every Apache key and what happens to it (the table is current)', () => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  assert.ok(
    readme.includes(apacheOptionsMarkdownTable()),
    'README.md "Operator-wide defaults" is stale: paste apacheOptionsMarkdownTable() from src/runtime/apache-option-catalog.ts',
  );
});
