import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pruneAndDefault, validateObject } from '../../src/devcluster/apiserver/structural-schema.js';

const schema = {
  type: 'object',
  properties: {
    metadata: { type: 'object' },
    spec: {
      type: 'object',
      required: ['image'],
      properties: {
        image: { type: 'string', pattern: '^[a-z]' },
        replicas: { type: 'integer', minimum: 1, default: 1 },
        ports: { type: 'array', maxItems: 2, items: { type: 'object', properties: { port: { type: 'integer' }, name: { type: 'string', default: 'http' } } } },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        free: {
          type: 'object',
          'x-kubernetes-preserve-unknown-fields': true,
          properties: { typed: { type: 'object', properties: { a: { type: 'string' } } } },
        },
        nullableField: { type: 'string', nullable: true },
        plain: { type: 'string' },
        template: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: { spec: { type: 'object', properties: { x: { type: 'string' } } } } },
      },
    },
  },
};

describe('structural schema: pruning, defaulting, validation', () => {
  it('prunes unknown fields (reporting their paths), keeps metadata and preserve-unknown-fields subtrees', () => {
    const obj: any = {
      apiVersion: 'g/v1',
      kind: 'K',
      metadata: { name: 'x', labels: { a: 'b' } },
      spec: {
        image: 'a',
        junk: 1,
        ports: [{ port: 1, extra: true }],
        free: { anything: [1], typed: { a: 'y', b: 'pruned' } },
        template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { x: 'k', y: 'gone' } },
      },
      status: { x: 1 },
    };
    const { unknownFields } = pruneAndDefault(obj, schema);
    assert.deepEqual(unknownFields.sort(), ['spec.free.typed.b', 'spec.junk', 'spec.ports[0].extra', 'spec.template.spec.y', 'status'].sort());
    assert.deepEqual(obj.metadata, { name: 'x', labels: { a: 'b' } });
    assert.deepEqual(obj.spec.free, { anything: [1], typed: { a: 'y' } });
    assert.deepEqual(obj.spec.template, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { x: 'k' } });
  });

  it('applies defaults to absent fields, including inside list items, and drops non-nullable nulls', () => {
    const obj: any = { spec: { image: 'a', ports: [{ port: 1 }], plain: null, nullableField: null } };
    pruneAndDefault(obj, schema);
    assert.equal(obj.spec.replicas, 1);
    assert.equal(obj.spec.ports[0].name, 'http');
    assert.equal('plain' in obj.spec, false);
    assert.equal(obj.spec.nullableField, null);
  });

  it('reports validation errors with field paths and the real wording', () => {
    const errors = validateObject({ spec: { replicas: 0, image: 'A', ports: [{ port: 'x' }, {}, {}], labels: { a: 1 } } }, schema);
    const texts = errors.map((e) => `${e.field}: ${e.text}`);
    assert.deepEqual(texts, [
      'spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1',
      'spec.image: Invalid value: "A": spec.image in body should match \'^[a-z]\'',
      'spec.ports: Too many: 3: must have at most 2 items',
      'spec.ports[0].port: Invalid value: "string": spec.ports[0].port in body must be of type integer: "string"',
      'spec.labels.a: Invalid value: "integer": spec.labels.a in body must be of type string: "integer"',
    ]);
    assert.deepEqual(
      validateObject({ spec: {} }, schema).map((e) => `${e.field}: ${e.text}`),
      ['spec.image: Required value'],
    );
  });

  it('checks list-type map and set uniqueness and the int32 format', () => {
    const listSchema = {
      type: 'object',
      properties: {
        conditions: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['type'],
          items: { type: 'object', properties: { type: { type: 'string' } } },
        },
        tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
        small: { type: 'integer', format: 'int32' },
      },
    };
    const texts = validateObject({ conditions: [{ type: 'Ready' }, { type: 'Ready' }], tags: ['a', 'a'], small: 3000000000 }, listSchema).map(
      (e) => `${e.field}: ${e.text}`,
    );
    assert.deepEqual(texts, [
      'conditions[1]: Duplicate value: map[string]interface {}{"type":"Ready"}',
      'tags[1]: Duplicate value: "a"',
      'small: Invalid value: 3000000000: small in body must be of type int32: "3000000000"',
    ]);
  });
});
