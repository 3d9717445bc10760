import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import type { V1Container, V1Deployment } from '@kubernetes/client-node';
import { flinkDeployment } from '../../src/api/flink-deployment-builder.js';
import type { FlinkDeploymentSpec } from '../../src/api/flink-deployment-spec.js';
import { buildFlinkClusterResources, type FlinkClusterInputs } from '../../src/flink/flink-cluster-resources.js';
import { jobManagerArgs } from '../../src/flink/jobmanager-deployment.js';
import { taskManagerReplicas } from '../../src/flink/taskmanager-deployment.js';
import { buildJobManagerLaunch } from '../../src/devcluster/simulation/jobmanager-launch.js';
import { parseFlinkConfigYaml, readClusterSettings } from '../../src/devcluster/simulation/flink-configuration.js';

const JOB = '0f1e2d3c4b5a69788796a5b4c3d2e1f0';
const UID = '6f1c2b9e-0000-4000-8000-000000000001';
const deployment = flinkDeployment('orders').inNamespace('team-a').withUid(UID).withGeneration(3).build();
const inputs = (over: Partial<FlinkClusterInputs> = {}): FlinkClusterInputs => ({ spec: deployment.spec, generation: 3, specHash: 'sha256-abc', jobId: JOB, ...over });
const mainContainer = (d: V1Deployment): V1Container => {
  const c = d.spec!.template.spec!.containers.find((x) => x.name === 'flink-main-container');
  assert.ok(c, 'flink-main-container missing');
  return c;
};

test('every object has its contract name, labels and a controller owner reference to the FlinkDeployment', () => {
  const r = buildFlinkClusterResources(deployment, inputs());
  const owner = [{ apiVersion: 'flink.apache.org/v1', kind: 'FlinkDeployment', name: 'orders', uid: UID, controller: true, blockOwnerDeletion: true }];
  const expected: Array<[string, { metadata?: { name?: string; namespace?: string; labels?: Record<string, string>; ownerReferences?: unknown } }, Record<string, string>]> = [
    ['flink-config-orders', r.configMap, { app: 'orders', type: 'flink-standalone-kubernetes' }],
    ['orders', r.jobManagerDeployment, { app: 'orders', type: 'flink-standalone-kubernetes', component: 'jobmanager' }],
    ['orders-taskmanager', r.taskManagerDeployment!, { app: 'orders', type: 'flink-standalone-kubernetes', component: 'taskmanager' }],
    ['orders-rest', r.restService, { app: 'orders', type: 'flink-standalone-kubernetes' }],
    ['orders', r.internalService, { app: 'orders', type: 'flink-standalone-kubernetes' }],
  ];
  for (const [name, object, labels] of expected) {
    assert.equal(object.metadata?.name, name);
    assert.equal(object.metadata?.namespace, 'team-a');
    assert.deepEqual(object.metadata?.labels, labels);
    assert.deepEqual(object.metadata?.ownerReferences, owner);
  }
  assert.deepEqual(r.jobManagerDeployment.spec?.template.metadata?.labels, { app: 'orders', type: 'flink-standalone-kubernetes', component: 'jobmanager' });
  assert.deepEqual(r.jobManagerDeployment.spec?.selector.matchLabels, { app: 'orders', component: 'jobmanager' });
  assert.deepEqual(r.taskManagerDeployment!.spec?.selector.matchLabels, { app: 'orders', component: 'taskmanager' });
});

test('a FlinkDeployment without uid cannot be rendered (no owner reference possible)', () => {
  const noUid = flinkDeployment('orders').build();
  assert.throws(() => buildFlinkClusterResources(noUid, inputs()), /default\/orders: metadata\.uid is missing/);
});

