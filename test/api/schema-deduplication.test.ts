/**
 * withSharedSubschemas (src/api/schema-deduplication.ts): the same verdicts and error locations
 * from ajv with repeated subschemas shared through $defs, for the FlinkDeployment spec schema
 * (three Pod schemas), in a fraction of the compile time.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv, type ErrorObject } from 'ajv';
import { withSharedSubschemas } from '../../src/api/schema-deduplication.js';
import { FlinkDeploymentSpecSchema } from '../../src/api/flink-deployment-spec.js';
import { plainJsonSchema } from '../../src/api/schema-builders.js';

function errorsOf(errors: ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).map((e) => `${e.instancePath} ${e.keyword} ${JSON.stringify(e.params)}`).sort();
}

test('shares repeated subschemas through $defs and leaves unrepeated or small ones in place', () => {
  const repeated = { type: 'object', properties: { name: { type: 'string' }, image: { type: 'string' }, args: { type: 'array', items: { type: 'string' } } } };
  const schema = {
    type: 'object',
    properties: { containers: { type: 'array', items: repeated }, initContainers: { type: 'array', items: repeated, maxItems: 5 }, once: { type: 'boolean' } },
  };
  const shared = withSharedSubschemas(schema, 50);
  assert.deepEqual(shared.properties, {
    containers: { type: 'array', items: { $ref: '#/$defs/shared-0' } },
    initContainers: { type: 'array', items: { $ref: '#/$defs/shared-0' }, maxItems: 5 },
    once: { type: 'boolean' },
  });
  assert.deepEqual(shared.$defs, { 'shared-0': repeated });
  assert.equal((schema.properties.containers as { items: unknown }).items, repeated, 'the input is unchanged');
  assert.equal(withSharedSubschemas(schema, 10_000), schema, 'nothing large enough repeats: the schema itself');
});

test('ajv gives the same verdicts and errors for the spec schema with its Pod schemas shared', () => {
  const plain = plainJsonSchema(FlinkDeploymentSpecSchema);
  const shared = withSharedSubschemas(plain);
  assert.ok(JSON.stringify(shared).length < JSON.stringify(plain).length / 3, 'the shared form is much smaller');
  const ajv = new Ajv({ allErrors: true, strict: false, logger: false });
  const inline = ajv.compile(plain);
  const deduplicated = ajv.compile(shared);
  const specs: unknown[] = [
    { image: 'flink:1.20', podTemplate: { spec: { containers: [{ name: 'flink-main-container', resources: { limits: { cpu: 2 } } }] } } },
    { podTemplate: { spec: { containers: { name: 'x' } } }, jobManager: { replicas: 'two', podTemplate: { spec: { initContainers: [{ name: 1 }] } } } },
    {
      taskManager: {
        podTemplate: { metadata: { labels: { a: 1 } }, spec: { volumes: [{ name: 'v', emptyDir: { medium: 3 } }], tolerations: [{ tolerationSeconds: 'x' }] } },
      },
    },
    { job: { parallelism: 1.5 }, podTemplate: { spec: { securityContext: { runAsUser: '1' } } } },
  ];
  for (const spec of specs) {
    assert.equal(deduplicated(spec), inline(spec), JSON.stringify(spec));
    assert.deepEqual(errorsOf(deduplicated.errors), errorsOf(inline.errors), JSON.stringify(spec));
  }
  assert.equal(inline(specs[1]), false, 'the wrongly typed specs are refused');
});
