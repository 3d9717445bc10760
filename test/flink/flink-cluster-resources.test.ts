import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import type { V1Container, V1Deployment } from '@kubernetes/client-node';
import { flinkDeployment } from '../../src/api/flink-deployment-builder.js';
import type { FlinkDeploymentSpec } from '../../src/api/flink-deployment-spec.js';
import { buildFlinkClusterResources, type FlinkClusterInputs } from '../../src/flink/flink-cluster-resources.js';
import { flinkConfigurationTextOf } from '../../src/flink/flink-config-configmap.js';
import { jobManagerArgs } from '../../src/flink/jobmanager-deployment.js';
import { taskManagerReplicas } from '../../src/flink/taskmanager-deployment.js';
import { buildJobManagerLaunch, parseFlinkArgs } from '../../src/devcluster/simulation/jobmanager-launch.js';
import { loadFlinkConfiguration, parseFlinkConfigYaml, readClusterSettings } from '../../src/devcluster/simulation/flink-configuration.js';
import { SimulatedJobManager } from '../../src/devcluster/simulation/flink-jobmanager.js';
import { LineageRecorder } from '../../src/devcluster/simulation/lineage-recorder.js';
import { SnapshotStorage } from '../../src/devcluster/simulation/snapshot-storage.js';
import { seededRandom } from '../../src/devcluster/simulation/simulation-random.js';

const JOB = '0f1e2d3c4b5a69788796a5b4c3d2e1f0';
const UID = '6f1c2b9e-0000-4000-8000-000000000001';
const deployment = flinkDeployment('orders').inNamespace('team-a').withUid(UID).withGeneration(3).build();
const inputs = (over: Partial<FlinkClusterInputs> = {}): FlinkClusterInputs => ({
  spec: deployment.spec,
  generation: 3,
  specHash: 'sha256-abc',
  jobId: JOB,
  ...over,
});
const mainContainer = (d: V1Deployment): V1Container => {
  const c = d.spec!.template.spec!.containers.find((x) => x.name === 'flink-main-container');
  assert.ok(c, 'flink-main-container missing');
  return c;
};

