/**
 * `flink-operator inspect`'s effective configuration: each key with its value and where it came
 * from, read from the operator's default-configuration ConfigMap as manifests/ install it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1ConfigMap } from '@kubernetes/client-node';
import {
  DEFAULT_OPERATOR_CONFIG_MAP,
  effectiveConfigurationOfResource,
  formatEffectiveConfiguration,
  parseOperatorConfigMapRef,
} from '../../src/cli/effective-configuration-view.js';

const OPERATOR_CONFIG: V1ConfigMap = {
  metadata: { namespace: 'flink-operator', name: 'flink-operator-config' },
  data: {
    'config.yaml': [
      'state.savepoints.dir: s3://all/sp',
      'kubernetes.operator.default-configuration.namespace.team-a.state.savepoints.dir: s3://team-a/sp',
      'kubernetes.operator.default-configuration.flink-version.v1_20.taskmanager.numberOfTaskSlots: 4',
      'kubernetes.operator.reconcile.interval: 30 s',
    ].join('\n'),
  },
};

/** Fakes that answer GETs and record what was asked. */
function clients(configMap: V1ConfigMap | undefined) {
  const asked: string[] = [];
  return {
    asked,
    configMaps: {
      get: (namespace: string, name: string) => {
        asked.push(`configmap ${namespace}/${name}`);
        return Promise.resolve(configMap);
      },
    },
    deployments: {
      get: (namespace: string, name: string) => {
        asked.push(`flinkdeployment ${namespace}/${name}`);
        if (name === 'session') return Promise.resolve({ spec: { flinkVersion: 'v1_20' as const, flinkConfiguration: { 'pipeline.name': 'cluster' } } });
        return Promise.resolve({ spec: { flinkVersion: 'v1_20' as const, flinkConfiguration: { 'taskmanager.numberOfTaskSlots': '2' } } });
      },
    },
    sessionJobs: {
      get: (namespace: string, name: string) => {
        asked.push(`flinksessionjob ${namespace}/${name}`);
        return Promise.resolve({ spec: { deploymentName: 'session', flinkConfiguration: { 'pipeline.name': 'job' } } });
      },
    },
  };
}

test("a FlinkDeployment's effective configuration names each value's source and what it overrides", async () => {
  const c = clients(OPERATOR_CONFIG);
  const view = await effectiveConfigurationOfResource(c, DEFAULT_OPERATOR_CONFIG_MAP, 'FlinkDeployment', 'team-a', 'orders');
  assert.equal(view.defaults, 'ConfigMap flink-operator/flink-operator-config, config.yaml');
  assert.deepEqual(view.entries, [
    { key: 'state.savepoints.dir', value: 's3://team-a/sp', from: 'operator default for namespace team-a', overrides: ['operator default'] },
    { key: 'taskmanager.numberOfTaskSlots', value: '2', from: 'spec.flinkConfiguration', overrides: ['operator default for Flink v1_20'] },
  ]);
  assert.deepEqual(c.asked, ['configmap flink-operator/flink-operator-config', 'flinkdeployment team-a/orders'], 'GETs only');
  assert.match(
    formatEffectiveConfiguration(view).join('\n'),
    /taskmanager.numberOfTaskSlots\s+2\s+\[spec.flinkConfiguration; overrides operator default for Flink v1_20\]/,
  );
});

test("a session job's configuration is its own over its session cluster's over the defaults", async () => {
  const view = await effectiveConfigurationOfResource(clients(OPERATOR_CONFIG), DEFAULT_OPERATOR_CONFIG_MAP, 'FlinkSessionJob', 'team-b', 'job');
  assert.deepEqual(
    view.entries.map((e) => [e.key, e.value, e.from]),
    [
      ['pipeline.name', 'job', 'spec.flinkConfiguration'],
      ['state.savepoints.dir', 's3://all/sp', 'operator default'],
      ['taskmanager.numberOfTaskSlots', '4', 'operator default for Flink v1_20'],
    ],
  );
});

test('without the ConfigMap the resource is still shown, and the view says there are no defaults', async () => {
  const view = await effectiveConfigurationOfResource(clients(undefined), { namespace: 'ops', name: 'conf' }, 'FlinkDeployment', 'team-a', 'orders');
  assert.equal(view.defaults, 'ConfigMap ops/conf not found: no operator defaults');
  assert.deepEqual(
    view.entries.map((e) => e.key),
    ['taskmanager.numberOfTaskSlots'],
  );
  assert.throws(() => parseOperatorConfigMapRef('just-a-name'), /--operator-config: expected NAMESPACE\/NAME of a ConfigMap, got "just-a-name"/);
});
