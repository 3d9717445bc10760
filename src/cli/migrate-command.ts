/**
 * `flink-operator migrate [--kubeconfig F] [-n NS | -A] [--selector L] [--dry-run]`: moves the
 * Apache operator's internal state out of every selected FlinkDeployment's status into its
 * companion ConfigMap (src/state/legacy-migration.ts does the work, the same code the operator runs).
 *
 * Output: one line per FlinkDeployment (`<outcome>  <namespace/name>: <what happened>`), the dry-run
 * diff under its line, then a summary. Exit status: 0 when every resource is migrated, resumed,
 * already migrated or (dry run) would migrate; 1 when any was refused or failed; 2 for usage errors.
 *
 * Reads the deployments through the v1beta1 endpoint (the only one whose schema still shows the
 * legacy fields). Refuses to start (nothing written) while the Apache operator's CRD is installed:
 * its schema has no `stateRef`, so the API server would prune it from the rewritten status.
 * Sequential: one deployment at a time, so the output order is the list order.
 */
import { hostname } from 'node:os';
import { ApiextensionsV1Api, CustomObjectsApi, KubeConfig, type V1CustomResourceDefinition } from '@kubernetes/client-node';
import type { Command } from 'commander';
import { API_VERSION_V1BETA1, FLINK_DEPLOYMENT_CRD_NAME, FLINK_DEPLOYMENT_PLURAL, FLINK_GROUP, type FlinkDeploymentV1beta1 } from '../api/flink-deployment.js';
import { toKubeApiError } from '../kube/api-errors.js';
import { KubeConfigMapClient, type ConfigMapClient } from '../kube/configmap-client.js';
import { KubeFlinkDeploymentClient, type FlinkDeploymentClient } from '../kube/flink-deployment-client.js';
import { MIGRATE_COMMAND_WRITER, migrateLegacyDeployment, type MigrationOutcome, type MigrationOutcomeKind } from '../state/legacy-migration.js';

export interface MigrateOptions {
  /** One namespace; undefined with allNamespaces = every namespace. */
  readonly namespace?: string;
  readonly allNamespaces?: boolean;
  /** Label selector (`app=x,tier!=y`). */
  readonly selector?: string;
  readonly dryRun?: boolean;
}

export interface MigrateClients {
  readonly configMaps: ConfigMapClient;
  readonly deployments: FlinkDeploymentClient;
  /** Lists FlinkDeployments through v1beta1. */
  listV1beta1(namespace: string | undefined, selector: string | undefined): Promise<FlinkDeploymentV1beta1[]>;
  /**
   * Why the installed CRD cannot take a migrated status (undefined when it can, or when the CRD
   * cannot be read: then `warning` says so).
   */
  checkCrd(): Promise<{ error?: string; warning?: string }>;
}

export interface MigrateReport {
  readonly outcomes: readonly MigrationOutcome[];
  readonly exitCode: number;
}

const LABEL: Record<MigrationOutcomeKind, string> = {
  migrated: 'migrated',
  resumed: 'resumed',
  'already-migrated': 'unchanged',
  refused: 'REFUSED',
  'would-migrate': 'would migrate',
  failed: 'FAILED',
};

