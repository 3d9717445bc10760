/**
 * `flink-operator migrate [--kubeconfig F] [-n NS | -A] [--selector L] [--dry-run] [--ignore-webhooks] [--revert]`: moves the
 * Apache operator's internal state out of every selected FlinkDeployment's and then every selected
 * FlinkSessionJob's status into its companion ConfigMap (src/state/legacy-migration.ts does the
 * work, the same code the operator runs).
 *
 * Output: one line per FlinkDeployment (`<outcome>  <namespace/name>: <what happened>`), the dry-run
 * diff under its line, then a summary; then the same for FlinkSessionJobs, each line naming the kind
 * (`<outcome>  FlinkSessionJob <namespace/name>: …`), with a summary when there are any (and a note
 * when the FlinkSessionJob CRD is not installed: the deployments are migrated all the same). Exit
 * status: 0 when every resource is migrated, resumed, already migrated or (dry run) would migrate;
 * 1 when any was refused or failed; 2 for usage errors.
 *
 * Reads the resources through the v1beta1 endpoint (the only one whose schema still shows the
 * legacy fields). Refuses to start (nothing written) while the Apache operator's CRD of either kind
 * is installed: its schema has no `stateRef`, so the API server would prune it from the rewritten status.
 * Also refuses to start while admission webhooks of the Apache operator (or any webhook configuration
 * whose rules match flink.apache.org flinkdeployments, or flinksessionjobs) are registered: served by the stopped
 * flink-kubernetes-operator Deployment with failurePolicy Fail, they refuse every later write;
 * the output has the exact `kubectl delete ...webhookconfiguration` command (`--ignore-webhooks`
 * skips the check).
 * `--revert` goes back: the Apache layout written from the current state ConfigMap, which is then
 * deleted (src/state/legacy-revert.ts).
 * Sequential: one resource at a time, so the output order is the list order.
 */
import { hostname } from 'node:os';
import {
  AdmissionregistrationV1Api,
  ApiextensionsV1Api,
  CustomObjectsApi,
  KubeConfig,
  type V1CustomResourceDefinition,
  type V1RuleWithOperations,
} from '@kubernetes/client-node';
import type { Command } from 'commander';
import {
  API_VERSION_V1BETA1,
  FLINK_DEPLOYMENT_CRD_NAME,
  FLINK_DEPLOYMENT_KIND,
  FLINK_DEPLOYMENT_PLURAL,
  FLINK_GROUP,
  type FlinkDeploymentV1beta1,
} from '../api/flink-deployment.js';
import { FLINK_SESSION_JOB_CRD_NAME, FLINK_SESSION_JOB_KIND, FLINK_SESSION_JOB_PLURAL, type FlinkSessionJobV1beta1 } from '../api/flink-session-job.js';
import { toKubeApiError } from '../kube/api-errors.js';
import { KubeConfigMapClient, type ConfigMapClient } from '../kube/configmap-client.js';
import {
  KubeFlinkDeploymentClient,
  KubeFlinkSessionJobClient,
  type FlinkDeploymentClient,
  type FlinkSessionJobClient,
} from '../kube/flink-deployment-client.js';
import { KubeFlinkStateSnapshotClient, type FlinkStateSnapshotLister } from '../kube/flink-state-snapshot-client.js';
import { MIGRATE_COMMAND_WRITER, migrateLegacyDeployment, migrateLegacySessionJob } from '../state/legacy-migration.js';
import type { MigrationOutcome, MigrationOutcomeKind } from '../state/legacy-migration-outcome.js';
import { revertDeployment, revertSessionJob, type RevertOutcome, type RevertOutcomeKind, type SessionJobRevertOutcome } from '../state/legacy-revert.js';

export interface MigrateOptions {
  /** One namespace; undefined with allNamespaces = every namespace. */
  readonly namespace?: string;
  readonly allNamespaces?: boolean;
  /** Label selector (`app=x,tier!=y`). */
  readonly selector?: string;
  readonly dryRun?: boolean;
  /** Skip the admission webhook check. */
  readonly ignoreWebhooks?: boolean;
}