test('JobManager Deployment: args, annotations, Recreate, replicas, ports, probe, config volume, env, service account', () => {
  const jm = buildFlinkClusterResources(deployment, inputs()).jobManagerDeployment;
  assert.deepEqual(
    jm.metadata?.annotations,
    { 'flinkdeployment.flink.apache.org/generation': '3', 'flink-operator.io/spec-hash': 'sha256-abc', 'flink-operator.io/job-id': inputs().jobId },
    'the deployed record (deployed-record.ts): generation, spec hash and pinned job id',
  );
  assert.deepEqual(jm.spec?.strategy, { type: 'Recreate' });
  assert.equal(jm.spec?.replicas, 1);
  const c = mainContainer(jm);
  assert.deepEqual(c.args, ['standalone-job', '--job-classname', 'org.apache.flink.streaming.examples.statemachine.StateMachineExample']);
  assert.equal(c.image, 'flink:1.20');
  assert.deepEqual(c.ports, [
    { name: 'rest', containerPort: 8081, protocol: 'TCP' },
    { name: 'jobmanager-rpc', containerPort: 6123, protocol: 'TCP' },
    { name: 'blobserver', containerPort: 6124, protocol: 'TCP' },
  ]);
  assert.deepEqual(c.startupProbe?.httpGet, { path: '/config', port: 'rest', scheme: 'HTTP' });
  assert.deepEqual(c.env, [{ name: '_POD_IP_ADDRESS', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'status.podIP' } } }]);
  assert.deepEqual(c.volumeMounts, [{ name: 'flink-config-volume', mountPath: '/opt/flink/conf' }]);
  assert.deepEqual(c.resources, { requests: { cpu: '1', memory: '1024Mi' }, limits: { cpu: '1', memory: '1024Mi' } });
  assert.deepEqual(jm.spec?.template.spec?.volumes, [{ name: 'flink-config-volume', configMap: { name: 'flink-config-orders' } }]);
  assert.equal(jm.spec?.template.spec?.serviceAccountName, 'flink');
});

test('JobManager args: --fromSavepoint and --allowNonRestoredState before the program args; HA adds the pod IP as RPC address', () => {
  const spec: FlinkDeploymentSpec = { ...deployment.spec, job: { ...deployment.spec.job, args: ['--input', 'kafka'] } };
  assert.deepEqual(jobManagerArgs({ spec, restoreFrom: 'file:///sp/savepoint-0f1e2d-aaaaaaaaaaaa', allowNonRestoredState: true }), [
    'standalone-job',
    '--job-classname',
    'org.apache.flink.streaming.examples.statemachine.StateMachineExample',
    '--fromSavepoint',
    'file:///sp/savepoint-0f1e2d-aaaaaaaaaaaa',
    '--allowNonRestoredState',
    '--input',
    'kafka',
  ]);
  const noClass: FlinkDeploymentSpec = { ...spec, job: { jarURI: 'local:///job.jar' } };
  assert.deepEqual(jobManagerArgs({ spec: noClass, allowNonRestoredState: true }), ['standalone-job']);
  assert.deepEqual(jobManagerArgs({ spec: noClass, highAvailability: true }), ['standalone-job', '-D', 'jobmanager.rpc.address=$(_POD_IP_ADDRESS)']);
  const ha = flinkDeployment('orders').withUid(UID).withFlinkConfiguration({ 'high-availability.type': 'kubernetes', 'high-availability.storageDir': 'file:///ha' }).build();
  assert.ok(mainContainer(buildFlinkClusterResources(ha, inputs({ spec: ha.spec })).jobManagerDeployment).args?.includes('jobmanager.rpc.address=$(_POD_IP_ADDRESS)'));
});

test('TaskManager Deployment: args, port and the replicas rule', () => {
  const tm = buildFlinkClusterResources(deployment, inputs()).taskManagerDeployment!;
  const c = mainContainer(tm);
  assert.deepEqual(c.args, ['taskmanager']);
  assert.deepEqual(c.ports, [{ name: 'taskmanager-rpc', containerPort: 6122, protocol: 'TCP' }]);
  assert.equal(c.startupProbe, undefined);
  assert.equal(tm.spec?.replicas, 1); // parallelism 2 / 2 slots
  const with5 = (over: Partial<FlinkDeploymentSpec>) => taskManagerReplicas({ ...deployment.spec, ...over });
  assert.equal(with5({ job: { parallelism: 5 } }), 3);
  assert.equal(with5({ job: { parallelism: 5 }, flinkConfiguration: {} }), 5);
  assert.equal(with5({ job: { parallelism: 5 }, taskManager: { replicas: 4 } }), 4);
  assert.equal(with5({ job: { parallelism: 5 }, flinkConfiguration: { taskmanager: { numberOfTaskSlots: 4 } } }), 2);
});

