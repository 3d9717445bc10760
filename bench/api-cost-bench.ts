/**
 * API cost (issue 10, part 1): the operator's requests, counted by the dev cluster's request log,
 * for three flows, with the companion-ConfigMap store and with the legacy status-layout store:
 *
 * - deploy: a new FlinkDeployment until STABLE;
 * - savepoint upgrade: a spec change (job parallelism) until STABLE on the new generation;
 * - periodic: reconciles of unchanged, STABLE deployments (the reconcile interval is short so a
 *   window holds several; the figure is per reconcile, from the operator's reconcile_total).
 *
 * "Transitions" are the persisted steps of design/005 (one state revision each), read from the
 * state ConfigMap's `revision` in the ConfigMap layout; the legacy run executes the same steps (same
 * reconciler), so its per-transition figures divide by the same count.
 *
 * Each layout runs in a fresh pair of processes (cluster, operator); each flow's window starts at
 * a reset of the tally and ends `settleMs` after the driver saw the end state.
 */
import { CoreV1Api } from '@kubernetes/client-node';
import type { StateLayout } from '../src/reconciler/reconciler-wiring.js';
import { BenchWorld } from './bench-processes.js';
import { DeploymentDriver } from './deployment-driver.js';
import { operatorCost, type OperatorCost, type TallyRow } from './request-tally.js';
import { sleep } from './statistics.js';

export interface FlowCost extends OperatorCost {
  /** persisted steps (state revisions) in the flow; for `periodic`, the number of reconciles */
  transitions: number;
}

export interface ApiCostRun {
  layout: StateLayout;
  deploy: FlowCost;
  upgrade: FlowCost;
  periodic: FlowCost;
}

export interface ApiCostOptions {
  seed: number;
  /** deployments reconciled periodically in the periodic window */
  periodicDeployments: number;
  periodicWindowMs: number;
  reconcileIntervalMs: number;
  settleMs: number;
  /** The FlinkStateSnapshot CRD installed: the operator records its savepoints as resources (design/011). */
  snapshotResources?: boolean;
}

export const API_COST_OPERATOR_FLAGS = (reconcileIntervalMs: number) => ({
  progressCheckIntervalMs: 100,
  reconcileIntervalMs,
  requeueJitter: 0,
  parallelism: 8,
});

async function stateRevision(core: CoreV1Api, name: string): Promise<number> {
  try {
    const cm = await core.readNamespacedConfigMap({ namespace: 'default', name: `${name}-operator-state` });
    return Number(cm.data?.revision ?? 0);
  } catch {
    return 0;
  }
}

/** One run of the three flows with `layout`; `transitionsFrom` supplies the ConfigMap run's step counts to the legacy run. */
export async function runApiCost(layout: StateLayout, options: ApiCostOptions, transitionsFrom?: ApiCostRun): Promise<ApiCostRun> {
  const world = await BenchWorld.start({
    seed: options.seed,
    stateLayout: layout,
    operatorFlags: API_COST_OPERATOR_FLAGS(options.reconcileIntervalMs),
    snapshotResources: options.snapshotResources ?? false,
  });
  const driver = new DeploymentDriver(world.driverKubeConfig);
  const core = world.driverKubeConfig.makeApiClient(CoreV1Api);
  try {
    await driver.start();
    const window = async (body: () => Promise<void>): Promise<{ rows: TallyRow[]; stateCreates: number }> => {
      const before = await driver.stateConfigMaps();
      await world.resetTally();
      await body();
      await sleep(options.settleMs);
      const rows = await world.tally();
      return { rows, stateCreates: (await driver.stateConfigMaps()) - before };
    };

    const name = 'cost-0';
    const deployRows = await window(async () => {
      await driver.createAll([name]);
      await driver.waitUntil(() => driver.allStable([name]), `${name} STABLE`, 30_000);
    });
    const revisionAfterDeploy = await stateRevision(core, name);

    const upgradeRows = await window(async () => {
      await driver.changeSpec(name, false);
      await driver.waitUntil(() => driver.allStable([name]) && driver.observed.get(name)!.generation === 2, `${name} STABLE on generation 2`, 30_000);
    });
    const revisionAfterUpgrade = await stateRevision(core, name);

    const others = Array.from({ length: options.periodicDeployments - 1 }, (_, i) => `cost-${i + 1}`);
    await driver.createAll(others);
    await driver.waitUntil(() => driver.allStable(others), 'periodic deployments STABLE', 60_000);
    await sleep(options.reconcileIntervalMs + options.settleMs);
    const before = await world.operatorMetrics();
    const periodicRows = await window(() => sleep(options.periodicWindowMs));
    const after = await world.operatorMetrics();
    const reconciles = after.reconciles - before.reconciles;

    return {
      layout,
      deploy: { ...operatorCost(deployRows.rows, deployRows.stateCreates), transitions: transitionsFrom?.deploy.transitions ?? revisionAfterDeploy },
      upgrade: {
        ...operatorCost(upgradeRows.rows, upgradeRows.stateCreates),
        transitions: transitionsFrom?.upgrade.transitions ?? revisionAfterUpgrade - revisionAfterDeploy,
      },
      periodic: { ...operatorCost(periodicRows.rows, periodicRows.stateCreates), transitions: reconciles },
    };
  } finally {
    driver.stop();
    await world.stop();
  }
}
