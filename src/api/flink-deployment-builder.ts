/**
 * Fixture builder for FlinkDeployment objects, for tests and examples:
 *
 *   flinkDeployment('orders').inNamespace('team-a').withSpec({ job: { parallelism: 4 } }).build()
 *
 * Starts from a small valid spec (standalone application mode, savepoint upgrades) and deep-merges
 * what the test says over it; `withoutJob()` makes a session cluster.
 */
import type { FlinkDeploymentSpec } from './flink-deployment-spec.js';
import type { FlinkDeploymentStatusV1, FlinkDeploymentStatusV1beta1 } from './flink-deployment-status.js';
import { FLINK_DEPLOYMENT_KIND, FLINK_GROUP, type FlinkDeploymentV1, type FlinkDeploymentV1beta1 } from './flink-deployment.js';

type DeepPartial<T> = T extends readonly (infer U)[] ? U[] : T extends object ? { [K in keyof T]?: DeepPartial<T[K]> } : T;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Deep merge for plain objects; arrays and scalars in `over` replace. */
export function mergeDeep<T>(base: T, over: unknown): T {
  if (!isPlainObject(base) || !isPlainObject(over)) return (over === undefined ? base : over) as T;
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    out[key] = value === undefined ? out[key] : mergeDeep(out[key], value);
  }
  return out as T;
}

export function defaultSpec(): FlinkDeploymentSpec {
  return {
    image: 'flink:1.20',
    flinkVersion: 'v1_20',
    mode: 'standalone',
    serviceAccount: 'flink',
    flinkConfiguration: {
      'taskmanager.numberOfTaskSlots': '2',
      'execution.checkpointing.savepoint-dir': 'file:///flink-data/savepoints',
      'execution.checkpointing.dir': 'file:///flink-data/checkpoints',
    },
    jobManager: { resource: { cpu: 1, memory: '1024m' } },
    taskManager: { resource: { cpu: 1, memory: '1024m' } },
    job: {
      jarURI: 'local:///opt/flink/examples/streaming/StateMachineExample.jar',
      entryClass: 'org.apache.flink.streaming.examples.statemachine.StateMachineExample',
      parallelism: 2,
      upgradeMode: 'savepoint',
      state: 'running',
    },
  };
}

export class FlinkDeploymentBuilder {
  private namespace = 'default';
  private spec: FlinkDeploymentSpec = defaultSpec();
  private generation: number | undefined;
  private uid: string | undefined;
  private labels: Record<string, string> | undefined;
  private finalizers: string[] | undefined;
  private statusV1: FlinkDeploymentStatusV1 | undefined;
  private statusV1beta1: FlinkDeploymentStatusV1beta1 | undefined;

  constructor(private readonly name: string) {}

  inNamespace(namespace: string): this {
    this.namespace = namespace;
    return this;
  }
  /** Deep-merges `spec` over the current spec (arrays replace). */
  withSpec(spec: DeepPartial<FlinkDeploymentSpec>): this {
    this.spec = mergeDeep(this.spec, spec);
    return this;
  }
  /** Replaces the whole spec. */
  withExactSpec(spec: FlinkDeploymentSpec): this {
    this.spec = structuredClone(spec);
    return this;
  }
  withFlinkConfiguration(config: Record<string, unknown>): this {
    this.spec = mergeDeep(this.spec, { flinkConfiguration: config });
    return this;
  }
  withoutJob(): this {
    const { job: _job, ...rest } = this.spec;
    this.spec = rest;
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
  withStatus(status: FlinkDeploymentStatusV1): this {
    this.statusV1 = structuredClone(status);
    return this;
  }
  withLegacyStatus(status: FlinkDeploymentStatusV1beta1): this {
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
  build(): FlinkDeploymentV1 {
    return {
      apiVersion: `${FLINK_GROUP}/v1`,
      kind: FLINK_DEPLOYMENT_KIND,
      metadata: this.metadata(),
      spec: structuredClone(this.spec),
      ...(this.statusV1 ? { status: structuredClone(this.statusV1) } : {}),
    };
  }

  /** The v1beta1 object (the Apache operator's layout). */
  buildV1beta1(): FlinkDeploymentV1beta1 {
    return {
      apiVersion: `${FLINK_GROUP}/v1beta1`,
      kind: FLINK_DEPLOYMENT_KIND,
      metadata: this.metadata(),
      spec: structuredClone(this.spec),
      ...(this.statusV1beta1 ? { status: structuredClone(this.statusV1beta1) } : {}),
    };
  }
}

export function flinkDeployment(name = 'basic-example'): FlinkDeploymentBuilder {
  return new FlinkDeploymentBuilder(name);
}