test('Services: <name>-rest on port rest 8081, headless <name> with RPC and blob ports, both selecting the JobManager', () => {
  const r = buildFlinkClusterResources(deployment, inputs());
  assert.deepEqual(r.restService.spec, { type: 'ClusterIP', selector: { app: 'orders', component: 'jobmanager' }, ports: [{ name: 'rest', port: 8081, targetPort: 8081, protocol: 'TCP' }] });
  assert.deepEqual(r.internalService.spec, {
    clusterIP: 'None',
    selector: { app: 'orders', component: 'jobmanager' },
    ports: [
      { name: 'jobmanager-rpc', port: 6123, targetPort: 6123, protocol: 'TCP' },
      { name: 'blobserver', port: 6124, targetPort: 6124, protocol: 'TCP' },
    ],
  });
  const custom = flinkDeployment('orders').withUid(UID).withFlinkConfiguration({ 'rest.port': '9091' }).build();
  const rc = buildFlinkClusterResources(custom, inputs({ spec: custom.spec }));
  assert.equal(rc.restService.spec?.ports?.[0]?.port, 9091);
  assert.equal(mainContainer(rc.jobManagerDeployment).ports?.[0]?.containerPort, 9091);
});

test('ConfigMap: config.yaml and log4j-console.properties; logConfiguration overrides the default and adds files', () => {
  const r = buildFlinkClusterResources(deployment, inputs());
  assert.deepEqual(Object.keys(r.configMap.data ?? {}), ['config.yaml', 'log4j-console.properties']);
  assert.match(r.configMap.data!['config.yaml']!, /^\$internal\.pipeline\.job-id: "0f1e2d3c4b5a69788796a5b4c3d2e1f0"$/m);
  assert.match(r.configMap.data!['log4j-console.properties']!, /appender\.console\.type = CONSOLE/);
  const logged = flinkDeployment('orders').withUid(UID).withSpec({ logConfiguration: { 'log4j-console.properties': 'rootLogger.level = DEBUG\n', 'logback-console.xml': '<configuration/>' } }).build();
  const data = buildFlinkClusterResources(logged, inputs({ spec: logged.spec })).configMap.data!;
  assert.equal(data['log4j-console.properties'], 'rootLogger.level = DEBUG\n');
  assert.equal(data['logback-console.xml'], '<configuration/>');
});

test('the spec passed in is rendered, not deployment.spec (rollback renders an older spec)', () => {
  const older: FlinkDeploymentSpec = { ...deployment.spec, image: 'flink:1.19', job: { ...deployment.spec.job, parallelism: 6 } };
  const r = buildFlinkClusterResources(deployment, inputs({ spec: older }));
  assert.equal(mainContainer(r.jobManagerDeployment).image, 'flink:1.19');
  assert.equal(r.taskManagerDeployment!.spec?.replicas, 3);
  assert.match(r.configMap.data!['config.yaml']!, /^parallelism\.default: "6"$/m);
});