/** A registered admission webhook configuration and its webhooks' rules. */
export interface WebhookConfiguration {
  readonly kind: 'ValidatingWebhookConfiguration' | 'MutatingWebhookConfiguration';
  readonly name: string;
  readonly webhooks: readonly { readonly name: string; readonly failurePolicy?: string; readonly rules?: readonly V1RuleWithOperations[] }[];
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
  /**
   * Every validating and mutating webhook configuration (admissionregistration.k8s.io/v1);
   * `warning` instead when they cannot be listed (RBAC), an empty list when the API is not served.
   */
  listWebhookConfigurations(): Promise<{ configurations: WebhookConfiguration[]; warning?: string }>;
  /** The FlinkSessionJob side (migrateClientsFor always has it; without it only FlinkDeployments are handled). */
  readonly sessionJobs?: SessionJobMigrateClients;
  /** Lists the Apache operator's FlinkStateSnapshots to adopt their savepoints (migrateClientsFor always has it; without it only the status history is migrated). */
  readonly snapshots?: FlinkStateSnapshotLister;
}

/** What migrate needs for FlinkSessionJobs. */
export interface SessionJobMigrateClients {
  readonly client: FlinkSessionJobClient;
  /** Lists FlinkSessionJobs through v1beta1. */
  listV1beta1(namespace: string | undefined, selector: string | undefined): Promise<FlinkSessionJobV1beta1[]>;
  /** As MigrateClients.checkCrd; `missing` when the FlinkSessionJob CRD is not installed (nothing to migrate). */
  checkCrd(): Promise<CrdCheck>;
}

/** What the CRD check found: an `error` stops migrate before it writes anything. */
export interface CrdCheck {
  readonly error?: string;
  readonly warning?: string;
  /** The CRD does not exist. */
  readonly missing?: boolean;
}

export interface MigrateReport {
  /** One per FlinkDeployment. */
  readonly outcomes: readonly MigrationOutcome[];
  /** One per FlinkSessionJob. */
  readonly sessionJobOutcomes: readonly MigrationOutcome[];
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
  const listV1beta1 = async <T>(plural: string, namespace: string | undefined, selector: string | undefined): Promise<T[]> => {
    const base = { group: FLINK_GROUP, version: API_VERSION_V1BETA1, plural, ...(selector ? { labelSelector: selector } : {}) };
    try {
      const list = (namespace ? await custom.listNamespacedCustomObject({ ...base, namespace }) : await custom.listClusterCustomObject(base)) as {
        items?: T[];
      };
      return list.items ?? [];
    } catch (error) {
      throw toKubeApiError(error);
    }
  };
  /** The CRD's problem for migration; `missing` (404) is an error for FlinkDeployments, a note for FlinkSessionJobs. */
  const checkCrd = async (name: string): Promise<CrdCheck> => {
    let crd: V1CustomResourceDefinition;
    try {
      crd = await kubeConfig.makeApiClient(ApiextensionsV1Api).readCustomResourceDefinition({ name });
    } catch (error) {
      const e = toKubeApiError(error);
      if (e.code === 404) return { missing: true, error: `the CustomResourceDefinition ${name} does not exist` };
      return { warning: `cannot read the CustomResourceDefinition ${name} (${e.message}); not checking that it declares status.stateRef` };
    }
    return crdProblem(crd);
  };
  return {
    configMaps: new KubeConfigMapClient(kubeConfig, fieldManager),
    deployments: new KubeFlinkDeploymentClient(kubeConfig, fieldManager),
    snapshots: new KubeFlinkStateSnapshotClient(kubeConfig),
    listV1beta1: (namespace, selector) => listV1beta1<FlinkDeploymentV1beta1>(FLINK_DEPLOYMENT_PLURAL, namespace, selector),
    async checkCrd() {
      const { missing: _missing, ...check } = await checkCrd(FLINK_DEPLOYMENT_CRD_NAME);
      return check;
    },
    sessionJobs: {
      client: new KubeFlinkSessionJobClient(kubeConfig, fieldManager),
      listV1beta1: (namespace, selector) => listV1beta1<FlinkSessionJobV1beta1>(FLINK_SESSION_JOB_PLURAL, namespace, selector),
      async checkCrd() {
        const check = await checkCrd(FLINK_SESSION_JOB_CRD_NAME);
        return check.missing ? { missing: true } : check;
      },
    },
    async listWebhookConfigurations() {
      const api = kubeConfig.makeApiClient(AdmissionregistrationV1Api);
      try {
        const [validating, mutating] = await Promise.all([api.listValidatingWebhookConfiguration(), api.listMutatingWebhookConfiguration()]);
        return {
          configurations: [
            ...validating.items.map((c) => ({ kind: 'ValidatingWebhookConfiguration' as const, name: c.metadata?.name ?? '', webhooks: c.webhooks ?? [] })),
            ...mutating.items.map((c) => ({ kind: 'MutatingWebhookConfiguration' as const, name: c.metadata?.name ?? '', webhooks: c.webhooks ?? [] })),
          ],
        };
      } catch (error) {
        const e = toKubeApiError(error);
        if (e.code === 404) return { configurations: [] }; // admissionregistration.k8s.io not served: no webhooks
        return {
          warning:
            `cannot list admission webhook configurations (${e.message}); not checking for the Apache operator's webhooks: ` +
            'check `kubectl get validatingwebhookconfigurations,mutatingwebhookconfigurations` yourself',
          configurations: [],
        };
      }
    },
  };
}

