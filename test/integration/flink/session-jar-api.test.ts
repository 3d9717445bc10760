/**
 * The operator's jar primitives (FlinkRestClient.uploadJar / listJars / runJar / deleteJar and
 * fetchSessionJobJar) against a simulated Flink session JobManager on the development cluster,
 * reached through the API server's service proxy as the operator reaches it. The session cluster is
 * what the operator renders for a FlinkDeployment without `job` (container args `jobmanager`).
 *
 * Flink behaviour asserted (flink-runtime-web): JarUploadHandler stores the upload and answers its
 * path, JarListHandler lists it, JarRunHandler submits the job under the requested `jobId` and
 * answers 400 caused by the Dispatcher's DuplicateJobSubmissionException for an id the cluster
 * already has, JarDeleteHandler removes the jar (and answers 400 for one it does not have).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { flinkDeployment } from '../../../src/api/flink-deployment-builder.js';
import { startSimulatedCluster } from '../../../src/devcluster/simulated-cluster.js';
import { buildFlinkClusterResources } from '../../../src/flink/flink-cluster-resources.js';
import { flinkRestClientFor } from '../../../src/flink/flink-rest-access.js';
import { isDuplicateJobSubmission } from '../../../src/flink/flink-rest-error.js';
import { fetchSessionJobJar } from '../../../src/flink/session-job-artifacts.js';

const NAMESPACE = 'default';
const JOB = '5e55a0b0000000000000000000000001';
const ENTRY_CLASS = 'org.apache.flink.streaming.examples.statemachine.StateMachineExample';

async function eventually<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`${what} not reached within ${timeoutMs} ms${last instanceof Error ? `; last error: ${last.message}` : ''}`);
    await sleep(20);
  }
}

test('session cluster jar API: upload the empty jar, list, run under a fixed job id, a duplicate run is recognised, delete', async () => {
  const sim = await startSimulatedCluster({ simulation: { podReadyDelayMs: 10, jobStartDelayMs: 10, savepointDurationMs: 20 } });
  try {
    const kc = sim.cluster.kubeConfig();
    const session = flinkDeployment('sessions').inNamespace(NAMESPACE).withUid('00000000-0000-0000-0000-00000000a11b').withoutJob().build();
    const resources = buildFlinkClusterResources(session, { spec: session.spec, generation: 1, specHash: 'session', jobId: JOB });
    for (const object of [resources.configMap, resources.restService, resources.internalService, resources.jobManagerDeployment]) {
      delete object.metadata?.ownerReferences; // no FlinkDeployment object exists to own them
    }
    assert.equal(resources.jobManagerDeployment.spec?.template.spec?.containers[0].args?.[0], 'jobmanager', 'a session cluster');
    const core = kc.makeApiClient(CoreV1Api);
    await core.createNamespacedConfigMap({ namespace: NAMESPACE, body: resources.configMap });
    await core.createNamespacedService({ namespace: NAMESPACE, body: resources.restService });
    await core.createNamespacedService({ namespace: NAMESPACE, body: resources.internalService });
    await kc.makeApiClient(AppsV1Api).createNamespacedDeployment({ namespace: NAMESPACE, body: resources.jobManagerDeployment });

    const flink = flinkRestClientFor(session, { mode: 'apiserver-proxy', kubeConfig: kc, timeouts: { requestMs: 2_000 }, retry: { getAttempts: 1 } });
    assert.deepEqual(await eventually('session JobManager up', 10_000, () => flink.listJobs()), [], 'a session cluster starts no job');

    // A session job without jarURI: the empty jar, the entry class coming from the cluster's classpath.
    const jar = await fetchSessionJobJar(undefined);
    const jarId = await flink.uploadJar(jar.bytes, jar.fileName);
    assert.match(jarId, /^[0-9a-f-]{36}_empty\.jar$/);
    assert.deepEqual(
      (await flink.listJars()).map((f) => [f.id, f.name]),
      [[jarId, 'empty.jar']],
    );

    assert.equal(await flink.runJar(jarId, { jobId: JOB, entryClass: ENTRY_CLASS, parallelism: 1, args: ['--error-rate', '0.0'] }), JOB);
    const running = await eventually('job RUNNING under the fixed id', 10_000, async () => {
      const job = await flink.getJob(JOB);
      return job?.state === 'RUNNING' ? job : undefined;
    });
    assert.equal(running.jid, JOB);
    assert.deepEqual(
      (await flink.listJobs()).map((j) => j.jid),
      [JOB],
    );

    // The answer to a run can be lost; running the same id again must not start a second job.
    const duplicate = await flink.runJar(jarId, { jobId: JOB, entryClass: ENTRY_CLASS }).then(
      () => assert.fail('a second run of the same job id must be refused'),
      (error: unknown) => error,
    );
    assert.ok(isDuplicateJobSubmission(duplicate), String(duplicate));
    assert.equal(duplicate.status, 400);
    assert.deepEqual(
      sim.simulation.lineage(NAMESPACE, 'sessions').submissions.map((s) => [s.jobId, s.jarId, s.entryClass]),
      [[JOB, jarId, ENTRY_CLASS]],
      'one submission',
    );

    await flink.deleteJar(jarId);
    assert.deepEqual(await flink.listJars(), []);
    await flink.deleteJar(jarId); // already gone: still deleted
    assert.equal((await flink.getJob(JOB))?.state, 'RUNNING', 'deleting the jar leaves its job running');
  } finally {
    await sim.stop();
  }
});
