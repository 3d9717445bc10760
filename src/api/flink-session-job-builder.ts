/**
 * Fixture builder for FlinkSessionJob objects, for tests and examples:
 *
 *   flinkSessionJob('orders').onCluster('sessions').inNamespace('team-a').withJob({ parallelism: 4 }).build()
 *
 * Guarantees
 * - Starts from a small spec that validates (flink-session-job-validation.ts), also against the
 *   session cluster `flinkDeployment(<deploymentName>).withoutJob()` builds: an https jar, a
 *   savepoint upgrade mode (the cluster's default configuration has both directories).
 * - Deep-merges what the test says over it (arrays replace), as flink-deployment-builder.ts does;
 *   `build()` and `buildV1beta1()` return fresh copies, so one builder can make many objects.
 */
import { CustomResourceBuilder, mergeDeep } from './custom-resource-builder.js';
import { FLINK_SESSION_JOB_KIND, type FlinkSessionJobV1, type FlinkSessionJobV1beta1 } from './flink-session-job.js';
import type { FlinkSessionJobSpec, SessionJobJobSpec } from './flink-session-job-spec.js';
import type { FlinkSessionJobStatusV1, FlinkSessionJobStatusV1beta1 } from './flink-session-job-status.js';

/** The session cluster the default spec runs on. */
export const DEFAULT_SESSION_CLUSTER_NAME = 'session-cluster';

export function defaultSessionJobSpec(): FlinkSessionJobSpec {
  return {
    deploymentName: DEFAULT_SESSION_CLUSTER_NAME,
    job: {
      jarURI: 'https://repo1.maven.org/maven2/org/apache/flink/flink-examples-streaming/2.2.0/flink-examples-streaming-2.2.0-TopSpeedWindowing.jar',
      entryClass: 'org.apache.flink.streaming.examples.windowing.TopSpeedWindowing',
      parallelism: 2,
      upgradeMode: 'savepoint',
      state: 'running',
    },
  };
}

export class FlinkSessionJobBuilder extends CustomResourceBuilder<
  typeof FLINK_SESSION_JOB_KIND,
  FlinkSessionJobSpec,
  FlinkSessionJobStatusV1,
  FlinkSessionJobStatusV1beta1
> {
  constructor(name: string) {
    super(name, FLINK_SESSION_JOB_KIND, defaultSessionJobSpec());
  }

  /** Sets spec.deploymentName, the session cluster the job runs on. */
  onCluster(deploymentName: string): this {
    this.spec = { ...this.spec, deploymentName };
    return this;
  }
  /** Deep-merges `job` over the current spec.job (arrays replace). */
  withJob(job: Partial<SessionJobJobSpec>): this {
    this.spec = mergeDeep(this.spec, { job });
    return this;
  }
  /** Deep-merges `spec` over the current spec (arrays replace). */
  withSpec(spec: Partial<Omit<FlinkSessionJobSpec, 'job'>> & { job?: Partial<SessionJobJobSpec> }): this {
    this.spec = mergeDeep(this.spec, spec);
    return this;
  }

  /** The v1 object (what the operator works with). */
  build(): FlinkSessionJobV1 {
    return this.buildV1Object();
  }

  /** The v1beta1 object (the Apache operator's layout). */
  buildV1beta1(): FlinkSessionJobV1beta1 {
    return this.buildV1beta1Object();
  }
}

export function flinkSessionJob(name = 'basic-session-job'): FlinkSessionJobBuilder {
  return new FlinkSessionJobBuilder(name);
}