const matches = (values: readonly string[] | undefined, wanted: string) => (values ?? []).some((v) => v === '*' || v === wanted);

/** The webhook configurations with a rule for flink.apache.org `plural` (any version, CREATE or UPDATE). */
export function flinkResourceWebhooks(configurations: readonly WebhookConfiguration[], plural: string): WebhookConfiguration[] {
  return configurations.filter((c) =>
    c.webhooks.some((w) =>
      (w.rules ?? []).some(
        (r) =>
          matches(r.apiGroups, FLINK_GROUP) &&
          (r.resources ?? []).some((res) => res === '*' || res === '*/*' || res === plural || res.startsWith(`${plural}/`)) &&
          // An empty operations list matches nothing (kube-apiserver's rule matcher).
          (matches(r.operations, 'CREATE') || matches(r.operations, 'UPDATE')),
      ),
    ),
  );
}

/**
 * The webhook configurations with a rule for flink.apache.org flinkdeployments (any version,
 * CREATE or UPDATE): the Apache operator's (flink-operator-<namespace>-webhook-configuration in its
 * Helm chart), served by its stopped Deployment, refuse every later FlinkDeployment write.
 */
export function flinkDeploymentWebhooks(configurations: readonly WebhookConfiguration[]): WebhookConfiguration[] {
  return flinkResourceWebhooks(configurations, FLINK_DEPLOYMENT_PLURAL);
}

/** The kubectl commands deleting `configurations`. */
export function webhookDeleteCommands(configurations: readonly WebhookConfiguration[]): string[] {
  const byKind = (kind: WebhookConfiguration['kind']) => configurations.filter((c) => c.kind === kind).map((c) => c.name);
  const out: string[] = [];
  const validating = byKind('ValidatingWebhookConfiguration');
  const mutating = byKind('MutatingWebhookConfiguration');
  if (validating.length) out.push(`kubectl delete validatingwebhookconfiguration ${validating.join(' ')}`);
  if (mutating.length) out.push(`kubectl delete mutatingwebhookconfiguration ${mutating.join(' ')}`);
  return out;
}

/**
 * What is wrong with `crd` for migration, if anything: v1beta1 must be served (the legacy fields are
 * read through it) and the storage version's status schema must declare `stateRef` (else the API
 * server prunes it from the rewritten status: the Apache operator's CRD).
 */
