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
import { CustomResourceBuilder, mergeDeep } from './custom-resource-builder.js';
import { FLINK_DEPLOYMENT_KIND, type FlinkDeploymentV1, type FlinkDeploymentV1beta1 } from './flink-deployment.js';

type DeepPartial<T> = T extends readonly (infer U)[] ? U[] : T extends object ? { [K in keyof T]?: DeepPartial<T[K]> } : T;

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

export class FlinkDeploymentBuilder extends CustomResourceBuilder<
  typeof FLINK_DEPLOYMENT_KIND,
  FlinkDeploymentSpec,
  FlinkDeploymentStatusV1,
  FlinkDeploymentStatusV1beta1
> {
  constructor(name: string) {
    super(name, FLINK_DEPLOYMENT_KIND, defaultSpec());
  }

  /** Deep-merges `spec` over the current spec (arrays replace). */
  withSpec(spec: DeepPartial<FlinkDeploymentSpec>): this {
    this.spec = mergeDeep(this.spec, spec);
    return this;
  }
  /** A session cluster: no `job`. */
  withoutJob(): this {
    const { job: _job, ...rest } = this.spec;
    this.spec = rest;
    return this;
  }
  /** The v1 object (what the operator works with). */
  build(): FlinkDeploymentV1 {
    return this.buildV1Object();
  }

  /** The v1beta1 object (the Apache operator's layout). */
  buildV1beta1(): FlinkDeploymentV1beta1 {
    return this.buildV1beta1Object();
  }
}

export function flinkDeployment(name = 'basic-example'): FlinkDeploymentBuilder {
  return new FlinkDeploymentBuilder(name);
}
