/**
 * Which configuration file a simulated Flink process reads, by its version (from the image tag),
 * and how: Flink 1.x before 1.19 reads only conf/flink-conf.yaml in the legacy flat format; 1.19
 * and 1.20 read config.yaml, else flink-conf.yaml; 2.x reads only config.yaml; the file missing
 * from a mounted configuration directory stops the JobManager at start.
 *
 * Sources: Flink 1.x GlobalConfiguration.loadConfiguration / loadYAMLResource (flink-conf.yaml,
 * "The Flink config file '…' (…) does not exist." as IllegalConfigurationException, the legacy
 * line rules), Flink 2.0 GlobalConfiguration (config.yaml only, same exception), FLIP-366 (1.19's
 * config.yaml with fallback to flink-conf.yaml), Flink's FlinkConfMountDecorator (native
 * TaskManagers mount the file the JobManager loaded).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { V1Pod } from '@kubernetes/client-node';
import { loadFlinkConfiguration, parseLegacyFlinkConf } from '../../../src/devcluster/simulation/flink-configuration.js';
import { FlinkProcessRuntime } from '../../../src/devcluster/simulation/flink-process-runtime.js';
import { buildNativeTaskManagerPod } from '../../../src/devcluster/simulation/native-resource-manager.js';
import { LineageRecorder } from '../../../src/devcluster/simulation/lineage-recorder.js';
import { SnapshotStorage } from '../../../src/devcluster/simulation/snapshot-storage.js';
import { seededRandom } from '../../../src/devcluster/simulation/simulation-random.js';

const PINNED = '0123456789abcdef0123456789abcdef';
const OTHER = 'fedcba9876543210fedcba9876543210';

test('the legacy parser reads flink-conf.yaml as Flink 1.x: comments, the first ": ", trimmed, verbatim values, bad lines skipped', () => {
  const text = [
    '# a comment: with a colon',
    'jobmanager.rpc.address: localhost # trailing comment',
    'jobmanager.rpc.port   : 6123',
    'mykey3:myvalue3',
    'kubernetes.jobmanager.annotations: a: b, c: d',
    'pipeline.name: "quoted"',
    's3.secret-key: abc#123',
    'empty.value: ',
    ': no key',
    '   ',
    'repeated: first',
    'repeated: second\r',
    'tab.value:\tx',
  ].join('\n');
  assert.deepEqual(Object.fromEntries(parseLegacyFlinkConf(text)), {
    'jobmanager.rpc.address': 'localhost',
    'jobmanager.rpc.port': '6123',
    'kubernetes.jobmanager.annotations': 'a: b, c: d',
    'pipeline.name': '"quoted"',
    's3.secret-key': 'abc',
    repeated: 'second',
  });
});

test('which file each Flink version loads from the mounted configuration directory', () => {
  const both = { 'config.yaml': `$internal.pipeline.job-id: "${OTHER}"\n`, 'flink-conf.yaml': `$internal.pipeline.job-id: ${PINNED}\n` };
  const onlyStandard = { 'config.yaml': both['config.yaml'] };
  const onlyLegacy = { 'flink-conf.yaml': both['flink-conf.yaml'] };
  const jobId = (files: Record<string, string>, version: string) => loadFlinkConfiguration(files, version).config.get('$internal.pipeline.job-id');

  for (const version of ['1.15.4', '1.17.2', '1.18.1']) {
    assert.equal(loadFlinkConfiguration(both, version).file, 'flink-conf.yaml', version);
    assert.equal(jobId(both, version), PINNED, `${version} ignores config.yaml`);
    assert.throws(
      () => loadFlinkConfiguration(onlyStandard, version),
      /IllegalConfigurationException: The Flink config file '\/opt\/flink\/conf\/flink-conf\.yaml' \(\/opt\/flink\/conf\/flink-conf\.yaml\) does not exist\./,
      version,
    );
  }
  for (const version of ['1.19.1', '1.20.0']) {
    assert.equal(jobId(both, version), OTHER, `${version}: config.yaml first`);
    assert.equal(jobId(onlyLegacy, version), PINNED, `${version}: falls back to flink-conf.yaml`);
    assert.equal(loadFlinkConfiguration(onlyLegacy, version).file, 'flink-conf.yaml');
  }
  assert.equal(jobId(both, '2.0.0'), OTHER);
  assert.throws(
    () => loadFlinkConfiguration(onlyLegacy, '2.1.0'),
    /The Flink config file '\/opt\/flink\/conf\/config\.yaml' .* does not exist/,
    '2.x never reads flink-conf.yaml',
  );
  assert.throws(() => loadFlinkConfiguration({ 'log4j-console.properties': '' }, '1.20.0'), /config\.yaml.*does not exist/);
  assert.deepEqual(loadFlinkConfiguration(undefined, '1.17.0'), { file: null, config: new Map() }, 'nothing mounted: the image defaults');
  // legacy values are not unquoted; standard YAML values are
  assert.equal(loadFlinkConfiguration({ 'flink-conf.yaml': 'pipeline.name: "x"\n' }, '1.17.0').config.get('pipeline.name'), '"x"');
  assert.equal(loadFlinkConfiguration({ 'config.yaml': 'pipeline.name: "x"\n' }, '1.19.0').config.get('pipeline.name'), 'x');
});

function jobManagerPod(uid: string, image: string): V1Pod {
  return {
    metadata: { namespace: 'ns1', name: `demo-${uid}`, uid, labels: { app: 'demo', component: 'jobmanager' } },
    spec: {
      containers: [
        {
          name: 'flink-main-container',
          image,
          args: ['standalone-job', '--job-classname', 'org.example.Demo'],
          volumeMounts: [{ name: 'flink-config-volume', mountPath: '/opt/flink/conf' }],
        },
      ],
      volumes: [{ name: 'flink-config-volume', configMap: { name: 'flink-config-demo' } }],
    },
  };
}

test('a Flink 1.17 JobManager sees none of a config.yaml: alone it fails to start, next to a flink-conf.yaml it is ignored (own job id)', async () => {
  const lineage = new LineageRecorder();
  const runtime = new FlinkProcessRuntime({
    lineage,
    storage: new SnapshotStorage(),
    ha: null,
    random: seededRandom(3),
    timing: { jobStartDelayMs: 1, savepointDurationMs: 1, cancelDurationMs: 1, disposalDurationMs: 1, defaultCheckpointIntervalMs: null },
  });
  try {
    const pinnedInConfigYaml = `$internal.pipeline.job-id: "${PINNED}"\nparallelism.default: "3"\n`;
    const onlyStandard = new Map([['flink-config-demo', { 'config.yaml': pinnedInConfigYaml }]]);
    const crashed = await runtime.podStarted(jobManagerPod('a', 'flink:1.17'), onlyStandard);
    assert.equal(crashed.ok, false);
    assert.match(
      crashed.ok ? '' : crashed.message,
      /Flink JobManager failed to start: .*The Flink config file '\/opt\/flink\/conf\/flink-conf\.yaml'.*does not exist/,
    );
    assert.equal(runtime.jobManagerOf('a'), undefined, 'no JobManager process (the kubelet crash-loops the container)');

    const both = new Map([['flink-config-demo', { 'config.yaml': pinnedInConfigYaml, 'flink-conf.yaml': 'parallelism.default: 2\n' }]]);
    assert.deepEqual(await runtime.podStarted(jobManagerPod('b', 'flink:1.17.2'), both), { ok: true });
    const jm = runtime.jobManagerOf('b')!;
    assert.equal(jm.launch.settings.parallelism, 2, 'read from flink-conf.yaml');
    const [job] = jm.listJobs();
    assert.ok(job);
    assert.notEqual(job.jobId, PINNED, 'the job id pinned only in config.yaml is not seen: Flink generates its own');
    assert.match(job.jobId, /^[0-9a-f]{32}$/);

    // the same ConfigMap on Flink 1.20 (the default image version): config.yaml wins
    assert.deepEqual(await runtime.podStarted(jobManagerPod('c', 'flink:1.20'), both), { ok: true });
    assert.equal(runtime.jobManagerOf('c')!.listJobs()[0]?.jobId, PINNED);
    await sleep(5);
  } finally {
    runtime.stopAll();
  }
});

test('native TaskManagers mount the configuration file their JobManager read', () => {
  const config = new Map([['kubernetes.cluster-id', 'orders']]);
  const items = (configFile?: string) =>
    buildNativeTaskManagerPod({
      namespace: 'ns',
      clusterId: 'orders',
      podName: 'orders-taskmanager-1-1',
      ownerUid: 'u',
      config,
      ...(configFile ? { configFile } : {}),
    }).spec?.volumes?.[0]?.configMap?.items;
  assert.deepEqual(items('flink-conf.yaml'), [
    { key: 'flink-conf.yaml', path: 'flink-conf.yaml' },
    { key: 'log4j-console.properties', path: 'log4j-console.properties' },
  ]);
  assert.deepEqual(items(), [
    { key: 'config.yaml', path: 'config.yaml' },
    { key: 'log4j-console.properties', path: 'log4j-console.properties' },
  ]);
});