export function crdProblem(crd: V1CustomResourceDefinition): { error?: string } {
  const name = crd.metadata?.name ?? FLINK_DEPLOYMENT_CRD_NAME;
  const versions = crd.spec.versions ?? [];
  const v1beta1 = versions.find((v) => v.name === API_VERSION_V1BETA1);
  if (!v1beta1?.served)
    return {
      error: `the CustomResourceDefinition ${name} does not serve ${API_VERSION_V1BETA1}, through which the legacy status is read`,
    };
  const storage = versions.find((v) => v.storage);
  const statusProps = storage?.schema?.openAPIV3Schema?.properties?.['status']?.properties;
  if (!statusProps?.['stateRef']) {
    return {
      error: `the installed CustomResourceDefinition ${name} (storage version ${storage?.name ?? '?'}) does not declare status.stateRef: it is still the Apache operator's`,
    };
  }
  return {};
}

/** The line of one outcome: FlinkDeployment lines as they always were, other kinds named. */
function outcomeLine(label: string, ownerKind: string, message: string): string {
  return `${label.padEnd(13)} ${ownerKind === FLINK_DEPLOYMENT_KIND ? '' : `${ownerKind} `}${message}`;
}

const byResource = (a: { metadata: { namespace?: string; name?: string } }, b: { metadata: { namespace?: string; name?: string } }) =>
  `${a.metadata.namespace}/${a.metadata.name}`.localeCompare(`${b.metadata.namespace}/${b.metadata.name}`);

/** Migrates `items` of one kind in list order, printing a line each and the kind's summary; returns the outcomes and how many were not migrated. */
async function migrateAll<T extends { metadata: { namespace?: string; name?: string } }>(
  ownerKind: string,
  items: T[],
  migrate: (item: T) => Promise<MigrationOutcome>,
  context: { options: MigrateOptions; scope: string; out: (line: string) => void; quietWhenNone: boolean },
): Promise<{ outcomes: MigrationOutcome[]; bad: number }> {
  const { options, scope, out } = context;
  items.sort(byResource);
  const outcomes: MigrationOutcome[] = [];
  for (const item of items) {
    const outcome = await migrate(item);
    outcomes.push(outcome);
    out(outcomeLine(LABEL[outcome.kind], ownerKind, outcome.message));
    if (outcome.kind === 'would-migrate') for (const line of outcome.diff.split('\n')) out(`    ${line}`);
  }
  const count = (kind: MigrationOutcomeKind) => outcomes.filter((o) => o.kind === kind).length;
  const bad = count('refused') + count('failed');
  const changed = count('migrated') + count('resumed');
  const selector = options.selector ? ` matching ${options.selector}` : '';
  if (items.length === 0) {
    if (!context.quietWhenNone) out(`no ${ownerKind}s${selector} in ${scope}; nothing to do`);
  } else if (options.dryRun) {
    out(
      `dry run, nothing written: ${items.length} ${ownerKind}(s)${selector} in ${scope}: ${count('would-migrate')} would be migrated, ` +
        `${count('already-migrated')} already migrated, ${count('refused')} refused, ${count('failed')} failed`,
    );
  } else if (changed === 0 && bad === 0) {
    out(`nothing to migrate: all ${items.length} ${ownerKind}(s)${selector} in ${scope} are already migrated; nothing was changed`);
  } else {
    out(
      `${items.length} ${ownerKind}(s)${selector} in ${scope}: ${count('migrated')} migrated, ${count('resumed')} resumed, ` +
        `${count('already-migrated')} already migrated, ${count('refused')} refused, ${count('failed')} failed`,
    );
  }
  if (bad > 0) out(`${bad} ${ownerKind}(s) not migrated (see the REFUSED/FAILED lines above); their status was left as it was`);
  return { outcomes, bad };
}

/** The FlinkSessionJobs to handle after the deployments: listed, none because their CRD is not installed, or why not (`error`). */
type SessionJobScope = { items: FlinkSessionJobV1beta1[] } | { missing: true } | { error: string };

/** What migrate and revert say when there is no FlinkSessionJob CRD (and go on with the FlinkDeployments). */
function noSessionJobCrd(verb: string): string {
  return `the ${FLINK_SESSION_JOB_KIND} CustomResourceDefinition ${FLINK_SESSION_JOB_CRD_NAME} is not installed: no ${FLINK_SESSION_JOB_KIND}s to ${verb}`;
}

