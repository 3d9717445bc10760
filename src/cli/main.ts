#!/usr/bin/env node
/**
 * `flink-operator`: the command-line entry point.
 *
 *   flink-operator run          run the operator against a cluster (see README for every knob)
 *   flink-operator dev-cluster  run the development cluster (API server + simulated kubelet and Flink) in the foreground
 *   flink-operator demo         the development cluster, the operator and a walkthrough
 *   flink-operator migrate      move Apache-operator (v1beta1) status into the split layout
 *   flink-operator inspect [TYPE/]NAME  status, internal state, lag and pending change of one FlinkDeployment or FlinkSessionJob
 *   flink-operator validate -f FILE     the operator's own validation of FlinkDeployments / FlinkSessionJobs in YAML files, offline
 *
 * Operator code never imports the development cluster; only this CLI (and tests) do. The installed
 * command is ./flink-operator (package.json "bin"), which runs this file through tsx.
 */
import { Command } from 'commander';
import { registerRunCommand } from './run-command.js';
import { registerDevClusterCommand } from './dev-cluster-command.js';
import { registerDemoCommand } from './demo-command.js';
import { registerInspectCommand } from './inspect-command.js';
import { registerMigrateCommand } from './migrate-command.js';
import { registerValidateCommand } from './validate-command.js';
import { makeFlinkDeploymentReconciler } from '../reconciler/reconciler-wiring.js';
import { makeFlinkSessionJobReconciler } from '../reconciler/session-job-wiring.js';
import { makeFlinkStateSnapshotReconciler } from '../reconciler/state-snapshot-wiring.js';
import { OPERATOR_VERSION } from '../state/operator-version.js';

const program = new Command('flink-operator')
  .description('A Kubernetes operator for Apache Flink whose internal state lives in a companion ConfigMap')
  .version(OPERATOR_VERSION);
registerRunCommand(program, {
  flinkDeployments: makeFlinkDeploymentReconciler,
  flinkSessionJobs: makeFlinkSessionJobReconciler,
  flinkStateSnapshots: makeFlinkStateSnapshotReconciler,
});
registerDevClusterCommand(program);
registerDemoCommand(program);
registerMigrateCommand(program);
registerInspectCommand(program);
registerValidateCommand(program);

program.parseAsync(process.argv).catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
});
