/**
 * CRD validation rules (x-kubernetes-validations) as kube-apiserver 1.33 evaluates them, and the
 * static cost estimate it refuses CRDs by. Expected texts follow apiextensions-apiserver
 * pkg/apiserver/schema/cel/validation.go (and its validation_test.go), compilation.go and
 * pkg/apis/apiextensions/validation/validation.go.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { crdRuleErrors, evaluateRules, ratchetSchemaErrors } from '../../src/devcluster/apiserver/crd-validation-rules.js';
import { estimateRuleCosts, STATIC_ESTIMATED_COST_LIMIT, STATIC_ESTIMATED_CRD_COST_LIMIT } from '../../src/devcluster/apiserver/cel-cost-estimate.js';
import { validateObject } from '../../src/devcluster/apiserver/structural-schema.js';
import type { JsonObject } from '../../src/devcluster/apiserver/json-clone.js';

type Rule = Record<string, string | boolean>;

function specSchema(rules: Rule[], properties: JsonObject, extra: JsonObject = {}): JsonObject {
  return { type: 'object', properties: { spec: { type: 'object', properties, 'x-kubernetes-validations': rules, ...extra } } };
}

const widget = (spec: JsonObject, name = 'w'): JsonObject => ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name }, spec });

function rendered(obj: JsonObject, schema: JsonObject, old?: JsonObject): { errors: string[]; warnings: string[] } {
  const out = evaluateRules(obj, old, schema, []);
  return { errors: out.errors.map((e) => `${e.field}: ${e.text}`), warnings: out.warnings };
}

const replicas = { replicas: { type: 'integer' }, name: { type: 'string' } };

test('evaluation: self, message, default message, reasons, fieldPath', () => {
  const cases: Array<{ name: string; rule: Rule; spec: JsonObject; want: string[] }> = [
    { name: 'passes', rule: { rule: 'self.replicas <= 5' }, spec: { replicas: 3 }, want: [] },
    {
      name: 'message; the node type is the value shown (1.33/1.34)',
      rule: { rule: 'self.replicas <= 5', message: 'must be at most 5', fieldPath: '.replicas' },
      spec: { replicas: 7 },
      want: ['spec.replicas: Invalid value: "object": must be at most 5'],
    },
    {
      name: 'default message',
      rule: { rule: 'self.replicas <= 5' },
      spec: { replicas: 7 },
      want: ['spec: Invalid value: "object": failed rule: self.replicas <= 5'],
    },
    {
      name: 'Forbidden',
      rule: { rule: '!has(self.name)', message: 'name is set by the server', reason: 'FieldValueForbidden' },
      spec: { name: 'x' },
      want: ['spec: Forbidden: name is set by the server'],
    },
    {
      name: 'Required',
      rule: { rule: 'has(self.name)', message: 'name is needed', reason: 'FieldValueRequired', fieldPath: '.name' },
      spec: {},
      want: ['spec.name: Required value: name is needed'],
    },
    { name: 'Duplicate', rule: { rule: 'false', reason: 'FieldValueDuplicate' }, spec: {}, want: ['spec: Duplicate value: "object"'] },
    {
      name: 'evaluation error (no such key)',
      rule: { rule: 'self.name == "a"' },
      spec: {},
      want: ['spec: Invalid value: "object": no such key: name evaluating rule: self.name == "a"'],
    },
  ];
  for (const c of cases) assert.deepEqual(rendered(widget(c.spec), specSchema([c.rule], replicas)).errors, c.want, c.name);
});

test('evaluation: messageExpression and its fallbacks', () => {
  const cases: Array<[string, string]> = [
    ["'replicas is ' + string(self.replicas)", 'spec: Invalid value: "object": replicas is 7'],
    ['self.nosuch', 'spec: Invalid value: "object": fallback'], // an evaluation error
    ['"  "', 'spec: Invalid value: "object": fallback'], // empty after trimming
    ['"a\\nb"', 'spec: Invalid value: "object": fallback'], // line breaks
    ['1', 'spec: Invalid value: "object": fallback'], // not a string
  ];
  for (const [expression, want] of cases) {
    const schema = specSchema([{ rule: 'self.replicas <= 5', message: 'fallback', messageExpression: expression }], replicas);
    assert.deepEqual(rendered(widget({ replicas: 7 }), schema).errors, [want], expression);
  }
});

test('evaluation: scalar nodes, escaped names, root metadata, undeclared data', () => {
  const schema: JsonObject = {
    type: 'object',
    'x-kubernetes-validations': [{ rule: 'self.metadata.name.size() <= 5', message: 'name too long' }, { rule: '!has(self.metadata.labels)' }],
    properties: {
      spec: {
        type: 'object',
        'x-kubernetes-validations': [{ rule: "self.foo__dash__bar != 'x'" }, { rule: '!has(self.__if__)' }],
        properties: {
          'foo-bar': { type: 'string' },
          if: { type: 'string' },
          size: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self % 2 == 0', message: 'must be even' }] },
          extra: {
            type: 'object',
            'x-kubernetes-preserve-unknown-fields': true,
            properties: { known: { type: 'string' } },
            'x-kubernetes-validations': [{ rule: 'self.size() == 0 || has(self.known)' }],
          },
        },
      },
    },
  };
  const obj = widget({ 'foo-bar': 'x', if: 'y', size: 3, extra: { unknown: 1 } }, 'longname');
  assert.deepEqual(rendered(obj, schema).errors, [
    '<nil>: Invalid value: "object": name too long',
    'spec: Invalid value: "object": failed rule: self.foo__dash__bar != \'x\'',
    'spec: Invalid value: "object": failed rule: !has(self.__if__)',
    'spec.size: Invalid value: "integer": must be even',
  ]);
  // `self.metadata.labels` is not declared at the root: refused when the CRD is written
  assert.match(crdRuleErrors(schema, 'spec.validation.openAPIV3Schema')[0]?.text ?? '', /compilation failed: ERROR: <input>:1:\d+: undefined field 'labels'/);
});

test('transition rules: only on UPDATE, only where the old value exists, map lists by key', () => {
  const schema: JsonObject = specSchema([{ rule: 'self.name == oldSelf.name', message: 'name is immutable' }], {
    ...replicas,
    items: {
      type: 'array',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['key'],
      items: {
        type: 'object',
        properties: { key: { type: 'string' }, v: { type: 'integer' } },
        'x-kubernetes-validations': [{ rule: 'self.v >= oldSelf.v', message: 'v may not decrease' }],
      },
    },
  });
  assert.deepEqual(rendered(widget({ name: 'b' }), schema).errors, [], 'create: no oldSelf, rule skipped');
  assert.deepEqual(rendered(widget({ name: 'b' }), schema, widget({ name: 'a' })).errors, ['spec: Invalid value: "object": name is immutable']);
  const old = widget({ name: 'a', items: [{ key: 'x', v: 2 }] });
  assert.deepEqual(
    rendered(
      widget({
        name: 'a',
        items: [
          { key: 'y', v: 1 },
          { key: 'x', v: 3 },
        ],
      }),
      schema,
      old,
    ).errors,
    [],
    'new key y has no old item',
  );
  assert.deepEqual(rendered(widget({ name: 'a', items: [{ key: 'x', v: 1 }] }), schema, old).errors, [
    'spec.items[0]: Invalid value: "object": v may not decrease',
  ]);
});

test('ratcheting: an unchanged invalid value is accepted (with a warning), a changed one is not; transition rules never ratchet', () => {
  const schema = specSchema(
    [],
    {
      image: { type: 'string', 'x-kubernetes-validations': [{ rule: "self.startsWith('registry/')", message: 'use the registry' }] },
      replicas: { type: 'integer', maximum: 5 },
    },
    {},
  );
  const old = widget({ image: 'docker.io/x', replicas: 9 });
  const sameSpec = { ...old, status: { phase: 'Running' } };
  assert.deepEqual(rendered(sameSpec, schema, old), { errors: [], warnings: ['spec.image: Invalid value: "string": use the registry'] });
  assert.deepEqual(rendered(widget({ image: 'docker.io/y', replicas: 9 }), schema, old).errors, ['spec.image: Invalid value: "string": use the registry']);
  // schema errors: ratcheted by the same correlation, silently
  const schemaErrors = validateObject(sameSpec, schema);
  assert.equal(schemaErrors.length, 1);
  assert.deepEqual(
    ratchetSchemaErrors(schemaErrors, () => validateObject(old, schema), sameSpec, old, schema),
    [],
  );
  const changed = widget({ image: 'docker.io/x', replicas: 10 });
  assert.equal(ratchetSchemaErrors(validateObject(changed, schema), () => validateObject(old, schema), changed, old, schema).length, 1);
  const transition = specSchema([{ rule: 'self.replicas == oldSelf.replicas || self.replicas > 100', message: 'frozen' }], replicas);
  assert.deepEqual(rendered(widget({ replicas: 2, name: 'b' }), transition, widget({ replicas: 1, name: 'b' })).errors, [
    'spec: Invalid value: "object": frozen',
  ]);
});

test('blocking schema errors skip the rules, as hasBlockingErr does', () => {
  const schema = specSchema([{ rule: 'false' }], replicas);
  const out = evaluateRules(widget({}), undefined, schema, [{ type: 'FieldValueRequired', field: 'spec.name', text: 'Required value' }]);
  assert.deepEqual(
    out.errors.map((e) => `${e.field}: ${e.text}`),
    ['<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation'],
  );
});

test('CRD validation: compile errors, reasons, fieldPath, optionalOldSelf', () => {
  const errors = (rules: Rule[]) => crdRuleErrors(specSchema(rules, replicas), 'spec.validation.openAPIV3Schema').map((e) => `${e.field}: ${e.text}`);
  assert.match(
    errors([{ rule: 'self.replicas +' }])[0] ?? '',
    /^spec\.validation\.openAPIV3Schema\.properties\[spec\]\.x-kubernetes-validations\[0\]\.rule: Invalid value: apiextensions\.ValidationRule\{Rule:"self\.replicas \+", .*\}: compilation failed: ERROR: <input>:1:/,
  );
  assert.deepEqual(errors([{ rule: 'true', reason: 'Nope' }]), [
    'spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].reason: Unsupported value: "Nope": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"',
  ]);
  assert.deepEqual(errors([{ rule: 'true', fieldPath: '.nosuch' }]), [
    'spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].fieldPath: Invalid value: ".nosuch": fieldPath must be a valid path',
  ]);
  assert.deepEqual(
    errors([
      { rule: 'true', fieldPath: '.replicas' },
      { rule: 'true', fieldPath: "['name']" },
    ]),
    [],
  );
  assert.match(
    errors([{ rule: 'self.replicas == oldSelf.replicas', optionalOldSelf: true }])[0] ?? '',
    /optionalOldSelf: Invalid value: true: optionalOldSelf is not supported/,
  );
});

test('cost: matches on an unbounded string vs with maxLength; comprehensions with and without maxItems', () => {
  const cost = (schema: JsonObject) => estimateRuleCosts(schema).rules[0]?.cost ?? -1;
  const name = (extra: JsonObject) => specSchema([{ rule: "self.name.matches('^[a-z]+$')" }], { name: { type: 'string', ...extra } });
  // 3 MiB - 2 bytes × 0.1 (traversal) × ⌈0.25 × 8⌉ (regex length), + 2 for self.name
  assert.equal(cost(name({})), Math.ceil((3 * 1024 * 1024 - 2) * 0.1) * 2 + 2);
  assert.equal(cost(name({ maxLength: 10 })), 4 * 2 + 2); // ⌈40 × 0.1⌉ × 2 + 2
  const items = (extra: JsonObject) =>
    specSchema([{ rule: "self.hosts.all(h, h.matches('^[a-z.]+$'))" }], { hosts: { type: 'array', items: { type: 'string', ...extra }, ...extra } });
  const unbounded = cost(items({}));
  const bounded = cost(items({ maxItems: 10, maxLength: 64 }));
  assert.ok(unbounded > STATIC_ESTIMATED_COST_LIMIT, `unbounded ${unbounded}`);
  assert.ok(bounded < 1000, `bounded ${bounded}`);
  // the over-budget CRD is refused with the real message
  const errors = crdRuleErrors(items({}), 'spec.validation.openAPIV3Schema').map((e) => `${e.field}: ${e.text}`);
  assert.ok(
    errors.includes(
      'spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)',
    ),
    errors.join('\n'),
  );
  assert.ok(
    errors.some((e) =>
      e.startsWith('spec.validation.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget'),
    ),
  );
  assert.equal(STATIC_ESTIMATED_CRD_COST_LIMIT, 100_000_000);
});

test('cost: a rule inside an unbounded list runs once per item (cardinality)', () => {
  const schema = specSchema([], {
    ports: { type: 'array', items: { type: 'object', properties: { n: { type: 'integer' } }, 'x-kubernetes-validations': [{ rule: 'self.n > 0' }] } },
  });
  const bounded = structuredClone(schema);
  ((bounded.properties as JsonObject).spec as { properties: { ports: JsonObject } }).properties.ports.maxItems = 4;
  assert.equal(estimateRuleCosts(bounded).rules[0]?.cost, 3 * 4);
  assert.equal(estimateRuleCosts(schema).rules[0]?.cost, 3 * Math.floor((3 * 1024 * 1024) / 3)); // 3 MiB / (min size 2 + 1)
});

test('cost: a root rule on metadata.name is bounded only when the schema declares apiVersion, kind and metadata.{name,generateName}', () => {
  const rule = { rule: "self.metadata.name.matches('^[a-z]+$')" };
  const implicit: JsonObject = { type: 'object', 'x-kubernetes-validations': [rule], properties: {} };
  const declared: JsonObject = {
    type: 'object',
    'x-kubernetes-validations': [rule],
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { type: 'object', properties: { name: { type: 'string', maxLength: 63 }, generateName: { type: 'string', maxLength: 58 } } },
    },
  };
  // schemas.go WithTypeAndObjectMeta: implicit metadata.name is an unbounded string
  assert.equal(estimateRuleCosts(implicit).rules[0]?.cost, Math.ceil((3 * 1024 * 1024 - 2) * 0.1) * 2 + 3);
  assert.equal(estimateRuleCosts(declared).rules[0]?.cost, Math.ceil(63 * 4 * 0.1) * 2 + 3);
});