async function listSessionJobs(
  clients: SessionJobMigrateClients,
  namespace: string | undefined,
  options: MigrateOptions,
  scope: string,
): Promise<SessionJobScope> {
  try {
    return { items: await clients.listV1beta1(namespace, options.selector) };
  } catch (error) {
    const e = toKubeApiError(error);
    if (e.code === 404) return { missing: true };
    return { error: `error: cannot list ${FLINK_SESSION_JOB_KIND}s (flink.apache.org/v1beta1) in ${scope}: ${e.message}` };
  }
}

/**
 * Runs the migration over the selected deployments, then the selected session jobs, writing result
 * lines to `out`. Never throws for a per-resource problem; a failed list is reported on `out` with
 * exit code 1 (a failed FlinkSessionJob list after the deployments were migrated).
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
  let sessionJobs: SessionJobScope | undefined;
  try {
    if (!(await webhooksAllowWrites(clients, options, out))) return { outcomes: [], sessionJobOutcomes: [], exitCode: 1 };
    // With the Apache operator's CRD the API server would prune stateRef from the rewritten status
    // (its schema does not declare it): refuse before writing anything.
    const crd = await clients.checkCrd();
    const sessionCrd: CrdCheck = clients.sessionJobs ? await clients.sessionJobs.checkCrd() : {};
    const crdError = crd.error ?? (sessionCrd.missing ? undefined : sessionCrd.error);
    if (crdError) {
      out(
        `error: ${crdError}: apply this operator's CRD first (kubectl apply --server-side --force-conflicts -f crds/upgrade/, see the README), then run migrate again; nothing was written`,
      );
      return { outcomes: [], sessionJobOutcomes: [], exitCode: 1 };
    }
    if (crd.warning) out(`warning: ${crd.warning}`);
    if (sessionCrd.warning) out(`warning: ${sessionCrd.warning}`);
    items = await clients.listV1beta1(namespace, options.selector);
    if (clients.sessionJobs) {
      sessionJobs = sessionCrd.missing ? { missing: true } : await listSessionJobs(clients.sessionJobs, namespace, options, scope);
    }
  } catch (error) {
    out(`error: cannot list FlinkDeployments (flink.apache.org/v1beta1) in ${scope}: ${toKubeApiError(error).message}`);
    return { outcomes: [], sessionJobOutcomes: [], exitCode: 1 };
  }
  const writer = { ...MIGRATE_COMMAND_WRITER, holderIdentity: `${MIGRATE_COMMAND_WRITER.holderIdentity}@${hostname()}` };
  const settings = {
    configMaps: clients.configMaps,
    dryRun: options.dryRun ?? false,
    writer,
    ...(deps.retryDelayMs !== undefined ? { retryDelayMs: deps.retryDelayMs } : {}),
    ...(clients.snapshots ? { snapshots: clients.snapshots } : {}),
  };
  const deployments = await migrateAll(
    FLINK_DEPLOYMENT_KIND,
    items,
    (item) => migrateLegacyDeployment(item, { ...settings, deployments: clients.deployments }),
    {
      options,
      scope,
      out,
      quietWhenNone: false,
    },
  );
  let sessionJobOutcomes: MigrationOutcome[] = [];
  let bad = deployments.bad;
  const sessionClient = clients.sessionJobs?.client;
  if (sessionJobs && 'missing' in sessionJobs) out(noSessionJobCrd('migrate'));
  else if (sessionJobs && 'error' in sessionJobs) {
    out(sessionJobs.error);
    bad++;
  } else if (sessionJobs && sessionClient) {
    const migrated = await migrateAll(
      FLINK_SESSION_JOB_KIND,
      sessionJobs.items,
      (item) => migrateLegacySessionJob(item, { ...settings, sessionJobs: sessionClient }),
      {
        options,
        scope,
        out,
        // A cluster without session jobs gets the output it always got.
        quietWhenNone: true,
      },
    );
    sessionJobOutcomes = migrated.outcomes;
    bad += migrated.bad;
  }
  return { outcomes: deployments.outcomes, sessionJobOutcomes, exitCode: bad > 0 ? 1 : 0 };
}

/** false (with the error and the commands on `out`) when webhooks would refuse FlinkDeployment (or FlinkSessionJob) writes. */
async function webhooksAllowWrites(clients: MigrateClients, options: MigrateOptions, out: (line: string) => void): Promise<boolean> {
  if (options.ignoreWebhooks) return true;
  const listed = await clients.listWebhookConfigurations();
  if (listed.warning) out(`warning: ${listed.warning}`);
  let plural = FLINK_DEPLOYMENT_PLURAL;
  let ownerKind = FLINK_DEPLOYMENT_KIND as string;
  let found = flinkDeploymentWebhooks(listed.configurations);
  if (found.length === 0 && clients.sessionJobs) {
    plural = FLINK_SESSION_JOB_PLURAL;
    ownerKind = FLINK_SESSION_JOB_KIND;
    found = flinkResourceWebhooks(listed.configurations, plural);
  }
  if (found.length === 0) return true;
  out(
    `error: admission webhook configuration(s) for flink.apache.org ${plural} are registered: ${found.map((c) => `${c.kind} ${c.name}`).join(', ')}. ` +
      "The Apache operator's webhooks are served by its stopped flink-kubernetes-operator Deployment and fail closed, so they would refuse every " +
      `later ${ownerKind} write. Remove them (this operator has no admission webhook), then run migrate again; nothing was written:`,
  );
  for (const command of webhookDeleteCommands(found)) out(`  ${command}`);
  out('(--ignore-webhooks skips this check, e.g. for a webhook of your own that is still served)');
  return false;
}

