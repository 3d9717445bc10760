import { readFileSync } from 'node:fs';
import { delimiter } from 'node:path';
import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { FLINK_GROUP } from '../api/flink-deployment.js';
import { FLINK_STATE_SNAPSHOT_CRD_NAME, FLINK_STATE_SNAPSHOT_PLURAL, FLINK_STATE_SNAPSHOT_VERSION } from '../api/flink-state-snapshot.js';
import type { Logger } from 'pino';
import type { Command } from 'commander';
import { Manager, type ReconcilerFactory } from '../runtime/manager.js';
import { OperatorConfigError, resolveOperatorConfig, type OperatorConfig } from '../runtime/operator-config.js';
import { OPERATOR_KNOBS } from '../runtime/operator-knobs.js';
import { createLogger } from '../runtime/logger.js';
import {
  type DefaultConfigurationFile,
  type DefaultConfigurationLog,
  DefaultConfigurationSource,
  readDefaultConfigurationFile,
} from '../runtime/default-configuration-source.js';

/**
 * `flink-operator run`: runs the operator until SIGTERM/SIGINT.
 *
 * Every knob of operator-knobs.ts is a flag here (`--namespace` may repeat); `--config FILE` (or
 * FLINK_OPERATOR_CONFIG) names an optional YAML/JSON file. Precedence: flag > env > file > default.
 * On the first SIGTERM/SIGINT the manager shuts down gracefully (bounded by --shutdown-timeout);
 * a second signal exits at once with status 1.
 */
/** The reconcilers an operator process runs: FlinkDeployments', and FlinkSessionJobs' and FlinkStateSnapshots' when given. */
export interface OperatorReconcilers {
  readonly flinkDeployments: ReconcilerFactory;
  readonly flinkSessionJobs?: ReconcilerFactory;
  /** Used only when the FlinkStateSnapshot CRD is installed (checked at start; without it, no snapshot resources are read or written). */
  readonly flinkStateSnapshots?: ReconcilerFactory;
}

export function registerRunCommand(program: Command, reconcilers: OperatorReconcilers): void {
  const command = program.command('run').description('run the operator against a Kubernetes cluster');
  command.option('--config <file>', 'YAML or JSON file with settings (keys as in the README; env FLINK_OPERATOR_CONFIG)');
  for (const knob of OPERATOR_KNOBS) {
    const help = `${knob.description} (env ${knob.env}; default ${knob.defaultText})`;
    if (knob.type === 'bool') command.option(`--${knob.flag}`, help).option(`--no-${knob.flag}`, `turn --${knob.flag} off`);
    else if (knob.type === 'list')
      command.option(`--${knob.flag} <value>`, help, (value: string, previous: string[] | undefined) => [...(previous ?? []), ...value.split(',')]);
    else command.option(`--${knob.flag} <value>`, help);
  }
  command.action(async (opts: Record<string, unknown>) => {
    let startup: StartupConfiguration;
    try {
      startup = startupConfiguration(opts, process.env);
    } catch (error) {
      if (error instanceof OperatorConfigError) command.error(`flink-operator run: ${error.message}`, { exitCode: 2 });
      throw error;
    }
    const handle = await startOperator(startup.config, reconcilers, undefined, startup);
    await handle.stopped;
  });
}

/** Resolves the configuration from commander's parsed options, the environment and the config file. */
export function configFromCommandLine(opts: Record<string, unknown>, env: NodeJS.ProcessEnv): OperatorConfig {
  return startupConfiguration(opts, env).config;
}

/** The operator's settings and its default-configuration file (read once here; the source reads it again when it changes). */
export interface StartupConfiguration {
  readonly config: OperatorConfig;
  readonly defaults: DefaultConfigurationFile | undefined;
  /** The configuration directory was named (flag, env or config file), not the default one. */
  readonly defaultsDirExplicit: boolean;
  /** The settings again, from the same flags, env and config file over a changed default-configuration file. */
  readonly resolveWith?: (apacheFile: { readonly name: string; readonly flat: Readonly<Record<string, string>> }) => OperatorConfig;
}

/**
 * Resolves the settings in two steps: first without the default-configuration file, to learn
 * where it is (--flink-conf-dir, FLINK_CONF_DIR or the config file), then with the file's
 * Apache-named operator settings under everything else.
 */
export function startupConfiguration(opts: Record<string, unknown>, env: NodeJS.ProcessEnv): StartupConfiguration {
  const flags: Partial<Record<keyof OperatorConfig, unknown>> = {};
  for (const knob of OPERATOR_KNOBS) flags[knob.key] = opts[camelCase(knob.flag)];
  const configPath = (opts.config as string | undefined) ?? (env.FLINK_OPERATOR_CONFIG || undefined);
  let file: { name: string; text: string } | undefined;
  if (configPath) {
    try {
      file = { name: configPath, text: readFileSync(configPath, 'utf8') };
    } catch (error) {
      throw new OperatorConfigError(`cannot read the config file ${configPath}: ${(error as Error).message}`);
    }
  }
  const located = resolveOperatorConfig({ flags, env, file });
  const defaultsDirExplicit = located.flinkConfDir !== OPERATOR_KNOBS.find((k) => k.key === 'flinkConfDir')?.default;
  const defaults = readDefaultConfigurationFile(located.flinkConfDir);
  const config = defaults ? resolveOperatorConfig({ flags, env, file, apacheFile: defaults }) : located;
  return { config, defaults, defaultsDirExplicit, resolveWith: (apacheFile) => resolveOperatorConfig({ flags, env, file, apacheFile }) };
}

