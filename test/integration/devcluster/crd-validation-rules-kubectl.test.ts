/**
 * CRD validation rules (x-kubernetes-validations) through the real kubectl against the dev
 * cluster: a violating apply prints the real server's error, an update keeping an old invalid value
 * is accepted (ratcheting, CRDValidationRatcheting GA in 1.33), a transition rule blocks a change,
 * and a CRD whose rule does not compile is refused. Texts follow apiextensions-apiserver
 * pkg/apiserver/schema/cel/validation.go and pkg/apis/apiextensions/validation/validation.go.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startDevCluster, type DevCluster } from '../../../src/devcluster/dev-cluster.js';
import { KubectlRunner } from './kubectl-runner.js';
import { widgetCrd } from './widget-crd-fixture.js';

type Rule = Record<string, unknown>;

/** The widget CRD with rules on `spec` and on `spec.replicas`. */
function ruledCrd(specRules: Rule[], replicasRules: Rule[] = []): Record<string, any> {
  const crd = widgetCrd();
  const spec = crd.spec.versions[0].schema.openAPIV3Schema.properties.spec;
  spec['x-kubernetes-validations'] = specRules;
  spec.properties.tier = { type: 'string', maxLength: 16 };
  if (replicasRules.length) spec.properties.replicas['x-kubernetes-validations'] = replicasRules;
  return crd;
}

const TIER_RULE = { rule: '!has(oldSelf.tier) || self.tier == oldSelf.tier', message: 'tier is immutable', reason: 'FieldValueForbidden', fieldPath: '.tier' };
const REPLICAS_RULE = { rule: 'self <= 5', message: 'must be at most 5' };

const widgetYaml = (name: string, replicas: number, tier = 'gold') =>
  `apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: ${name}\n  namespace: default\nspec:\n  image: flink:2.2\n  replicas: ${replicas}\n  tier: ${tier}\n`;

describe('dev cluster: CRD validation rules through kubectl', () => {
  let cluster: DevCluster;
  let k: KubectlRunner;
  before(async () => {
    cluster = await startDevCluster();
    k = new KubectlRunner(cluster.kubeconfigYaml());
  });
  after(async () => {
    k.cleanup();
    await cluster.stop();
  });

  it('refuses a CRD whose rule does not compile', async () => {
    const r = await k.run(['apply', '-f', '-'], JSON.stringify(ruledCrd([{ rule: 'self.replicas +' }])));
    assert.notEqual(r.code, 0);
    assert.match(
      r.stderr,
      // two versions with different schemas: the path names the version (identical ones would be spec.validation)
      /CustomResourceDefinition "widgets\.example\.com" is invalid: spec\.versions\[0\]\.schema\.openAPIV3Schema\.properties\[spec\]\.x-kubernetes-validations\[0\]\.rule: Invalid value: apiextensions\.ValidationRule\{Rule:"self\.replicas \+".*compilation failed: ERROR: <input>:1:/,
    );
  });

  it('prints the real error for a violating object, accepts an unchanged old invalid value, blocks a transition', async () => {
    await k.ok(['apply', '-f', '-'], JSON.stringify(ruledCrd([TIER_RULE], [REPLICAS_RULE])));
    await k.ok(['wait', '--for=condition=Established', 'crd/widgets.example.com']);

    const bad = await k.run(['apply', '-f', '-'], widgetYaml('w', 7));
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /The Widget "w" is invalid: spec\.replicas: Invalid value: "integer": must be at most 5/);

    // an object stored before the rule existed (the rule is added after it)
    await k.ok(['apply', '-f', '-'], JSON.stringify(ruledCrd([TIER_RULE])));
    await k.ok(['apply', '-f', '-'], widgetYaml('old', 7));
    await k.ok(['apply', '-f', '-'], JSON.stringify(ruledCrd([TIER_RULE], [REPLICAS_RULE])));
    // writes that keep the invalid replicas: ratcheted (a warning, not an error)
    const relabel = await k.run(['label', 'widget', 'old', 'team=a']);
    assert.equal(relabel.code, 0, relabel.stderr);
    const statusWrite = await k.run(['patch', 'widget', 'old', '--subresource=status', '--type=merge', '-p', '{"status":{"phase":"Running"}}']);
    assert.equal(statusWrite.code, 0, statusWrite.stderr);
    const specWrite = await k.run(['apply', '-f', '-'], widgetYaml('old', 7, 'gold').replace('image: flink:2.2', 'image: flink:2.3'));
    assert.equal(specWrite.code, 0, specWrite.stderr);
    assert.match(specWrite.stderr, /Warning: spec\.replicas: Invalid value: "integer": must be at most 5/);
    // …but changing the invalid value to another invalid one is refused
    const worse = await k.run(['apply', '-f', '-'], widgetYaml('old', 8));
    assert.notEqual(worse.code, 0);
    assert.match(worse.stderr, /spec\.replicas: Invalid value: "integer": must be at most 5/);

    // the transition rule: tier may not change
    const retier = await k.run(['apply', '-f', '-'], widgetYaml('old', 7, 'silver'));
    assert.notEqual(retier.code, 0);
    assert.match(retier.stderr, /The Widget "old" is invalid: spec\.tier: Forbidden: tier is immutable/);
  });
});
