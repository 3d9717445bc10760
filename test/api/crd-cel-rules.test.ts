/**
 * The CRD's CEL rules (src/api/crd-cel-rules.ts) against the invalid-spec corpus and the real-world
 * fixtures, evaluated directly with the development cluster's CEL environment (the kubectl-level
 * test is invalid-specs-admission.test.ts). Each corpus document marked `refusedBy: cel` must fail
 * exactly the rules whose messages its `expect` lists, with the operator's words; every other
 * document, and every real FlinkDeployment in ../shared/fixtures, must pass every rule.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { buildFlinkDeploymentCrd } from '../../src/api/crd-generator.js';
import { FLINK_DEPLOYMENT_RULES, type CelValidationRule } from '../../src/api/crd-cel-rules.js';
import { suggestName } from '../../src/api/spec-validation-messages.js';
import { flinkDeployment } from '../../src/api/flink-deployment-builder.js';
import { celValueOf, compileCel } from '../../src/devcluster/apiserver/cel-environment.js';
import type { JsonObject, JsonValue } from '../../src/devcluster/apiserver/json-clone.js';
import { loadSharedFixtures } from './shared-fixtures.js';

const CORPUS = fileURLToPath(new URL('./invalid-specs/', import.meta.url));
const corpus = readdirSync(CORPUS)
  .filter((f) => f.endsWith('.yaml'))
  .sort()
  .map((file) => ({
    file,
    doc: parseYaml(readFileSync(join(CORPUS, file), 'utf8')) as {
      expect: string[];
      admission: { refusedBy?: 'cel' | 'schema' | 'name'; operatorOnly?: string };
      previousSpec?: JsonObject;
      deployment: JsonObject;
    },
  }));

const crd = buildFlinkDeploymentCrd() as { spec: { versions: Array<{ name: string; schema: { openAPIV3Schema: JsonObject } }> } };
const rootSchema = crd.spec.versions.find((v) => v.name === 'v1')!.schema.openAPIV3Schema;

function schemaAt(path: readonly string[]): JsonObject {
  let node = rootSchema;
  for (const key of path) node = (node.properties as Record<string, JsonObject>)[key];
  return node;
}

function valueAt(obj: JsonValue | undefined, path: readonly string[]): JsonValue | undefined {
  let node = obj;
  for (const key of path) node = node && typeof node === 'object' && !Array.isArray(node) ? node[key] : undefined;
  return node;
}

/** `field: message` for every rule that fails, as the API server words the field (path + fieldPath). */
function failedRules(obj: JsonObject, old: JsonObject | undefined): string[] {
  const failures: string[] = [];
  for (const { path, rules } of FLINK_DEPLOYMENT_RULES) {
    const value = valueAt(obj, path);
    if (value === undefined) continue;
    const schema = schemaAt(path);
    for (const rule of rules) {
      const transition = rule.rule.includes('oldSelf');
      const oldValue = old ? valueAt(old, path) : undefined;
      if (transition && oldValue === undefined) continue; // transition rules run on updates only
      const bindings = { self: celValueOf(value, schema), ...(transition ? { oldSelf: celValueOf(oldValue, schema) } : {}) };
      const outcome = evaluate(rule.rule, bindings);
      assert.equal(typeof outcome, 'boolean', `${rule.rule} evaluates to a bool (got ${String(outcome)})`);
      if (outcome) continue;
      const field = [...path, ...(rule.fieldPath ?? '').split('.').filter(Boolean)].join('.');
      failures.push(`${field}: ${messageOf(rule, bindings)}`);
    }
  }
  return failures;
}

function evaluate(source: string, bindings: Record<string, ReturnType<typeof celValueOf>>): unknown {
  const compiled = compileCel(source);
  if ('compileError' in compiled) throw new Error(`${source}: ${compiled.compileError}`);
  const outcome = compiled.evaluate(bindings);
  if ('error' in outcome) throw new Error(`${source}: ${outcome.error}`);
  return outcome.value;
}

function messageOf(rule: CelValidationRule, bindings: Record<string, ReturnType<typeof celValueOf>>): string {
  if (rule.messageExpression) return String(evaluate(rule.messageExpression, bindings));
  return rule.message ?? `failed rule: ${rule.rule}`;
}

const previousOf = (doc: (typeof corpus)[number]['doc']): JsonObject | undefined =>
  doc.previousSpec ? { ...doc.deployment, spec: doc.previousSpec } : undefined;

for (const { file, doc } of corpus) {
  if (doc.admission.refusedBy === 'cel') {
    test(`CEL rules refuse ${file} with the operator's words`, () => {
      if (doc.previousSpec) assert.deepEqual(failedRules({ ...doc.deployment, spec: doc.previousSpec }, undefined), [], 'the previous spec passes');
      assert.deepEqual(failedRules(doc.deployment, previousOf(doc)).sort(), [...doc.expect].sort());
    });
  } else {
    test(`CEL rules let ${file} through (${doc.admission.refusedBy ?? 'operator-only'})`, () => {
      assert.ok(doc.admission.refusedBy || doc.admission.operatorOnly, 'the document says who refuses it');
      if (doc.admission.refusedBy === 'schema' || doc.admission.refusedBy === 'name') return;
      assert.deepEqual(failedRules(doc.deployment, previousOf(doc)), []);
    });
  }
}

test('every real FlinkDeployment of the shared fixtures passes every rule, on create and as an unchanged update', () => {
  let checked = 0;
  for (const fx of loadSharedFixtures()) {
    if (!fx.spec) continue;
    const obj = { metadata: { name: fx.metadata?.name ?? 'flink-app1' }, spec: fx.spec } as unknown as JsonObject;
    assert.deepEqual(failedRules(obj, undefined), [], fx.file);
    assert.deepEqual(failedRules(obj, obj), [], `${fx.file} (update)`);
    checked++;
  }
  assert.ok(checked >= 5, `${checked} fixtures`);
});

test("the builder's default FlinkDeployment and session cluster pass every rule", () => {
  for (const d of [flinkDeployment('orders').build(), flinkDeployment('sessions').withoutJob().build()]) {
    assert.deepEqual(failedRules(d as unknown as JsonObject, undefined), []);
  }
});

test('a name the API server lets through but that is not a DNS-1035 label gets the same suggestion from CEL and the operator', () => {
  for (const name of ['orders.job', '9lives', '1-orders.v2', '-x', '123', 'a.' + 'b'.repeat(60)]) {
    const deployment = flinkDeployment('x').build() as unknown as JsonObject;
    const [failure] = failedRules({ ...deployment, metadata: { name } }, undefined);
    assert.ok(failure?.includes(`rename it, e.g. "${suggestName(name)}"`), `${name}: ${failure}`);
  }
});

test('a change of a nonce together with suspend, and a mode switch, are refused only as changes', () => {
  const running = flinkDeployment('orders').build() as unknown as JsonObject;
  const spec = running.spec as JsonObject;
  const suspendedWithRestart = { ...running, spec: { ...spec, restartNonce: 7, job: { ...(spec.job as JsonObject), state: 'suspended' } } };
  assert.deepEqual(failedRules(suspendedWithRestart, undefined), [], 'on create, nothing to compare with');
  assert.equal(failedRules(suspendedWithRestart, running).length, 1);
  assert.deepEqual(failedRules(suspendedWithRestart, suspendedWithRestart), [], 'unchanged: no error');
});
