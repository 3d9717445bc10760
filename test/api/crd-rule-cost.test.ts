/**
 * The API server's static cost estimate of the shipped CRDs' CEL rules (the development cluster's
 * estimator, src/devcluster/apiserver/cel-cost-estimate.ts, which follows apiextensions-apiserver's
 * validation.go and cel-go's checker costs): every rule within the per-expression budget
 * (StaticEstimatedCostLimit, 10,000,000) and each CRD within the per-CRD budget
 * (StaticEstimatedCRDCostLimit, 100,000,000), with margin. Prints the figures design/014 quotes.
 * Also the size of each generated CRD against the annotation limit a client-side apply meets.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildFlinkDeploymentCrd, buildFlinkSessionJobCrd } from '../../src/api/crd-generator.js';
import { estimateRuleCosts, STATIC_ESTIMATED_COST_LIMIT, STATIC_ESTIMATED_CRD_COST_LIMIT } from '../../src/devcluster/apiserver/cel-cost-estimate.js';
import type { JsonObject } from '../../src/devcluster/apiserver/json-clone.js';

/** apimachinery TotalAnnotationSizeLimitB: what `kubectl.kubernetes.io/last-applied-configuration` of a client-side apply must fit. */
const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;

const crds = { FlinkDeployment: buildFlinkDeploymentCrd(), FlinkSessionJob: buildFlinkSessionJobCrd() };

for (const [kind, crd] of Object.entries(crds)) {
  test(`${kind} CRD: every CEL rule is well within the API server's cost budget`, () => {
    const versions = (crd as { spec: { versions: Array<{ name: string; schema: { openAPIV3Schema: JsonObject } }> } }).spec.versions;
    for (const version of versions) {
      const { rules, total } = estimateRuleCosts(version.schema.openAPIV3Schema);
      assert.ok(rules.length > 0);
      const worst = rules.reduce((a, b) => (b.cost > a.cost ? b : a));
      console.log(
        `${kind} ${version.name}: ${rules.length} rule expressions, total estimated cost ${total.toLocaleString('en')} (${((100 * total) / STATIC_ESTIMATED_CRD_COST_LIMIT).toFixed(2)}% of the CRD budget); ` +
          `most expensive ${worst.cost.toLocaleString('en')} (${((100 * worst.cost) / STATIC_ESTIMATED_COST_LIMIT).toFixed(1)}% of the per-rule budget) at ${worst.path}`,
      );
      for (const r of rules) assert.ok(r.cost < STATIC_ESTIMATED_COST_LIMIT / 2, `${r.path}: ${r.rule} costs ${r.cost}`);
      assert.ok(total < STATIC_ESTIMATED_CRD_COST_LIMIT / 2, `total ${total}`);
    }
  });
}

test('CRD sizes: the FlinkDeployment CRD needs a server-side apply (README "Install"), the others fit a client-side one', () => {
  const jsonSize = (o: unknown) => Buffer.byteLength(JSON.stringify(o));
  const deployment = jsonSize(crds.FlinkDeployment);
  console.log(
    `FlinkDeployment CRD ${deployment.toLocaleString('en')} bytes as JSON; FlinkSessionJob CRD ${jsonSize(crds.FlinkSessionJob).toLocaleString('en')}; annotation limit ${TOTAL_ANNOTATION_SIZE_LIMIT.toLocaleString('en')}`,
  );
  assert.ok(deployment > TOTAL_ANNOTATION_SIZE_LIMIT, 'if it fits again, the README can go back to a plain kubectl apply');
  assert.ok(deployment < 1024 * 1024, "well below etcd's 1.5 MiB request limit");
  assert.ok(jsonSize(crds.FlinkSessionJob) < TOTAL_ANNOTATION_SIZE_LIMIT);
});