/** Clients for a kubeconfig (client-node, v1beta1 list with a label selector). */
export function migrateClientsFor(kubeConfig: KubeConfig): MigrateClients {
  const fieldManager = 'flink-operator-migrate';
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  return {
    configMaps: new KubeConfigMapClient(kubeConfig, fieldManager),
    deployments: new KubeFlinkDeploymentClient(kubeConfig, fieldManager),
    async listV1beta1(namespace, selector) {
      const base = { group: FLINK_GROUP, version: API_VERSION_V1BETA1, plural: FLINK_DEPLOYMENT_PLURAL, ...(selector ? { labelSelector: selector } : {}) };
      try {
        const list = (namespace ? await custom.listNamespacedCustomObject({ ...base, namespace }) : await custom.listClusterCustomObject(base)) as {
          items?: FlinkDeploymentV1beta1[];
        };
        return list.items ?? [];
      } catch (error) {
        throw toKubeApiError(error);
      }
    },
    async checkCrd() {
      let crd: V1CustomResourceDefinition;
      try {
        crd = await kubeConfig.makeApiClient(ApiextensionsV1Api).readCustomResourceDefinition({ name: FLINK_DEPLOYMENT_CRD_NAME });
      } catch (error) {
        const e = toKubeApiError(error);
        if (e.code === 404) return { error: `the CustomResourceDefinition ${FLINK_DEPLOYMENT_CRD_NAME} does not exist` };
        return {
          warning: `cannot read the CustomResourceDefinition ${FLINK_DEPLOYMENT_CRD_NAME} (${e.message}); not checking that it declares status.stateRef`,
        };
      }
      return crdProblem(crd);
    },
  };
}

/**
 * What is wrong with `crd` for migration, if anything: v1beta1 must be served (the legacy fields are
 * read through it) and the storage version's status schema must declare `stateRef` (else the API
 * server prunes it from the rewritten status: the Apache operator's CRD).
 */
export function crdProblem(crd: V1CustomResourceDefinition): { error?: string } {
  const versions = crd.spec.versions ?? [];
  const v1beta1 = versions.find((v) => v.name === API_VERSION_V1BETA1);
  if (!v1beta1?.served)
    return {
      error: `the CustomResourceDefinition ${FLINK_DEPLOYMENT_CRD_NAME} does not serve ${API_VERSION_V1BETA1}, through which the legacy status is read`,
    };
  const storage = versions.find((v) => v.storage);
  const statusProps = storage?.schema?.openAPIV3Schema?.properties?.['status']?.properties;
  if (!statusProps?.['stateRef']) {
    return {
      error: `the installed CustomResourceDefinition ${FLINK_DEPLOYMENT_CRD_NAME} (storage version ${storage?.name ?? '?'}) does not declare status.stateRef: it is still the Apache operator's`,
    };
  }
  return {};
}

/**
 * Runs the migration over the selected deployments, writing result lines to `out`. Never throws for
 * a per-resource problem; a failed list is reported on `out` with exit code 1.
 */
