import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parse as parseYaml } from 'yaml';
import type { V1Container, V1Deployment } from '@kubernetes/client-node';
import { flinkDeployment } from '../../src/api/flink-deployment-builder.js';
import type { FlinkDeploymentSpec } from '../../src/api/flink-deployment-spec.js';
import { buildFlinkClusterResources, type FlinkClusterInputs } from '../../src/flink/flink-cluster-resources.js';
import { flinkConfigurationTextOf } from '../../src/flink/flink-config-configmap.js';
import { loadFlinkConfiguration, parseFlinkConfigYaml } from '../../src/devcluster/simulation/flink-configuration.js';
import { buildJobManagerLaunch, parseFlinkArgs } from '../../src/devcluster/simulation/jobmanager-launch.js';

const JOB = '0f1e2d3c4b5a69788796a5b4c3d2e1f0';
const UID = '6f1c2b9e-0000-4000-8000-000000000002';
const nativeDeployment = flinkDeployment('orders').inNamespace('team-a').withUid(UID).withGeneration(2).withSpec({ mode: 'native' }).build();
const inputs = (spec: FlinkDeploymentSpec = nativeDeployment.spec, over: Partial<FlinkClusterInputs> = {}): FlinkClusterInputs => ({
  spec,
  generation: 2,
  specHash: 'sha256-n',
  jobId: JOB,
  ...over,
});
const main = (d: V1Deployment): V1Container => d.spec!.template.spec!.containers.find((c) => c.name === 'flink-main-container')!;
const configOf = (r: ReturnType<typeof buildFlinkClusterResources>): Record<string, unknown> =>
  parseYaml(flinkConfigurationTextOf(r.configMap)!) as Record<string, unknown>;

test('native mode renders a JobManager Deployment, the two Services and the ConfigMap, and no TaskManager Deployment', () => {
  const r = buildFlinkClusterResources(nativeDeployment, inputs());
  assert.equal(r.mode, 'native');
  assert.equal(r.taskManagerDeployment, undefined);
  const native = { app: 'orders', type: 'flink-native-kubernetes' };
  assert.deepEqual(r.configMap.metadata?.labels, native);
  assert.deepEqual(r.restService.metadata?.labels, native);
  assert.deepEqual(r.internalService.metadata?.labels, native);
  const jmLabels = { ...native, component: 'jobmanager' };
  assert.deepEqual(r.jobManagerDeployment.metadata?.labels, jmLabels);
  assert.deepEqual(r.jobManagerDeployment.spec?.selector.matchLabels, jmLabels, 'Flink selects on all three labels');
  assert.deepEqual(r.jobManagerDeployment.spec?.template.metadata?.labels, jmLabels);
  assert.deepEqual(r.restService.spec?.selector, jmLabels);
  assert.deepEqual(r.internalService.spec?.selector, jmLabels);
  assert.equal(r.internalService.spec?.clusterIP, 'None');
  assert.equal(r.jobManagerDeployment.spec?.strategy, undefined, 'Flink sets no strategy; the operator never updates a native JobManager in place');
  assert.deepEqual(
    r.jobManagerDeployment.metadata?.ownerReferences?.map((o) => o.uid),
    [UID],
  );
  assert.deepEqual(r.jobManagerDeployment.metadata?.annotations, {
    'flinkdeployment.flink.apache.org/generation': '2',
    'flink-operator.io/spec-hash': 'sha256-n',
    'flink-operator.io/job-id': r.configMap.metadata?.annotations?.['flink-operator.io/job-id'],
  });
});

test('native JobManager container: Flink entry point with the bash-wrapped kubernetes-jobmanager.sh, ports, pod IP env, config volume, service account', () => {
  const jm = buildFlinkClusterResources(
    nativeDeployment,
    inputs({ ...nativeDeployment.spec, job: { ...nativeDeployment.spec.job!, args: ['--x', '1'] } }, { restoreFrom: 'file:///sp/1' }),
  ).jobManagerDeployment;
  const c = main(jm);
  assert.deepEqual(c.command, ['/docker-entrypoint.sh']);
  assert.deepEqual(
    c.args,
    ['bash', '-c', 'kubernetes-jobmanager.sh kubernetes-application '],
    'no job options in args: native reads them from the configuration',
  );
  assert.deepEqual(
    c.ports?.map((p) => [p.name, p.containerPort]),
    [
      ['rest', 8081],
      ['jobmanager-rpc', 6123],
      ['blobserver', 6124],
    ],
  );
  assert.deepEqual(
    c.env?.map((e) => e.name),
    ['_POD_IP_ADDRESS'],
  );
  assert.deepEqual(c.volumeMounts, [{ name: 'flink-config-volume', mountPath: '/opt/flink/conf' }]);
  assert.equal(c.image, 'flink:1.20');
  assert.equal(jm.spec?.template.spec?.serviceAccountName, 'flink');
  assert.equal(jm.spec?.replicas, 1);
});