/** The default-configuration source of an operator whose settings are `config`. */
export function defaultConfigurationSourceFor(
  config: OperatorConfig,
  log: DefaultConfigurationLog,
  startup?: Pick<StartupConfiguration, 'defaults' | 'defaultsDirExplicit'>,
): DefaultConfigurationSource {
  return new DefaultConfigurationSource({
    dir: config.flinkConfDir,
    explicit: startup?.defaultsDirExplicit ?? false,
    initial: startup ? startup.defaults : readDefaultConfigurationFile(config.flinkConfDir),
    dynamic: config.dynamicConfigEnabled,
    checkIntervalMs: config.dynamicConfigCheckIntervalMs,
    log,
  });
}

export interface OperatorHandle {
  readonly manager: Manager;
  /** Resolves when the operator has shut down after a signal (or `shutdown()`). */
  readonly stopped: Promise<void>;
  shutdown(): Promise<void>;
}

/** Starts a Manager with signal handling; used by `run` and by tests that spawn an operator process. */
export async function startOperator(
  config: OperatorConfig,
  reconcilers: OperatorReconcilers | ReconcilerFactory,
  kubeConfig?: KubeConfig,
  startup?: Pick<StartupConfiguration, 'defaults' | 'defaultsDirExplicit' | 'resolveWith'>,
): Promise<OperatorHandle> {
  const logger = createLogger({ format: config.logFormat, level: config.logLevel as never, base: { identity: config.identity } });
  const defaultConfiguration = defaultConfigurationSourceFor(config, logger, startup);
  const kc = kubeConfig ?? loadKubeConfig(config.kubeconfig);
  const { flinkDeployments, flinkSessionJobs, flinkStateSnapshots } = typeof reconcilers === 'function' ? { flinkDeployments: reconcilers } : reconcilers;
  const snapshots = flinkStateSnapshots && (await stateSnapshotCrdServed(kc, logger)) ? flinkStateSnapshots : undefined;
  const manager = new Manager({
    config,
    kubeConfig: kc,
    makeReconciler: flinkDeployments,
    ...(flinkSessionJobs ? { makeSessionJobReconciler: flinkSessionJobs } : {}),
    ...(snapshots ? { makeStateSnapshotReconciler: snapshots } : {}),
    logger,
    defaultConfiguration,
  });
  if (config.dynamicNamespaces && startup?.resolveWith) followWatchedNamespaces(manager, defaultConfiguration, config, startup.resolveWith, logger);
  let resolveStopped!: () => void;
  const stopped = new Promise<void>((resolve) => (resolveStopped = resolve));
  let stopping: Promise<void> | undefined;
  const shutdown = () => {
    stopping ??= manager.stop().finally(() => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      resolveStopped();
    });
    return stopping;
  };
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    logger.info({ signal }, 'shutting down');
    void shutdown();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  await manager.start();
  logger.info(
    { namespaces: config.namespaces.length ? config.namespaces : 'all', leaderElect: config.leaderElect, identity: config.identity },
    'operator started',
  );
  return { manager, stopped, shutdown };
}

/**
 * Whether the API server serves FlinkStateSnapshots (as the Apache operator checks for the CRD at
 * start). Not served: the operator runs without snapshot resources and says so once; installing
 * the CRD later takes a restart. Unanswerable (no permission for discovery, an outage): assumed
 * served, so the informer's own errors say what is wrong.
 */
async function stateSnapshotCrdServed(kubeConfig: KubeConfig, logger: Logger): Promise<boolean> {
  try {
    const resources = await kubeConfig.makeApiClient(CustomObjectsApi).getAPIResources({ group: FLINK_GROUP, version: FLINK_STATE_SNAPSHOT_VERSION });
    if (resources.resources.some((r) => r.name === FLINK_STATE_SNAPSHOT_PLURAL)) return true;
  } catch (error) {
    if ((error as { code?: number }).code !== 404) {
      logger.warn({ err: (error as Error).message }, 'could not tell whether FlinkStateSnapshots are served; assuming they are');
      return true;
    }
  }
  logger.warn(
    { crd: FLINK_STATE_SNAPSHOT_CRD_NAME },
    'the FlinkStateSnapshot CRD is not installed: savepoints and checkpoints are recorded in the operator state and status only (kubectl apply --server-side -f crds/, then restart the operator)',
  );
  return false;
}

/**
 * `kubernetes.operator.dynamic.namespaces.enabled`: when the default-configuration file changes the
 * watched namespaces (and no flag, env or config file sets them, which win), the manager watches the
 * new set without a restart (Apache's FlinkConfigManager namespace listener).
 */
export function followWatchedNamespaces(
  manager: Pick<Manager, 'setWatchedNamespaces'>,
  source: DefaultConfigurationSource,
  initial: OperatorConfig,
  resolveWith: NonNullable<StartupConfiguration['resolveWith']>,
  logger: DefaultConfigurationLog,
): void {
  let watched = [...initial.namespaces].sort();
  source.onChange((next) => {
    let namespaces: string[];
    try {
      namespaces = [...resolveWith({ name: initial.flinkConfDir, flat: next.all }).namespaces].sort();
    } catch (error) {
      logger.error({ err: (error as Error).message }, 'the watched namespaces in the changed default configuration are invalid; kept as they were');
      return;
    }
    if (namespaces.join(',') === watched.join(',')) return;
    watched = namespaces;
    void manager.setWatchedNamespaces(namespaces);
  });
}

function loadKubeConfig(path: string | undefined): KubeConfig {
  const kc = new KubeConfig();
  if (path && !path.includes(delimiter)) kc.loadFromFile(path);
  // a KUBECONFIG list (a:b) is merged by loadFromDefault
  else kc.loadFromDefault();
  return kc;
}

function camelCase(flag: string): string {
  return flag.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());
}
