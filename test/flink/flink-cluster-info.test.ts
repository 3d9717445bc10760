/**
 * status.clusterInfo's total-cpu and total-memory, with the Apache operator's arithmetic and
 * formatting (flink-kubernetes-operator utils/FlinkUtils.calculateClusterCpuUsage /
 * calculateClusterMemoryUsage, put with String.valueOf in service/AbstractFlinkService
 * .getClusterInfo), and how a pass's facts merge into the clusterInfo already written.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { FlinkDeploymentSpec } from '../../src/api/flink-deployment-spec.js';
import { clusterResourceTotals, javaDoubleString, mergeClusterInfo } from '../../src/flink/flink-cluster-info.js';

const GIB = 1024 ** 3;

function spec(overrides: Partial<FlinkDeploymentSpec>): FlinkDeploymentSpec {
  return {
    image: 'flink:1.20',
    flinkVersion: 'v1_20',
    jobManager: { resource: { cpu: 1, memory: '2048m' } },
    taskManager: { resource: { cpu: 2, memory: '4g' } },
    job: { jarURI: 'local:///opt/flink/usrlib/orders.jar', upgradeMode: 'stateless', parallelism: 4 },
    ...overrides,
  };
}

test('cpu: JobManager cores × replicas + TaskManager cores × TaskManagers; memory: process sizes in bytes', () => {
  const totals = clusterResourceTotals(spec({}), 3);
  assert.equal(totals.cpu, 1 + 2 * 3);
  assert.equal(totals.memoryBytes, 2 * GIB + 3 * 4 * GIB);
  const info = mergeClusterInfo(undefined, { totals });
  assert.deepEqual(info, { 'total-cpu': '7.0', 'total-memory': String(14 * GIB) });
});

test('standby JobManagers count (jobManager.replicas), as do the limit factors of the configuration', () => {
  const totals = clusterResourceTotals(
    spec({
      jobManager: { replicas: 2, resource: { cpu: 0.5, memory: '1g' } },
      flinkConfiguration: {
        'high-availability.type': 'kubernetes',
        'kubernetes.jobmanager.cpu.limit-factor': '2',
        'kubernetes.taskmanager.memory.limit-factor': '1.5',
      },
    }),
    2,
  );
  assert.equal(totals.cpu, 0.5 * 2 * 2 + 2 * 2);
  assert.equal(totals.memoryBytes, 2 * GIB + Math.round(4 * GIB * 1.5 * 2));
});

test('resources (requests and limits): the request, times limit ÷ request; cpu quantities like 500m', () => {
  const totals = clusterResourceTotals(
    spec({
      jobManager: { resources: { requests: { cpu: '500m', memory: '1Gi' }, limits: { cpu: '1', memory: '2Gi' } } },
      taskManager: { resources: { limits: { cpu: '2', memory: '4Gi' } } },
    }),
    1,
  );
  assert.equal(totals.cpu, 0.5 * 2 + 2);
  assert.equal(totals.memoryBytes, 2 * GIB + 4 * GIB);
});

test('unset cpu counts 1.0 per process (Apache reads kubernetes.*.cpu with default 1); unknown memory leaves total-memory out', () => {
  const totals = clusterResourceTotals(spec({ jobManager: {}, taskManager: {} }), 2);
  assert.equal(totals.cpu, 3);
  assert.equal(totals.memoryBytes, undefined);
  assert.deepEqual(mergeClusterInfo(undefined, { totals }), { 'total-cpu': '3.0' });
  const fromConfiguration = clusterResourceTotals(
    spec({
      jobManager: {},
      taskManager: {},
      flinkConfiguration: { 'jobmanager.memory.process.size': '1600m', 'taskmanager.memory.process.size': '1728m', 'kubernetes.taskmanager.cpu': '4' },
    }),
    1,
  );
  assert.equal(fromConfiguration.cpu, 5);
  assert.equal(fromConfiguration.memoryBytes, (1600 + 1728) * 1024 * 1024);
});

test('memory counts whole MiB of the process size (Flink MemorySize.getMebiBytes truncates)', () => {
  const totals = clusterResourceTotals(spec({ jobManager: { resource: { memory: '1048577b' } }, taskManager: { resource: { memory: '1m' } } }), 1);
  assert.equal(totals.memoryBytes, 2 * 1024 * 1024);
});

test("numbers read as Java's String.valueOf writes them", () => {
  assert.equal(javaDoubleString(3), '3.0');
  assert.equal(javaDoubleString(2.5), '2.5');
  assert.equal(javaDoubleString(0.1 + 0.2), '0.30000000000000004');
  assert.equal(javaDoubleString(12_000_000), '1.2E7');
  assert.equal(javaDoubleString(0.0005), '5.0E-4');
  assert.equal(javaDoubleString(0), '0.0');
});

test("merge: Apache puts this pass's values over the kept map and never removes a key", () => {
  const previous = { 'flink-version': '1.19.1', 'flink-revision': 'old @ 2024', 'state-size': '4096', 'total-cpu': '3.0' };
  assert.deepEqual(mergeClusterInfo(previous, {}), previous);
  assert.deepEqual(mergeClusterInfo(previous, { build: { version: '1.20.0', revision: 'b2ca390 @ 2022-02-03T14:54:22+01:00' }, stateSize: 8192 }), {
    'flink-version': '1.20.0',
    'flink-revision': 'b2ca390 @ 2022-02-03T14:54:22+01:00',
    'state-size': '8192',
    'total-cpu': '3.0',
  });
  assert.equal(mergeClusterInfo(undefined, {}), undefined);
});
