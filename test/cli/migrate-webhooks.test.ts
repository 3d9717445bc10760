/**
 * `flink-operator migrate` stops before writing anything while admission webhooks for
 * flink.apache.org flinkdeployments are registered (the Apache operator's, served by its stopped
 * Deployment, fail closed), printing the exact kubectl commands that remove them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { flinkDeploymentWebhooks, runMigrate, type MigrateClients, type WebhookConfiguration } from '../../src/cli/migrate-command.js';

/** The Apache Helm chart's webhook configurations (templates/webhook.yaml) for an operator in namespace `flink`. */
const APACHE: WebhookConfiguration[] = [
  {
    kind: 'ValidatingWebhookConfiguration',
    name: 'flink-operator-flink-webhook-configuration',
    webhooks: [
      {
        name: 'validationwebhook.flink.apache.org',
        failurePolicy: 'Fail',
        rules: [
          {
            apiGroups: ['flink.apache.org'],
            apiVersions: ['*'],
            operations: ['CREATE', 'UPDATE'],
            resources: ['flinkdeployments', 'flinksessionjobs', 'flinkstatesnapshots'],
          },
        ],
      },
    ],
  },
  {
    kind: 'MutatingWebhookConfiguration',
    name: 'flink-operator-flink-webhook-configuration',
    webhooks: [
      {
        name: 'mutationwebhook.flink.apache.org',
        failurePolicy: 'Fail',
        rules: [{ apiGroups: ['flink.apache.org'], apiVersions: ['*'], operations: ['CREATE', 'UPDATE'], resources: ['flinksessionjobs', 'flinkdeployments'] }],
      },
    ],
  },
];
const UNRELATED: WebhookConfiguration = {
  kind: 'ValidatingWebhookConfiguration',
  name: 'cert-manager-webhook',
  webhooks: [
    { name: 'webhook.cert-manager.io', rules: [{ apiGroups: ['cert-manager.io'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['*/*'] }] },
  ],
};

function fakeClients(configurations: WebhookConfiguration[]): { clients: MigrateClients; calls: string[] } {
  const calls: string[] = [];
  const refuse = (what: string) => () => {
    calls.push(what);
    throw new Error(`${what} must not be called`);
  };
  const clients = {
    configMaps: { get: refuse('cm get'), create: refuse('cm create'), replace: refuse('cm replace'), delete: refuse('cm delete') },
    deployments: {} as MigrateClients['deployments'],
    async listV1beta1() {
      calls.push('list');
      return [];
    },
    async checkCrd() {
      calls.push('crd');
      return {};
    },
    async listWebhookConfigurations() {
      calls.push('webhooks');
      return { configurations };
    },
  } as unknown as MigrateClients;
  return { clients, calls };
}

test('only webhook configurations with a rule for flink.apache.org flinkdeployments are found', () => {
  assert.deepEqual(
    flinkDeploymentWebhooks([...APACHE, UNRELATED]).map((c) => `${c.kind}/${c.name}`),
    ['ValidatingWebhookConfiguration/flink-operator-flink-webhook-configuration', 'MutatingWebhookConfiguration/flink-operator-flink-webhook-configuration'],
  );
  const wildcard: WebhookConfiguration = {
    ...UNRELATED,
    name: 'everything',
    webhooks: [{ name: 'w', rules: [{ apiGroups: ['*'], operations: ['*'], resources: ['*'] }] }],
  };
  assert.equal(flinkDeploymentWebhooks([wildcard]).length, 1);
  const deleteOnly: WebhookConfiguration = {
    ...UNRELATED,
    name: 'deletes',
    webhooks: [{ name: 'w', rules: [{ apiGroups: ['flink.apache.org'], operations: ['DELETE'], resources: ['flinkdeployments'] }] }],
  };
  assert.equal(flinkDeploymentWebhooks([deleteOnly]).length, 0, 'a DELETE-only webhook does not refuse migrate writes');
});

test("the Apache operator's webhooks stop migrate before anything is listed or written, with the exact kubectl delete commands", async () => {
  const { clients, calls } = fakeClients([...APACHE, UNRELATED]);
  const lines: string[] = [];
  const report = await runMigrate(clients, { allNamespaces: true }, (l) => lines.push(l));
  assert.equal(report.exitCode, 1);
  assert.deepEqual(calls, ['webhooks'], 'nothing listed, nothing written');
  assert.match(
    lines[0],
    /^error: admission webhook configuration\(s\) for flink\.apache\.org flinkdeployments are registered: ValidatingWebhookConfiguration flink-operator-flink-webhook-configuration, MutatingWebhookConfiguration flink-operator-flink-webhook-configuration\./,
  );
  assert.match(lines[0], /nothing was written/);
  assert.ok(lines.includes('  kubectl delete validatingwebhookconfiguration flink-operator-flink-webhook-configuration'), lines.join('\n'));
  assert.ok(lines.includes('  kubectl delete mutatingwebhookconfiguration flink-operator-flink-webhook-configuration'), lines.join('\n'));
  assert.ok(!lines.join('\n').includes('cert-manager'));
});

test('--ignore-webhooks skips the check; without matching webhooks migrate goes on', async () => {
  const ignored = fakeClients(APACHE);
  const report = await runMigrate(ignored.clients, { allNamespaces: true, ignoreWebhooks: true }, () => {});
  assert.equal(report.exitCode, 0);
  assert.deepEqual(ignored.calls, ['crd', 'list']);
  const none = fakeClients([UNRELATED]);
  assert.equal((await runMigrate(none.clients, { allNamespaces: true }, () => {})).exitCode, 0);
  assert.deepEqual(none.calls, ['webhooks', 'crd', 'list']);
});