export interface RevertReport {
  /** One per FlinkDeployment. */
  readonly outcomes: readonly RevertOutcome[];
  /** One per FlinkSessionJob. */
  readonly sessionJobOutcomes: readonly SessionJobRevertOutcome[];
  readonly exitCode: number;
}

const REVERT_LABEL: Record<RevertOutcomeKind, string> = {
  reverted: 'reverted',
  resumed: 'resumed',
  unchanged: 'unchanged',
  'would-revert': 'would revert',
  refused: 'REFUSED',
  failed: 'FAILED',
};

/** Reverts `items` of one kind in list order, printing a line each and the kind's summary. */
async function revertAll<T extends { metadata: { namespace?: string; name?: string } }, Outcome extends RevertOutcome<unknown>>(
  ownerKind: string,
  items: T[],
  revert: (item: T) => Promise<Outcome>,
  context: { options: MigrateOptions; scope: string; out: (line: string) => void; quietWhenNone: boolean },
): Promise<{ outcomes: Outcome[]; bad: number }> {
  const { options, scope, out } = context;
  items.sort(byResource);
  const outcomes: Outcome[] = [];
  for (const item of items) {
    const outcome = await revert(item);
    outcomes.push(outcome);
    out(outcomeLine(REVERT_LABEL[outcome.kind], ownerKind, outcome.message));
    if (outcome.kind === 'would-revert') for (const line of outcome.diff.split('\n')) out(`    ${line}`);
  }
  const count = (kind: RevertOutcomeKind) => outcomes.filter((o) => o.kind === kind).length;
  const bad = count('refused') + count('failed');
  const selector = options.selector ? ` matching ${options.selector}` : '';
  if (items.length === 0) {
    if (!context.quietWhenNone) out(`no ${ownerKind}s${selector} in ${scope}; nothing to do`);
  } else
    out(
      `${options.dryRun ? 'dry run, nothing written: ' : ''}${items.length} ${ownerKind}(s)${selector} in ${scope}: ` +
        (options.dryRun ? `${count('would-revert')} would be reverted, ` : `${count('reverted')} reverted, ${count('resumed')} resumed, `) +
        `${count('unchanged')} unchanged, ${count('refused')} refused, ${count('failed')} failed`,
    );
  if (bad > 0) out(`${bad} ${ownerKind}(s) not reverted (see the REFUSED/FAILED lines above)`);
  return { outcomes, bad };
}

/**
 * `migrate --revert`: the Apache operator's status layout written back from each selected
 * deployment's, then session job's, current state ConfigMap, which is deleted after the status
 * write (legacy-revert.ts).
 */
