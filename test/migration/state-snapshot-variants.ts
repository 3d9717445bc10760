/**
 * Fixtures for the adoption of the Apache operator's FlinkStateSnapshot resources by the migration:
 * the YAMLs in state-snapshot-variants/ (each cites the Apache source of its fields) and a legacy
 * FlinkDeployment `orders` as the Apache operator (1.10+) leaves it with
 * `kubernetes.operator.snapshot.resource.enabled: true`: its savepoints are resources, so the
 * status has no savepointHistory, only the `upgradeSavepointPath` of the last upgrade
 * (Apache `AbstractJobReconciler.triggerSnapshot` creates the resource instead of setting
 * `savepointInfo`, commit 6e9caeb4).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import type { FlinkStateSnapshot } from '../../src/api/flink-state-snapshot.js';
import { builtVariants, type LegacyVariant } from './legacy-variants.js';

const DIR = fileURLToPath(new URL('./state-snapshot-variants/', import.meta.url));

/** Every FlinkStateSnapshot fixture, by file name (without `.yaml`). */
export function loadStateSnapshots(): Record<string, FlinkStateSnapshot> {
  return Object.fromEntries(
    readdirSync(DIR)
      .filter((f) => f.endsWith('.yaml'))
      .sort()
      .map((f) => [f.replace(/\.yaml$/, ''), parseYaml(readFileSync(`${DIR}${f}`, 'utf8')) as FlinkStateSnapshot]),
  );
}

/** The snapshot config key of the Apache operator (`KubernetesOperatorConfigOptions.SNAPSHOT_RESOURCE_ENABLED`). */
export const SNAPSHOT_RESOURCE_ENABLED = 'kubernetes.operator.snapshot.resource.enabled';

/** The upgradeSavepointPath of `orders`: the savepoint of its last upgrade, also recorded as orders-savepoint-upgrade.yaml. */
export const ORDERS_UPGRADE_SAVEPOINT = 's3://b/savepoints/savepoint-orders-upgrade';

function withSnapshotResources(reconciledSpec: unknown): string {
  const parsed = JSON.parse(String(reconciledSpec)) as { spec: { flinkConfiguration?: Record<string, string> } };
  parsed.spec.flinkConfiguration = { ...parsed.spec.flinkConfiguration, [SNAPSHOT_RESOURCE_ENABLED]: 'true' };
  return JSON.stringify(parsed);
}

/**
 * The legacy FlinkDeployment `name` (default: orders) in `namespace`, snapshot resources enabled,
 * status without savepointHistory; `history` replaces that (to test de-duplication against a status
 * history).
 */
export function ordersWithSnapshotResources(options: { name?: string; namespace?: string; history?: Record<string, unknown>[] } = {}): LegacyVariant {
  const base = builtVariants()[0];
  const name = options.name ?? 'orders';
  const status = structuredClone(base.status) as {
    jobStatus: Record<string, unknown>;
    reconciliationStatus: Record<string, unknown>;
  };
  status.jobStatus.upgradeSavepointPath = ORDERS_UPGRADE_SAVEPOINT;
  status.jobStatus.savepointInfo = { lastPeriodicSavepointTimestamp: 0, triggerId: null, ...(options.history ? { savepointHistory: options.history } : {}) };
  status.reconciliationStatus.lastReconciledSpec = withSnapshotResources(status.reconciliationStatus.lastReconciledSpec);
  status.reconciliationStatus.lastStableSpec = withSnapshotResources(status.reconciliationStatus.lastStableSpec);
  const object = structuredClone(base.object);
  object.metadata = { ...object.metadata, name, namespace: options.namespace ?? 'default' };
  object.spec.flinkConfiguration = { ...object.spec.flinkConfiguration, [SNAPSHOT_RESOURCE_ENABLED]: 'true' };
  return { label: `${name}: snapshot resources enabled, no savepointHistory in the status`, object, status };
}
