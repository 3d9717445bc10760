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
import { FLINK_GROUP } from './flink-deployment.js';
import { mergeDeep } from './flink-deployment-builder.js';
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

export class FlinkSessionJobBuilder {
  private namespace = 'default';
  private spec: FlinkSessionJobSpec = defaultSessionJobSpec();
  private generation: number | undefined;
  private uid: string | undefined;
  private labels: Record<string, string> | undefined;
  private finalizers: string[] | undefined;
  private statusV1: FlinkSessionJobStatusV1 | undefined;
  private statusV1beta1: FlinkSessionJobStatusV1beta1 | undefined;

  constructor(private readonly name: string) {}

  inNamespace(namespace: string): this {
    this.namespace = namespace;
    return this;
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
  /** Replaces the whole spec. */
  withExactSpec(spec: FlinkSessionJobSpec): this {
    this.spec = structuredClone(spec);
    return this;
  }
  withFlinkConfiguration(config: Record<string, unknown>): this {
    this.spec = mergeDeep(this.spec, { flinkConfiguration: config });
    return this;
  }
  withGeneration(generation: number): this {
    this.generation = generation;
    return this;
  }
  withUid(uid: string): this {
    this.uid = uid;
    return this;
  }
  withLabels(labels: Record<string, string>): this {
    this.labels = { ...this.labels, ...labels };
    return this;
  }
  withFinalizers(...finalizers: string[]): this {
    this.finalizers = finalizers;
    return this;
  }
  withStatus(status: FlinkSessionJobStatusV1): this {
    this.statusV1 = structuredClone(status);
    return this;
  }
  withLegacyStatus(status: FlinkSessionJobStatusV1beta1): this {
    this.statusV1beta1 = structuredClone(status);
    return this;
  }

  private metadata() {
    return {
      name: this.name,
      namespace: this.namespace,
      ...(this.generation !== undefined ? { generation: this.generation } : {}),
      ...(this.uid !== undefined ? { uid: this.uid } : {}),
      ...(this.labels !== undefined ? { labels: { ...this.labels } } : {}),
      ...(this.finalizers !== undefined ? { finalizers: [...this.finalizers] } : {}),
    };
  }

  /** The v1 object (what the operator works with). */
  build(): FlinkSessionJobV1 {
    return {
      apiVersion: `${FLINK_GROUP}/v1`,
      kind: FLINK_SESSION_JOB_KIND,
      metadata: this.metadata(),
      spec: structuredClone(this.spec),
      ...(this.statusV1 ? { status: structuredClone(this.statusV1) } : {}),
    };
  }

  /** The v1beta1 object (the Apache operator's layout). */
  buildV1beta1(): FlinkSessionJobV1beta1 {
    return {
      apiVersion: `${FLINK_GROUP}/v1beta1`,
      kind: FLINK_SESSION_JOB_KIND,
      metadata: this.metadata(),
      spec: structuredClone(this.spec),
      ...(this.statusV1beta1 ? { status: structuredClone(this.statusV1beta1) } : {}),
    };
  }
}

export function flinkSessionJob(name = 'basic-session-job'): FlinkSessionJobBuilder {
  return new FlinkSessionJobBuilder(name);
}
