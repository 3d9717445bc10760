import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { createLogger, withReconcileContext } from '../../src/runtime/logger.js';
import { auditVerb } from '../../src/runtime/api-client-factory.js';

function sink(lines: string[]): Writable {
  return new Writable({
    write(chunk, _enc, cb) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      cb();
    },
  });
}

test('json logs are one object per line with level names and reconcile fields', () => {
  const lines: string[] = [];
  const logger = createLogger({ destination: sink(lines), base: { identity: 'op-0' } });
  withReconcileContext({ namespace: 'ns', name: 'job', reconcileId: 'abc123abc123' }, () => logger.warn({ attempt: 2 }, 'hello'));
  const line = JSON.parse(lines[0]) as Record<string, unknown>;
  assert.equal(line.level, 'warn');
  assert.equal(line.msg, 'hello');
  assert.equal(line.identity, 'op-0');
  assert.equal(line.namespace, 'ns');
  assert.equal(line.name, 'job');
  assert.equal(line.reconcileId, 'abc123abc123');
  assert.equal(line.attempt, 2);
  assert.match(String(line.time), /^\d{4}-\d\d-\d\dT/);
});

test('pretty logs are human-readable lines, not JSON', () => {
  const lines: string[] = [];
  const logger = createLogger({ format: 'pretty', destination: sink(lines) });
  withReconcileContext({ namespace: 'ns', name: 'job', reconcileId: 'r1' }, () => logger.info('deployed'));
  assert.ok(lines.length >= 1);
  assert.throws(() => JSON.parse(lines[0]));
  const text = lines.join('\n');
  assert.match(text, /INFO/);
  assert.match(text, /deployed/);
  assert.match(text, /reconcileId: "r1"/);
});

test('API requests are named by their audit verb', () => {
  assert.equal(auditVerb('GET', 'http://h/api/v1/namespaces/ns/configmaps/x'), 'get');
  assert.equal(auditVerb('GET', 'http://h/api/v1/namespaces/ns/configmaps'), 'list');
  assert.equal(auditVerb('GET', 'http://h/api/v1/configmaps?labelSelector=a'), 'list');
  assert.equal(auditVerb('GET', 'http://h/api/v1/namespaces/ns/configmaps?watch=true'), 'watch');
  assert.equal(auditVerb('GET', 'http://h/api/v1/namespaces/ns'), 'get');
  assert.equal(auditVerb('GET', 'http://h/apis/flink.apache.org/v1/namespaces/ns/flinkdeployments/job/status'), 'get');
  assert.equal(auditVerb('GET', 'http://h/apis/coordination.k8s.io/v1/namespaces/ns/leases/lock'), 'get');
  assert.equal(auditVerb('POST', 'http://h/api/v1/namespaces/ns/events'), 'create');
  assert.equal(auditVerb('PUT', 'http://h/api/v1/namespaces/ns/configmaps/x'), 'update');
  assert.equal(auditVerb('PATCH', 'http://h/api/v1/namespaces/ns/events/e'), 'patch');
  assert.equal(auditVerb('DELETE', 'http://h/api/v1/namespaces/ns/configmaps/x'), 'delete');
  assert.equal(auditVerb('DELETE', 'http://h/api/v1/namespaces/ns/configmaps'), 'deletecollection');
});