test('every object has its contract name, labels and a controller owner reference to the FlinkDeployment', () => {
  const r = buildFlinkClusterResources(deployment, inputs());
  const owner = [{ apiVersion: 'flink.apache.org/v1', kind: 'FlinkDeployment', name: 'orders', uid: UID, controller: true, blockOwnerDeletion: true }];
  const expected: Array<
    [string, { metadata?: { name?: string; namespace?: string; labels?: Record<string, string>; ownerReferences?: unknown } }, Record<string, string>]
  > = [
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
  const ha = flinkDeployment('orders')
    .withUid(UID)
    .withFlinkConfiguration({ 'high-availability.type': 'kubernetes', 'high-availability.storageDir': 'file:///ha' })
    .build();
  assert.ok(
    mainContainer(buildFlinkClusterResources(ha, inputs({ spec: ha.spec })).jobManagerDeployment).args?.includes('jobmanager.rpc.address=$(_POD_IP_ADDRESS)'),
  );
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
  assert.deepEqual(r.restService.spec, {
    type: 'ClusterIP',
    selector: { app: 'orders', component: 'jobmanager' },
    ports: [{ name: 'rest', port: 8081, targetPort: 8081, protocol: 'TCP' }],
  });
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
  assert.match(r.configMap.data!['config.yaml'], /^\$internal\.pipeline\.job-id: "0f1e2d3c4b5a69788796a5b4c3d2e1f0"$/m);
  assert.match(r.configMap.data!['log4j-console.properties'], /appender\.console\.type = CONSOLE/);
  const logged = flinkDeployment('orders')
    .withUid(UID)
    .withSpec({ logConfiguration: { 'log4j-console.properties': 'rootLogger.level = DEBUG\n', 'logback-console.xml': '<configuration/>' } })
    .build();
  const data = buildFlinkClusterResources(logged, inputs({ spec: logged.spec })).configMap.data!;
  assert.equal(data['log4j-console.properties'], 'rootLogger.level = DEBUG\n');
  assert.equal(data['logback-console.xml'], '<configuration/>');
});

test('the spec passed in is rendered, not deployment.spec (rollback renders an older spec)', () => {
  const older: FlinkDeploymentSpec = { ...deployment.spec, image: 'flink:1.19', job: { ...deployment.spec.job, parallelism: 6 } };
  const r = buildFlinkClusterResources(deployment, inputs({ spec: older }));
  assert.equal(mainContainer(r.jobManagerDeployment).image, 'flink:1.19');
  assert.equal(r.taskManagerDeployment!.spec?.replicas, 3);
  assert.match(r.configMap.data!['config.yaml'], /^parallelism\.default: "6"$/m);
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
  assert.deepEqual(template.metadata?.labels, {
    team: 'payments',
    component: 'jobmanager',
    app: 'basic-checkpoint-ha-example',
    type: 'flink-standalone-kubernetes',
  });
  assert.deepEqual(template.metadata?.annotations, { 'prometheus.io/scrape': 'true' });
  assert.deepEqual(
    template.spec?.containers.map((c) => c.name),
    ['flink-main-container', 'sidecar'],
  );
  const c = mainContainer(r.jobManagerDeployment);
  assert.deepEqual(c.volumeMounts, [
    { mountPath: '/flink-data', name: 'flink-volume' },
    { name: 'flink-config-volume', mountPath: '/opt/flink/conf' },
  ]);
  assert.deepEqual(
    c.env?.map((e) => e.name),
    ['TZ', '_POD_IP_ADDRESS'],
  );
  assert.equal(c.args?.[0], 'standalone-job');
  assert.deepEqual(c.resources, { requests: { memory: '2048m', cpu: '1' } });
  assert.deepEqual(
    template.spec?.volumes?.map((v) => v.name),
    ['flink-volume', 'flink-config-volume'],
  );
  // The TaskManager gets the base template only, not the JobManager's sidecar.
  const tm = r.taskManagerDeployment!.spec!.template;
  assert.deepEqual(
    tm.spec?.containers.map((x) => x.name),
    ['flink-main-container'],
  );
  assert.deepEqual(
    mainContainer(r.taskManagerDeployment!).volumeMounts?.map((m) => m.mountPath),
    ['/flink-data', '/opt/flink/conf'],
  );
});

test('rendering is deterministic and does not mutate its inputs', () => {
  const before = structuredClone(deployment);
  assert.deepEqual(buildFlinkClusterResources(deployment, inputs()), buildFlinkClusterResources(deployment, inputs()));
  assert.deepEqual(deployment, before);
});

test('contract: the simulated JobManager reads back the job id, restore path, parallelism and directories the operator rendered', () => {
  const r = buildFlinkClusterResources(
    deployment,
    inputs({ restoreFrom: 'file:///flink-data/savepoints/savepoint-0f1e2d-0123456789ab', allowNonRestoredState: true }),
  );
  const config = parseFlinkConfigYaml(r.configMap.data!['config.yaml']);
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
  assert.equal(readClusterSettings(parseFlinkConfigYaml(fresh.configMap.data!['config.yaml'])).savepointPath, null);
});

// Sources: Flink 1.15-1.18 GlobalConfiguration reads only conf/flink-conf.yaml (legacy flat
// format, Flink 1.x GlobalConfiguration.loadYAMLResource); 1.19+ reads config.yaml.
test('ConfigMap: Flink 1.15-1.18 get flink-conf.yaml (and no config.yaml), 1.19 and newer config.yaml', () => {
  for (const [flinkVersion, image] of [
    ['v1_15', 'flink:1.15'],
    ['v1_16', 'flink:1.16'],
    ['v1_17', 'flink:1.17'],
    ['v1_18', 'flink:1.18'],
  ] as const) {
    const d = flinkDeployment('orders').inNamespace('team-a').withUid(UID).withSpec({ flinkVersion, image }).build();
    const data = buildFlinkClusterResources(d, inputs({ spec: d.spec })).configMap.data!;
    assert.deepEqual(Object.keys(data), ['flink-conf.yaml', 'log4j-console.properties'], flinkVersion);
    assert.match(data['flink-conf.yaml'], /^\$internal\.pipeline\.job-id: 0f1e2d3c4b5a69788796a5b4c3d2e1f0$/m, 'legacy format: unquoted');
  }
  for (const flinkVersion of ['v1_19', 'v1_20', 'v2_0'] as const) {
    const d = flinkDeployment('orders').inNamespace('team-a').withUid(UID).withSpec({ flinkVersion }).build();
    assert.deepEqual(
      Object.keys(buildFlinkClusterResources(d, inputs({ spec: d.spec })).configMap.data!),
      ['config.yaml', 'log4j-console.properties'],
      flinkVersion,
    );
  }
  // a logConfiguration entry named like a configuration file never replaces it
  const sneaky = flinkDeployment('orders')
    .withUid(UID)
    .withSpec({ flinkVersion: 'v1_17', image: 'flink:1.17', logConfiguration: { 'flink-conf.yaml': 'x: y\n', 'config.yaml': 'x: y\n' } })
    .build();
  const data = buildFlinkClusterResources(sneaky, inputs({ spec: sneaky.spec })).configMap.data!;
  assert.deepEqual(Object.keys(data), ['flink-conf.yaml', 'log4j-console.properties']);
  assert.doesNotMatch(data['flink-conf.yaml'], /^x: y$/m);
});

test('flinkConfigurationTextOf: config.yaml as is, flink-conf.yaml as the standard YAML of what Flink 1.x reads from it', () => {
  const modern = buildFlinkClusterResources(deployment, inputs()).configMap;
  assert.equal(flinkConfigurationTextOf(modern), modern.data!['config.yaml']);
  const d = flinkDeployment('orders').inNamespace('team-a').withUid(UID).withSpec({ flinkVersion: 'v1_17', image: 'flink:1.17' }).build();
  const allDigits = '12345678901234567890123456789012'; // YAML would read this unquoted as a number
  const legacy = buildFlinkClusterResources(d, inputs({ spec: d.spec, jobId: allDigits, restoreFrom: 'file:///sp/savepoint-123456-0123456789ab' })).configMap;
  const read = parseYaml(flinkConfigurationTextOf(legacy)!) as Record<string, unknown>;
  assert.equal(read['$internal.pipeline.job-id'], allDigits);
  assert.equal(read['execution.savepoint.path'], 'file:///sp/savepoint-123456-0123456789ab');
  assert.equal(read['parallelism.default'], '2');
  assert.equal(flinkConfigurationTextOf({ data: { 'flink-conf.yaml': '# comment\na: b # trailing\nbroken\nc: "d"\n' } }), 'a: "b"\nc: "\\"d\\""\n');
  assert.equal(flinkConfigurationTextOf({ data: { 'log4j-console.properties': '' } }), undefined);
  assert.equal(flinkConfigurationTextOf(undefined), undefined);
});

test('contract: a simulated Flink 1.17 JobManager reads the job id, restore path and RPC address from the rendered flink-conf.yaml', () => {
  const d = flinkDeployment('orders')
    .inNamespace('team-a')
    .withUid(UID)
    .withSpec({ flinkVersion: 'v1_17', image: 'flink:1.17' })
    .withFlinkConfiguration({ 'high-availability.type': 'kubernetes', 'high-availability.storageDir': 'file:///ha' })
    .build();
  const r = buildFlinkClusterResources(d, inputs({ spec: d.spec, restoreFrom: 'file:///flink-data/savepoints/savepoint-0f1e2d-0123456789ab' }));
  const c = mainContainer(r.jobManagerDeployment);
  const loaded = loadFlinkConfiguration(r.configMap.data, '1.17.0');
  assert.equal(loaded.file, 'flink-conf.yaml');
  const launch = buildJobManagerLaunch(c.args!, loaded.config, c.image);
  assert.equal(launch.flinkVersion, '1.17.0');
  assert.equal(launch.settings.pinnedJobId, JOB);
  assert.equal(
    launch.settings.savepointPath,
    'file:///flink-data/savepoints/savepoint-0f1e2d-0123456789ab',
    'from execution.savepoint.path (the Flink < 1.20 key)',
  );
  assert.equal(launch.config.get('jobmanager.rpc.address'), '$(_POD_IP_ADDRESS)', 'HA: -D overrides the rendered <name>.<ns>');
  assert.equal(loaded.config.get('jobmanager.rpc.address'), 'orders.team-a');
  assert.equal(launch.settings.highAvailability.enabled, true);
});

// Source: the Flink docker image's docker-entrypoint.sh: `jobmanager` starts the session cluster
// (jobmanager.sh start-foreground → StandaloneSessionClusterEntrypoint), `standalone-job` an
// application cluster.
test('a session cluster (no job) starts the session entry point `jobmanager`, and the simulation runs it as a session JobManager', async () => {
  const session = flinkDeployment('pool').withUid(UID).withoutJob().build();
  const r = buildFlinkClusterResources(session, inputs({ spec: session.spec }));
  const c = mainContainer(r.jobManagerDeployment);
  assert.deepEqual(c.args, ['jobmanager']);
  const ha = flinkDeployment('pool')
    .withUid(UID)
    .withoutJob()
    .withFlinkConfiguration({ 'high-availability.type': 'kubernetes', 'high-availability.storageDir': 'file:///ha' })
    .build();
  assert.deepEqual(mainContainer(buildFlinkClusterResources(ha, inputs({ spec: ha.spec })).jobManagerDeployment).args, [
    'jobmanager',
    '-D',
    'jobmanager.rpc.address=$(_POD_IP_ADDRESS)',
  ]);
  assert.equal(parseFlinkArgs(c.args).role, 'session-jobmanager');
  const launch = buildJobManagerLaunch(c.args, loadFlinkConfiguration(r.configMap.data, '1.20.0').config, c.image);
  const lineage = new LineageRecorder();
  const jm = new SimulatedJobManager({
    pod: { namespace: 'default', name: 'pool-jm', uid: 'uid-pool' },
    deployment: { namespace: 'default', name: 'pool' },
    launch,
    storage: new SnapshotStorage(),
    lineage,
    ha: null,
    random: seededRandom(1),
    timing: { jobStartDelayMs: 1, savepointDurationMs: 1, cancelDurationMs: 1, disposalDurationMs: 1, defaultCheckpointIntervalMs: null },
  });
  await jm.start();
  assert.deepEqual(jm.listJobs(), [], 'a session JobManager submits no job of its own');
  assert.equal(lineage.get('default', 'pool').submissions.length, 0);
  jm.stop();
});