test('native configuration: target, jars, entry class and args, image, service account, replicas, rest service type, cpu, restore path', () => {
  const spec: FlinkDeploymentSpec = {
    ...nativeDeployment.spec,
    imagePullPolicy: 'IfNotPresent',
    job: { ...nativeDeployment.spec.job!, args: ['--input', 'a b', '--fast'] },
  };
  const config = configOf(buildFlinkClusterResources(nativeDeployment, inputs(spec, { restoreFrom: 'file:///sp/7', allowNonRestoredState: true })));
  assert.equal(config['execution.target'], 'kubernetes-application');
  assert.equal(
    config['pipeline.jars'],
    'local:///opt/flink/examples/streaming/StateMachineExample.jar',
    'the jar URI as given (Flink native resolves local://)',
  );
  assert.equal(config['pipeline.classpaths'], undefined);
  assert.equal(config['$internal.application.main'], 'org.apache.flink.streaming.examples.statemachine.StateMachineExample');
  assert.equal(config['$internal.application.program-args'], '--input;a b;--fast');
  assert.equal(config['$internal.pipeline.job-id'], JOB);
  assert.equal(config['kubernetes.cluster-id'], 'orders');
  assert.equal(config['kubernetes.namespace'], 'team-a');
  assert.equal(config['kubernetes.container.image.ref'], 'flink:1.20');
  assert.equal(config['kubernetes.container.image.pull-policy'], 'IfNotPresent');
  assert.equal(config['kubernetes.service-account'], 'flink');
  assert.equal(config['kubernetes.rest-service.exposed.type'], 'ClusterIP');
  assert.equal(config['kubernetes.jobmanager.cpu'], '1');
  assert.equal(config['kubernetes.taskmanager.cpu'], '1');
  assert.equal(config['taskmanager.memory.process.size'], '1024m');
  assert.equal(config['taskmanager.numberOfTaskSlots'], '2');
  assert.equal(config['parallelism.default'], '2');
  assert.equal(config['jobmanager.rpc.address'], 'orders.team-a');
  assert.equal(config['execution.shutdown-on-application-finish'], 'false');
  assert.equal(config['execution.state-recovery.path'], 'file:///sp/7');
  assert.equal(config['execution.state-recovery.ignore-unclaimed-state'], 'true');
  assert.equal(config['kubernetes.pod-template-file.taskmanager'], undefined, 'no TaskManager template in the spec');
});

test('older Flink versions get kubernetes.container.image; a user rest-service type is kept', () => {
  const spec: FlinkDeploymentSpec = {
    ...nativeDeployment.spec,
    flinkVersion: 'v1_16',
    flinkConfiguration: { ...nativeDeployment.spec.flinkConfiguration, 'kubernetes.rest-service.exposed.type': 'NodePort' },
  };
  const config = configOf(buildFlinkClusterResources(nativeDeployment, inputs(spec)));
  assert.equal(config['kubernetes.container.image'], 'flink:1.20');
  assert.equal(config['kubernetes.container.image.ref'], undefined);
  assert.equal(config['kubernetes.rest-service.exposed.type'], 'NodePort');
  assert.equal(config['execution.savepoint.path'], undefined, 'not restoring: no restore path');
});

test('TaskManager pod templates reach the JobManager as a file in its configuration directory', () => {
  const spec: FlinkDeploymentSpec = {
    ...nativeDeployment.spec,
    podTemplate: { metadata: { labels: { team: 'a' } }, spec: { nodeSelector: { pool: 'flink' } } },
    taskManager: {
      ...nativeDeployment.spec.taskManager,
      podTemplate: { spec: { containers: [{ name: 'flink-main-container', env: [{ name: 'TM', value: '1' }] }] } },
    },
  };
  const r = buildFlinkClusterResources(nativeDeployment, inputs(spec));
  assert.equal(configOf(r)['kubernetes.pod-template-file.taskmanager'], '/opt/flink/conf/taskmanager-pod-template.yaml');
  const template = parseYaml(r.configMap.data!['taskmanager-pod-template.yaml']) as {
    kind: string;
    metadata: { labels: Record<string, string> };
    spec: { nodeSelector: Record<string, string>; containers: Array<{ name: string; env: unknown[] }> };
  };
  assert.equal(template.kind, 'Pod');
  assert.deepEqual(template.metadata.labels, { team: 'a' });
  assert.deepEqual(template.spec.nodeSelector, { pool: 'flink' });
  assert.deepEqual(template.spec.containers[0]?.env, [{ name: 'TM', value: '1' }]);
});