export async function runMigrate(
  clients: MigrateClients,
  options: MigrateOptions,
  out: (line: string) => void,
  deps: { retryDelayMs?: number } = {},
): Promise<MigrateReport> {
  const namespace = options.allNamespaces ? undefined : (options.namespace ?? 'default');
  const scope = namespace === undefined ? 'all namespaces' : `namespace ${namespace}`;
  let items: FlinkDeploymentV1beta1[];
  try {
    // With the Apache operator's CRD the API server would prune stateRef from the rewritten status
    // (its schema does not declare it): refuse before writing anything.
    const crd = await clients.checkCrd();
    if (crd.error) {
      out(`error: ${crd.error}: apply this operator's CRD first (kubectl apply -f crds/upgrade/, see the README), then run migrate again; nothing was written`);
      return { outcomes: [], exitCode: 1 };
    }
    if (crd.warning) out(`warning: ${crd.warning}`);
    items = await clients.listV1beta1(namespace, options.selector);
  } catch (error) {
    out(`error: cannot list FlinkDeployments (flink.apache.org/v1beta1) in ${scope}: ${toKubeApiError(error).message}`);
    return { outcomes: [], exitCode: 1 };
  }
  items.sort((a, b) => `${a.metadata.namespace}/${a.metadata.name}`.localeCompare(`${b.metadata.namespace}/${b.metadata.name}`));
  const writer = { ...MIGRATE_COMMAND_WRITER, holderIdentity: `${MIGRATE_COMMAND_WRITER.holderIdentity}@${hostname()}` };
  const outcomes: MigrationOutcome[] = [];
  for (const item of items) {
    const outcome = await migrateLegacyDeployment(item, {
      configMaps: clients.configMaps,
      deployments: clients.deployments,
      dryRun: options.dryRun ?? false,
      writer,
      ...(deps.retryDelayMs !== undefined ? { retryDelayMs: deps.retryDelayMs } : {}),
    });
    outcomes.push(outcome);
    out(`${LABEL[outcome.kind].padEnd(13)} ${outcome.message}`);
    if (outcome.kind === 'would-migrate') for (const line of outcome.diff.split('\n')) out(`    ${line}`);
  }
  const count = (kind: MigrationOutcomeKind) => outcomes.filter((o) => o.kind === kind).length;
  const bad = count('refused') + count('failed');
  const changed = count('migrated') + count('resumed');
  const selector = options.selector ? ` matching ${options.selector}` : '';
  if (items.length === 0) {
    out(`no FlinkDeployments${selector} in ${scope}; nothing to do`);
  } else if (options.dryRun) {
    out(
      `dry run, nothing written: ${items.length} FlinkDeployment(s)${selector} in ${scope}: ${count('would-migrate')} would be migrated, ` +
        `${count('already-migrated')} already migrated, ${count('refused')} refused, ${count('failed')} failed`,
    );
  } else if (changed === 0 && bad === 0) {
    out(`nothing to migrate: all ${items.length} FlinkDeployment(s)${selector} in ${scope} are already migrated; nothing was changed`);
  } else {
    out(
      `${items.length} FlinkDeployment(s)${selector} in ${scope}: ${count('migrated')} migrated, ${count('resumed')} resumed, ` +
        `${count('already-migrated')} already migrated, ${count('refused')} refused, ${count('failed')} failed`,
    );
  }
  if (bad > 0) out(`${bad} FlinkDeployment(s) not migrated (see the REFUSED/FAILED lines above); their status was left as it was`);
  return { outcomes, exitCode: bad > 0 ? 1 : 0 };
}

export function loadKubeConfig(path: string | undefined): KubeConfig {
  const kc = new KubeConfig();
  if (path) kc.loadFromFile(path);
  else kc.loadFromDefault();
  return kc;
}

/** The namespace of the kubeconfig's current context (kubectl's default), else `default`. */
export function contextNamespace(kc: KubeConfig): string {
  const context = kc.getContextObject(kc.getCurrentContext());
  return context?.namespace || 'default';
}

export function registerMigrateCommand(program: Command): void {
  program
    .command('migrate')
    .description("move the Apache operator's internal state out of FlinkDeployment status into the companion ConfigMaps (idempotent, resumable)")
    .option('--kubeconfig <file>', 'kubeconfig file (default: $KUBECONFIG, ~/.kube/config, then in-cluster)')
    .option('-n, --namespace <ns>', "namespace (default: the kubeconfig context's namespace, else default)")
    .option('-A, --all-namespaces', 'every namespace')
    .option('-l, --selector <selector>', 'only FlinkDeployments with these labels (kubectl label selector syntax)')
    .option('--dry-run', 'print what would change (a diff per FlinkDeployment) and write nothing')
    .action(async (opts: { kubeconfig?: string; namespace?: string; allNamespaces?: boolean; selector?: string; dryRun?: boolean }, command: Command) => {
      if (opts.namespace && opts.allNamespaces) command.error('flink-operator migrate: use either --namespace or --all-namespaces, not both', { exitCode: 2 });
      const kc = loadKubeConfig(opts.kubeconfig);
      const report = await runMigrate(
        migrateClientsFor(kc),
        {
          namespace: opts.namespace ?? contextNamespace(kc),
          allNamespaces: opts.allNamespaces ?? false,
          ...(opts.selector ? { selector: opts.selector } : {}),
          dryRun: opts.dryRun ?? false,
        },
        (line) => process.stdout.write(`${line}\n`),
      );
      process.exitCode = report.exitCode;
    });
}
