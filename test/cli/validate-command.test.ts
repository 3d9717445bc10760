/**
 * `flink-operator validate`: the invalid-spec corpus, written out as the YAML files a repository
 * would hold, gets exactly the operator's messages (as a separate process: output and exit status),
 * the operator-wide default configuration completes a spec as the running operator does, and a
 * valid file passes with exit status 0.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { flinkDeployment } from '../../src/api/flink-deployment-builder.js';
import { runCli } from './run-cli.js';

const CORPUS = fileURLToPath(new URL('../api/invalid-specs/', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'validate-'));

interface CorpusDocument {
  expect: string[];
  previousSpec?: Record<string, unknown>;
  deployment: { metadata: { name: string; namespace?: string }; spec: Record<string, unknown> };
}

test('every corpus document gets its documented lines, and the exit status says it is invalid', async () => {
  const current: string[] = [];
  const previous: string[] = [];
  const expected: string[] = [];
  for (const file of readdirSync(CORPUS).filter((f) => f.endsWith('.yaml'))) {
    const doc = parseYaml(readFileSync(join(CORPUS, file), 'utf8')) as CorpusDocument;
    // one resource per corpus file: give each its own namespace so the names do not collide
    const namespace = `ns-${file.slice(0, 2)}`;
    const deployment = { ...doc.deployment, metadata: { ...doc.deployment.metadata, namespace } };
    current.push(stringifyYaml(deployment));
    if (doc.previousSpec) previous.push(stringifyYaml({ ...deployment, spec: doc.previousSpec }));
    for (const line of doc.expect) expected.push(`resources.yaml: FlinkDeployment ${namespace}/${deployment.metadata.name}: ${line}`);
  }
  writeFileSync(join(dir, 'resources.yaml'), current.join('---\n'));
  mkdirSync(join(dir, 'applied'));
  writeFileSync(join(dir, 'applied', 'all.yaml'), previous.join('---\n'));
  const result = await runCli(['validate', '-f', join(dir, 'resources.yaml'), '--previous', join(dir, 'applied')]);
  const lines = result.stdout
    .trim()
    .split('\n')
    .map((l) => l.replace(`${join(dir, 'resources.yaml')}`, 'resources.yaml'));
  assert.deepEqual(
    lines
      .filter((l) => !l.includes(': warning: '))
      .slice(0, -1)
      .sort(),
    expected.sort(),
  );
  assert.match(lines[lines.length - 1], /^\d+ resource\(s\) checked, \d+ invalid$/);
  assert.equal(result.code, 1, result.stderr);
});

test("the operator's default configuration completes a spec, as it does in the running operator", async () => {
  const spec = flinkDeployment('orders').build();
  const job = spec.spec.job!;
  const lastState = { ...spec, metadata: { name: 'orders', namespace: 'team-a' }, spec: { ...spec.spec, job: { ...job, upgradeMode: 'last-state' } } };
  writeFileSync(join(dir, 'last-state.yaml'), `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: unrelated}\n---\n${stringifyYaml(lastState)}`);
  const bare = await runCli(['validate', '-f', join(dir, 'last-state.yaml')]);
  assert.equal(bare.code, 1);
  assert.match(bare.stdout, /spec\.job\.upgradeMode: last-state needs Flink high availability/);

  const conf = join(dir, 'conf');
  mkdirSync(conf);
  writeFileSync(
    join(conf, 'config.yaml'),
    'high-availability:\n  type: kubernetes\n  storageDir: s3://flink/ha\nexecution.checkpointing.dir: s3://flink/checkpoints\nexecution.checkpointing.savepoint-dir: s3://flink/savepoints\n',
  );
  const withDefaults = await runCli(['validate', '-f', join(dir, 'last-state.yaml'), '--flink-conf-dir', conf]);
  assert.equal(withDefaults.code, 0, withDefaults.stdout);
  assert.equal(withDefaults.stdout.trim(), '1 resource(s) checked, 0 invalid, 1 document(s) of other kinds skipped');
});

test('a file that is not YAML is a usage error (exit status 2), naming the file', async () => {
  writeFileSync(join(dir, 'broken.yaml'), 'kind: FlinkDeployment\n  spec: [unclosed\n');
  const result = await runCli(['validate', '-f', join(dir, 'broken.yaml')]);
  assert.equal(result.code, 2);
  assert.match(result.stderr, /broken\.yaml: not valid YAML/);
});

test('a typo in a flinkConfiguration key is a warning, not a failure', async () => {
  const d = flinkDeployment('orders').build();
  const typo = {
    ...d,
    metadata: { name: 'orders', namespace: 'team-a' },
    spec: { ...d.spec, flinkConfiguration: { ...d.spec.flinkConfiguration, taskmanager: { numberOfTaskSlot: 2 } } },
  };
  writeFileSync(join(dir, 'typo.yaml'), stringifyYaml(typo));
  const result = await runCli(['validate', '-f', join(dir, 'typo.yaml')]);
  assert.equal(result.code, 0, result.stdout);
  assert.match(
    result.stdout,
    /FlinkDeployment team-a\/orders: warning: spec\.flinkConfiguration: taskmanager\.numberOfTaskSlot is not a Flink option; did you mean taskmanager\.numberOfTaskSlots\?/,
  );
});