test('an unset mode renders native; standalone stays standalone', () => {
  const unset = flinkDeployment('orders').withUid(UID).build();
  delete unset.spec.mode;
  assert.equal(buildFlinkClusterResources(unset, inputs(unset.spec)).mode, 'native');
  const standalone = flinkDeployment('orders').withUid(UID).build();
  const r = buildFlinkClusterResources(standalone, inputs(standalone.spec));
  assert.equal(r.mode, 'standalone');
  assert.ok(r.taskManagerDeployment);
  assert.equal(r.jobManagerDeployment.metadata?.labels?.type, 'flink-standalone-kubernetes');
});

test('the simulated JobManager reads the native rendering as a native application JobManager', () => {
  const r = buildFlinkClusterResources(
    nativeDeployment,
    inputs({ ...nativeDeployment.spec, job: { ...nativeDeployment.spec.job!, args: ['--a', 'b'] } }, { restoreFrom: 'file:///sp/9' }),
  );
  const c = main(r.jobManagerDeployment);
  const launch = buildJobManagerLaunch(c.args!, parseFlinkConfigYaml(r.configMap.data!['config.yaml']), c.image);
  assert.equal(launch.args.role, 'application-jobmanager');
  assert.equal(launch.args.native, true);
  assert.equal(launch.jobName, 'StateMachineExample');
  assert.deepEqual(launch.args.programArgs, ['--a', 'b']);
  assert.equal(launch.restoreFrom, 'file:///sp/9');
  assert.equal(launch.settings.pinnedJobId, JOB);
});

test('rendering is deterministic', () => {
  assert.deepEqual(buildFlinkClusterResources(nativeDeployment, inputs()), buildFlinkClusterResources(nativeDeployment, inputs()));
});

test('a native session cluster (no job) targets kubernetes-session', () => {
  const session = flinkDeployment('pool').withUid(UID).withoutJob().withSpec({ mode: 'native' }).build();
  const r = buildFlinkClusterResources(session, inputs(session.spec));
  assert.deepEqual(main(r.jobManagerDeployment).args, ['bash', '-c', 'kubernetes-jobmanager.sh kubernetes-session ']);
  assert.equal(configOf(r)['execution.target'], 'kubernetes-session');
  assert.equal(configOf(r)['pipeline.jars'], undefined);
  assert.equal(parseFlinkArgs(main(r.jobManagerDeployment).args!).role, 'session-jobmanager', 'the simulation starts it as a session JobManager');
});

// Sources: Flink 1.15-1.18 read only conf/flink-conf.yaml (GlobalConfiguration); the native
// application entry point reads its job from $internal.application.* in that configuration
// (KubernetesApplicationClusterEntrypoint), so on those versions everything must be in that file.
test('native mode on Flink 1.17 renders flink-conf.yaml, from which a simulated 1.17 native JobManager reads its job and restore path', () => {
  const spec: FlinkDeploymentSpec = {
    ...nativeDeployment.spec,
    flinkVersion: 'v1_17',
    image: 'flink:1.17',
    job: { ...nativeDeployment.spec.job!, args: ['--a', 'b'] },
  };
  const r = buildFlinkClusterResources(nativeDeployment, inputs(spec, { restoreFrom: 'file:///sp/9' }));
  assert.deepEqual(Object.keys(r.configMap.data!), ['flink-conf.yaml', 'log4j-console.properties']);
  const c = main(r.jobManagerDeployment);
  const loaded = loadFlinkConfiguration(r.configMap.data, '1.17.0');
  assert.equal(loaded.file, 'flink-conf.yaml');
  const launch = buildJobManagerLaunch(c.args!, loaded.config, c.image);
  assert.equal(launch.args.native, true);
  assert.equal(launch.args.jobClassName, 'org.apache.flink.streaming.examples.statemachine.StateMachineExample');
  assert.deepEqual(launch.args.programArgs, ['--a', 'b']);
  assert.equal(launch.restoreFrom, 'file:///sp/9', 'native mode has no --fromSavepoint: only the file carries it');
  assert.equal(launch.settings.pinnedJobId, JOB);
  assert.equal(launch.config.get('kubernetes.container.image.ref'), 'flink:1.17');
});