test('pod templates: base then component template, the operator decorating flink-main-container (real example manifest)', () => {
  const doc = parseYaml(readFileSync(new URL('../api/fixtures/example-basic-checkpoint-ha.yaml', import.meta.url), 'utf8')) as { spec: FlinkDeploymentSpec };
  const spec: FlinkDeploymentSpec = {
    ...doc.spec,
    mode: 'standalone',
    jobManager: {
      ...doc.spec.jobManager,
      podTemplate: {
        metadata: { labels: { team: 'payments', component: 'user-value-loses' }, annotations: { 'prometheus.io/scrape': 'true' } },
        spec: {
          containers: [
            { name: 'flink-main-container', env: [{ name: 'TZ', value: 'UTC' }], args: ['user', 'args', 'lose'] },
            { name: 'sidecar', image: 'envoy:1' },
          ],
        },
      },
    },
  };
  const owner = flinkDeployment('basic-checkpoint-ha-example').withUid(UID).withExactSpec(spec).build();
  const r = buildFlinkClusterResources(owner, inputs({ spec }));
  const template = r.jobManagerDeployment.spec!.template;
  assert.deepEqual(template.metadata?.labels, { team: 'payments', component: 'jobmanager', app: 'basic-checkpoint-ha-example', type: 'flink-standalone-kubernetes' });
  assert.deepEqual(template.metadata?.annotations, { 'prometheus.io/scrape': 'true' });
  assert.deepEqual(template.spec?.containers.map((c) => c.name), ['flink-main-container', 'sidecar']);
  const c = mainContainer(r.jobManagerDeployment);
  assert.deepEqual(c.volumeMounts, [
    { mountPath: '/flink-data', name: 'flink-volume' },
    { name: 'flink-config-volume', mountPath: '/opt/flink/conf' },
  ]);
  assert.deepEqual(c.env?.map((e) => e.name), ['TZ', '_POD_IP_ADDRESS']);
  assert.equal(c.args?.[0], 'standalone-job');
  assert.deepEqual(c.resources, { requests: { memory: '2048m', cpu: '1' } });
  assert.deepEqual(template.spec?.volumes?.map((v) => v.name), ['flink-volume', 'flink-config-volume']);
  // The TaskManager gets the base template only, not the JobManager's sidecar.
  const tm = r.taskManagerDeployment!.spec!.template;
  assert.deepEqual(tm.spec?.containers.map((x) => x.name), ['flink-main-container']);
  assert.deepEqual(mainContainer(r.taskManagerDeployment!).volumeMounts?.map((m) => m.mountPath), ['/flink-data', '/opt/flink/conf']);
});

test('rendering is deterministic and does not mutate its inputs', () => {
  const before = structuredClone(deployment);
  assert.deepEqual(buildFlinkClusterResources(deployment, inputs()), buildFlinkClusterResources(deployment, inputs()));
  assert.deepEqual(deployment, before);
});

test('contract: the simulated JobManager reads back the job id, restore path, parallelism and directories the operator rendered', () => {
  const r = buildFlinkClusterResources(deployment, inputs({ restoreFrom: 'file:///flink-data/savepoints/savepoint-0f1e2d-0123456789ab', allowNonRestoredState: true }));
  const config = parseFlinkConfigYaml(r.configMap.data!['config.yaml']!);
  const c = mainContainer(r.jobManagerDeployment);
  const launch = buildJobManagerLaunch(c.args!, config, c.image);
  assert.equal(launch.args.role, 'application-jobmanager');
  assert.equal(launch.args.jobClassName, 'org.apache.flink.streaming.examples.statemachine.StateMachineExample');
  assert.equal(launch.settings.pinnedJobId, JOB);
  assert.equal(launch.restoreFrom, 'file:///flink-data/savepoints/savepoint-0f1e2d-0123456789ab');
  assert.equal(launch.allowNonRestoredState, true);
  assert.equal(launch.settings.parallelism, 2);
  assert.equal(launch.settings.slotsPerTaskManager, 2);
  assert.equal(launch.settings.savepointDir, 'file:///flink-data/savepoints');
  assert.equal(launch.settings.checkpointDir, 'file:///flink-data/checkpoints');
  assert.equal(launch.settings.highAvailability.clusterId, 'orders');
  assert.deepEqual(mainContainer(r.taskManagerDeployment!).args, ['taskmanager']);
  // Without a restore, nothing to restore from.
  const fresh = buildFlinkClusterResources(deployment, inputs());
  assert.equal(readClusterSettings(parseFlinkConfigYaml(fresh.configMap.data!['config.yaml']!)).savepointPath, null);
});