export async function runRevert(clients: MigrateClients, options: MigrateOptions, out: (line: string) => void): Promise<RevertReport> {
  const namespace = options.allNamespaces ? undefined : (options.namespace ?? 'default');
  const scope = namespace === undefined ? 'all namespaces' : `namespace ${namespace}`;
  let items: FlinkDeploymentV1beta1[];
  try {
    items = await clients.listV1beta1(namespace, options.selector);
  } catch (error) {
    out(`error: cannot list FlinkDeployments (flink.apache.org/v1beta1) in ${scope}: ${toKubeApiError(error).message}`);
    return { outcomes: [], sessionJobOutcomes: [], exitCode: 1 };
  }
  const dryRun = options.dryRun ?? false;
  const context = { options, scope, out };
  const deployments = await revertAll(
    FLINK_DEPLOYMENT_KIND,
    items,
    (item) => revertDeployment(item, { configMaps: clients.configMaps, deployments: clients.deployments, dryRun }),
    {
      ...context,
      quietWhenNone: false,
    },
  );
  let bad = deployments.bad;
  let total = items.length;
  let sessionJobOutcomes: SessionJobRevertOutcome[] = [];
  const session = clients.sessionJobs;
  if (session) {
    const listed = await listSessionJobs(session, namespace, options, scope);
    if ('missing' in listed) out(noSessionJobCrd('revert'));
    else if ('error' in listed) {
      out(listed.error);
      bad++;
    } else {
      const reverted = await revertAll(
        FLINK_SESSION_JOB_KIND,
        listed.items,
        (item) => revertSessionJob(item, { configMaps: clients.configMaps, sessionJobs: session.client, dryRun }),
        { ...context, quietWhenNone: true },
      );
      sessionJobOutcomes = reverted.outcomes;
      bad += reverted.bad;
      total += listed.items.length;
    }
  }
  if (bad === 0 && !dryRun && total > 0)
    out("next: re-apply the Apache operator's CRD and Helm release (its webhooks included), then scale flink-kubernetes-operator back up");
  return { outcomes: deployments.outcomes, sessionJobOutcomes, exitCode: bad > 0 ? 1 : 0 };
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
    .description(
      "move the Apache operator's internal state out of FlinkDeployment and FlinkSessionJob status into the companion ConfigMaps (idempotent, resumable)",
    )
    .option('--kubeconfig <file>', 'kubeconfig file (default: $KUBECONFIG, ~/.kube/config, then in-cluster)')
    .option('-n, --namespace <ns>', "namespace (default: the kubeconfig context's namespace, else default)")
    .option('-A, --all-namespaces', 'every namespace')
    .option('-l, --selector <selector>', 'only FlinkDeployments and FlinkSessionJobs with these labels (kubectl label selector syntax)')
    .option('--dry-run', 'print what would change (a diff per resource) and write nothing')
    .option('--ignore-webhooks', 'do not refuse to run while admission webhooks for flinkdeployments or flinksessionjobs are registered')
    .option('--revert', "go back to the Apache operator's layout: write the legacy status from each current state ConfigMap, then delete the ConfigMap")
    .action(
      async (
        opts: {
          kubeconfig?: string;
          namespace?: string;
          allNamespaces?: boolean;
          selector?: string;
          dryRun?: boolean;
          ignoreWebhooks?: boolean;
          revert?: boolean;
        },
        command: Command,
      ) => {
        if (opts.namespace && opts.allNamespaces)
          command.error('flink-operator migrate: use either --namespace or --all-namespaces, not both', { exitCode: 2 });
        const kc = loadKubeConfig(opts.kubeconfig);
        const options: MigrateOptions = {
          namespace: opts.namespace ?? contextNamespace(kc),
          allNamespaces: opts.allNamespaces ?? false,
          ...(opts.selector ? { selector: opts.selector } : {}),
          dryRun: opts.dryRun ?? false,
          ignoreWebhooks: opts.ignoreWebhooks ?? false,
        };
        const out = (line: string) => process.stdout.write(`${line}\n`);
        const report = opts.revert ? await runRevert(migrateClientsFor(kc), options, out) : await runMigrate(migrateClientsFor(kc), options, out);
        process.exitCode = report.exitCode;
      },
    );
}
