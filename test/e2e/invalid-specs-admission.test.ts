/**
 * The invalid-spec corpus (test/api/invalid-specs/) applied with the real kubectl to the
 * development cluster with this project's CRDs and the operator running. Each document's
 * `admission` says who refuses it:
 * - `refusedBy: cel`: kubectl apply fails with the operator's message, in kube-apiserver's format
 *   (`The FlinkDeployment "orders" is invalid: spec.job.parallelism: Invalid value: "object": must be …`,
 *   apiextensions-apiserver pkg/apiserver/schema/cel/validation.go);
 * - `refusedBy: schema` / `name`: kubectl apply fails naming each field (the OpenAPI schema, the
 *   API server's metadata.name rule);
 * - `operatorOnly`: kubectl apply succeeds, and the operator reports the documented lines in
 *   status.error.
 * A document with a `previousSpec` is applied in that form first (which must be accepted), so the
 * transition rules see the change.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { KubectlRunner } from '../integration/devcluster/kubectl-runner.js';
import { startHarness, type OperatorHarness } from './operator-harness.js';

const CORPUS = fileURLToPath(new URL('../api/invalid-specs/', import.meta.url));

interface CorpusDocument {
  expect: string[];
  admission: { refusedBy?: 'cel' | 'schema' | 'name'; operatorOnly?: string };
  previousSpec?: Record<string, unknown>;
  deployment: { metadata: { name: string; namespace?: string }; spec: Record<string, unknown> };
}

const corpus = readdirSync(CORPUS)
  .filter((f) => f.endsWith('.yaml'))
  .sort()
  .map((file) => ({ file, doc: parseYaml(readFileSync(join(CORPUS, file), 'utf8')) as CorpusDocument }));

let h: OperatorHarness;
let kubectl: KubectlRunner;

before(async () => {
  h = await startHarness({ simulation: { podReadyDelayMs: 5, jobStartDelayMs: 5 } });
  kubectl = new KubectlRunner(h.world.cluster.kubeconfigYaml());
});
after(async () => {
  kubectl?.cleanup();
  await h?.stop();
});

/** The document in its own namespace (every corpus file names the same resource). */
function placed(file: string, doc: CorpusDocument, spec = doc.deployment.spec) {
  const namespace = `corpus-${file.slice(0, 2)}`;
  return { namespace, yaml: stringifyYaml({ ...doc.deployment, metadata: { ...doc.deployment.metadata, namespace }, spec }) };
}

/** `field: message` as kube-apiserver prints a field error: `field: <Kind of error>: … message`. */
function fieldAndMessage(line: string): { field: string; message: string } {
  const at = line.indexOf(': ');
  return { field: line.slice(0, at), message: line.slice(at + 2) };
}

for (const { file, doc } of corpus) {
  test(`kubectl apply of ${file}: ${doc.admission.refusedBy ? `refused (${doc.admission.refusedBy})` : 'accepted, reported by the operator'}`, async () => {
    const { namespace, yaml } = placed(file, doc);
    await kubectl.ok(['create', 'namespace', namespace]);
    if (doc.previousSpec) {
      await kubectl.ok(['apply', '-f', '-'], placed(file, doc, doc.previousSpec).yaml);
      // the operator compares with the spec it last reconciled: let it reconcile the previous one
      // first (a CEL transition rule compares with the stored object, which needs no wait)
      if (!doc.admission.refusedBy)
        await h.waitFor(doc.deployment.metadata.name, (d) => d.status?.observedGeneration === 1, 'the previous spec reconciled', 30_000, namespace);
    }
    const applied = await kubectl.run(['apply', '-f', '-'], yaml);
    if (doc.admission.refusedBy) {
      assert.notEqual(applied.code, 0, `refused at apply; stdout: ${applied.stdout}`);
      assert.match(applied.stderr, new RegExp(`The FlinkDeployment "${doc.deployment.metadata.name}" is invalid`));
      for (const line of doc.expect) {
        const { field, message } = fieldAndMessage(line);
        if (doc.admission.refusedBy === 'cel') {
          assert.ok(
            applied.stderr.includes(`${field}: Invalid value: "object": ${message}`) || applied.stderr.includes(`${field}: Forbidden: ${message}`),
            `${line}\nin: ${applied.stderr}`,
          );
        } else {
          assert.ok(applied.stderr.includes(`${field}: `), `${field} named in: ${applied.stderr}`);
        }
      }
      return;
    }
    assert.equal(applied.code, 0, applied.stderr);
    const reported = await h.waitFor(
      doc.deployment.metadata.name,
      (d) => doc.expect.every((line) => (d.status?.error ?? '').includes(line)),
      `status.error with ${doc.expect.join(' | ')}`,
      30_000,
      namespace,
    );
    assert.ok(reported.status?.error?.startsWith('Invalid spec'));
  });
}
