/**
 * Legacy (Apache operator v1beta1) FlinkDeployments in every variant the migration must handle,
 * built from the fixture builder and the real captures in test/api/fixtures/ (= ../shared/fixtures/).
 */
import type { FlinkDeploymentV1beta1 } from '../../src/api/flink-deployment.js';
import type { FlinkDeploymentStatusV1beta1 } from '../../src/api/flink-deployment-status.js';
import { defaultSpec, flinkDeployment } from '../../src/api/flink-deployment-builder.js';
import { loadSharedFixtures } from '../api/shared-fixtures.js';

export interface LegacyVariant {
  /** What the variant is about (test titles). */
  readonly label: string;
  readonly object: FlinkDeploymentV1beta1;
  /** The legacy status as the Apache operator wrote it (may hold nulls). */
  readonly status: Record<string, unknown>;
}

const spec = defaultSpec();
/** The current Apache format, as Jackson writes it (nulls for unset fields, `2.0` for a double). */
const currentFormat = (overrides: Record<string, unknown> = {}) =>
  JSON.stringify({
    spec: { ...spec, restartNonce: null, ingress: null, logConfiguration: null, job: { ...spec.job, savepointTriggerNonce: null, ...overrides } },
    resource_metadata: { apiVersion: 'flink.apache.org/v1beta1', firstDeployment: false },
  }).replace('"cpu":1,', '"cpu":1.0,');

const userFields = {
  observedGeneration: 3,
  lifecycleState: 'STABLE',
  jobManagerDeploymentStatus: 'READY',
  clusterInfo: { 'flink-version': '1.20.1', 'total-cpu': '2.0' },
  taskManager: { labelSelector: 'component=taskmanager,app=x', replicas: 1 },
  conditions: [{ type: 'Running', status: 'True', reason: 'Running', message: 'Job status RUNNING', lastTransitionTime: '2026-07-18T06:02:16Z' }],
};

const jobUser = {
  jobName: 'StateMachineExample',
  jobId: 'a1b2c3d4e5f60718293a4b5c6d7e8f90',
  state: 'RUNNING',
  startTime: '1784354379909',
  updateTime: '1784354404067',
};
const lastSavepoint = {
  timeStamp: 1784354000000,
  location: 's3://b/savepoints/savepoint-1',
  triggerType: 'UPGRADE',
  formatType: 'CANONICAL',
  triggerNonce: null,
};

function variant(
  label: string,
  name: string,
  status: Record<string, unknown>,
  build: (b: ReturnType<typeof flinkDeployment>) => ReturnType<typeof flinkDeployment> = (b) => b,
): LegacyVariant {
  return { label, object: build(flinkDeployment(name).withGeneration(3)).buildV1beta1(), status };
}

export function builtVariants(): LegacyVariant[] {
  return [
    variant('current format (resource_metadata without generation), "cpu":1.0, nulls', 'current', {
      ...userFields,
      jobStatus: {
        ...jobUser,
        savepointInfo: { lastSavepoint, savepointHistory: [lastSavepoint], lastPeriodicSavepointTimestamp: 0, triggerId: null },
        checkpointInfo: { lastPeriodicCheckpointTimestamp: 0, lastCheckpoint: null },
      },
      reconciliationStatus: { reconciliationTimestamp: 1784354370115, lastReconciledSpec: currentFormat(), lastStableSpec: currentFormat(), state: 'DEPLOYED' },
      error: null,
    }),
    variant('resource_metadata.metadata.generation (FLINK-27820 format)', 'with-generation', {
      ...userFields,
      jobStatus: { ...jobUser, savepointInfo: { savepointHistory: [] } },
      reconciliationStatus: {
        reconciliationTimestamp: 1784354370115,
        lastReconciledSpec: JSON.stringify({
          spec,
          resource_metadata: { apiVersion: 'flink.apache.org/v1beta1', metadata: { generation: 3 }, firstDeployment: false },
        }),
        lastStableSpec: JSON.stringify({
          spec,
          resource_metadata: { apiVersion: 'flink.apache.org/v1beta1', metadata: { generation: 2 }, firstDeployment: true },
        }),
        state: 'DEPLOYED',
      },
    }),
    variant('top-level apiVersion (early v1beta1 format)', 'top-level-api-version', {
      ...userFields,
      jobStatus: { ...jobUser },
      reconciliationStatus: { lastReconciledSpec: JSON.stringify({ ...spec, apiVersion: 'flink.apache.org/v1beta1' }), state: 'DEPLOYED' },
    }),
    variant('bare spec (first v1beta1 format)', 'bare', {
      ...userFields,
      jobStatus: { ...jobUser },
      reconciliationStatus: { lastReconciledSpec: JSON.stringify(spec), state: 'DEPLOYED' },
    }),
    variant('caught mid-upgrade (UPGRADING, stop-with-savepoint pending, upgradeSavepointPath)', 'mid-upgrade', {
      ...userFields,
      lifecycleState: 'UPGRADING',
      jobStatus: {
        ...jobUser,
        state: 'RUNNING',
        upgradeSavepointPath: 's3://b/savepoints/savepoint-0',
        savepointInfo: {
          triggerId: 'trigger-42',
          triggerTimestamp: 1784354500000,
          triggerType: 'UPGRADE',
          formatType: 'CANONICAL',
          savepointHistory: [lastSavepoint],
          lastSavepoint,
        },
        checkpointInfo: { triggerId: 'cp-7', triggerTimestamp: 1784354500001, triggerType: 'MANUAL', formatType: 'FULL' },
      },
      reconciliationStatus: {
        reconciliationTimestamp: 1784354500000,
        lastReconciledSpec: currentFormat({ parallelism: 4 }),
        lastStableSpec: currentFormat(),
        state: 'UPGRADING',
      },
    }),
    variant(
      'session cluster without job',
      'session',
      {
        lifecycleState: 'STABLE',
        jobManagerDeploymentStatus: 'READY',
        observedGeneration: 1,
        jobStatus: { savepointInfo: { savepointHistory: [] }, checkpointInfo: {} },
        reconciliationStatus: {
          lastReconciledSpec: JSON.stringify({
            spec: (({ job: _j, ...rest }) => rest)(spec),
            resource_metadata: { apiVersion: 'flink.apache.org/v1beta1', firstDeployment: false },
          }),
          state: 'DEPLOYED',
        },
      },
      (b) => b.withoutJob(),
    ),
    variant('only reconciliationStatus, no jobStatus at all', 'no-job-status', {
      lifecycleState: 'DEPLOYED',
      reconciliationStatus: { lastReconciledSpec: JSON.stringify(spec), state: 'DEPLOYED' },
    }),
  ];
}

/** The three real status captures, each as a v1beta1 object (the CMF capture has no spec: the builder's). */
export function captureVariants(): LegacyVariant[] {
  return loadSharedFixtures()
    .filter((f) => f.status !== undefined)
    .map((f, index) => {
      const name = `capture-${index}`;
      const builder = flinkDeployment(name).withGeneration(f.metadata?.generation ?? 1);
      if (f.spec) builder.withExactSpec(f.spec);
      return { label: `real capture ${f.file}`, object: builder.buildV1beta1(), status: structuredClone(f.status) as unknown as Record<string, unknown> };
    });
}

/** A status the codec must refuse: `lastReconciledSpec` is not JSON. */
export function malformedStatus(): FlinkDeploymentStatusV1beta1 {
  return {
    lifecycleState: 'STABLE',
    jobStatus: { jobId: 'j1', state: 'RUNNING' },
    reconciliationStatus: { lastReconciledSpec: '{"spec":{"job":', state: 'DEPLOYED' },
  };
}
