/**
 * What a simulated Flink process does at container start: it reads its container args and the
 * configuration mounted at /opt/flink/conf, exactly once, like a real `docker-entrypoint.sh` +
 * `StandaloneApplicationClusterEntryPoint`. A replaced pod is a new process and reads them again.
 *
 * Arg grammar (Flink's StandaloneApplicationClusterConfigurationParserFactory; parsing stops at the
 * first non-option, everything after it is program args):
 *   standalone-job [-j|--job-classname C] [-jid|--job-id ID] [-s|--fromSavepoint P]
 *                  [-n|--allowNonRestoredState] [-rm|--restoreMode M] [-D key=value | -Dkey=value]...
 *                  [-c|--configDir D] [-r|--webui-port N] [--host H] [program args...]
 * `jobmanager` (session cluster) and `taskmanager` are recognised; anything else is `unknown`.
 *
 * Native Kubernetes mode (Flink's CmdJobManagerDecorator / CmdTaskManagerDecorator): the args are
 * Flink's bash wrapper `["bash", "-c", "kubernetes-jobmanager.sh <target> [entrypoint args]"]`
 * with target `kubernetes-application` (an application JobManager) or `kubernetes-session`, and
 * `["bash", "-c", "kubernetes-taskmanager.sh -D... "]` for a TaskManager; `native` is then true.
 * A native application JobManager has no CLI options for its job: it reads the entry class from
 * `$internal.application.main` and the program args from `$internal.application.program-args`
 * (`;`-separated) in its configuration (KubernetesApplicationClusterEntrypoint).
 */
import { type FlinkClusterSettings, readClusterSettings } from './flink-configuration.js';

export type FlinkProcessRole = 'application-jobmanager' | 'session-jobmanager' | 'taskmanager' | 'unknown';

export interface ParsedFlinkArgs {
  readonly role: FlinkProcessRole;
  /** Started through Flink's native Kubernetes scripts (kubernetes-jobmanager.sh / kubernetes-taskmanager.sh). */
  readonly native: boolean;
  readonly jobClassName: string | null;
  readonly jobId: string | null;
  readonly fromSavepoint: string | null;
  readonly allowNonRestoredState: boolean;
  readonly restoreMode: string | null;
  readonly dynamicProperties: ReadonlyMap<string, string>;
  readonly programArgs: readonly string[];
}

const VALUE_OPTIONS: Record<string, 'jobClassName' | 'jobId' | 'fromSavepoint' | 'restoreMode' | 'ignored'> = {
  '-j': 'jobClassName',
  '--job-classname': 'jobClassName',
  '-jid': 'jobId',
  '--job-id': 'jobId',
  '-s': 'fromSavepoint',
  '--fromSavepoint': 'fromSavepoint',
  '-rm': 'restoreMode',
  '--restoreMode': 'restoreMode',
  '-c': 'ignored',
  '--configDir': 'ignored',
  '-r': 'ignored',
  '--webui-port': 'ignored',
  '--host': 'ignored',
};

/** Parses a Flink container's args. Throws on an option missing its value, as Flink's parser does. */
export function parseFlinkArgs(args: readonly string[]): ParsedFlinkArgs {
  const native = nativeCommandLine(args);
  if (native) return parseOptions(native.role, native.rest, true);
  const [command, ...rest] = args;
  const role: FlinkProcessRole =
    command === 'standalone-job'
      ? 'application-jobmanager'
      : command === 'jobmanager'
        ? 'session-jobmanager'
        : command === 'taskmanager'
          ? 'taskmanager'
          : 'unknown';
  return parseOptions(role, rest, false);
}

/** `bash -c "kubernetes-jobmanager.sh <target> ..."` / `bash -c "kubernetes-taskmanager.sh ..."`: role and the words after the script (and target). */
function nativeCommandLine(args: readonly string[]): { role: FlinkProcessRole; rest: string[] } | undefined {
  if (args.length !== 3 || args[0] !== 'bash' || args[1] !== '-c') return undefined;
  const words = args[2]
    .trim()
    .split(/\s+/)
    .filter((w) => w !== '');
  const script = words[0]?.slice(words[0].lastIndexOf('/') + 1);
  if (script === 'kubernetes-taskmanager.sh') return { role: 'taskmanager', rest: words.slice(1) };
  if (script !== 'kubernetes-jobmanager.sh') return undefined;
  const target = words[1];
  const role: FlinkProcessRole =
    target === 'kubernetes-application' ? 'application-jobmanager' : target === 'kubernetes-session' ? 'session-jobmanager' : 'unknown';
  return { role, rest: words.slice(2) };
}

function parseOptions(role: FlinkProcessRole, rest: readonly string[], native: boolean): ParsedFlinkArgs {
  const values: Record<string, string | null> = { jobClassName: null, jobId: null, fromSavepoint: null, restoreMode: null };
  const dynamicProperties = new Map<string, string>();
  let allowNonRestoredState = false;
  let i = 0;
  for (; i < rest.length; i++) {
    const arg = rest[i];
    if (arg === '-n' || arg === '--allowNonRestoredState') {
      allowNonRestoredState = true;
    } else if (arg === '-D' || (arg.startsWith('-D') && arg.length > 2)) {
      const assignment = arg === '-D' ? rest[++i] : arg.slice(2);
      if (assignment === undefined) throw new Error('Missing argument for option: D');
      const eq = assignment.indexOf('=');
      if (eq <= 0) throw new Error(`invalid dynamic property "${assignment}": expected key=value`);
      dynamicProperties.set(assignment.slice(0, eq), assignment.slice(eq + 1));
    } else if (arg in VALUE_OPTIONS) {
      const value = rest[++i];
      if (value === undefined) throw new Error(`Missing argument for option: ${arg.replace(/^-+/, '')}`);
      const field = VALUE_OPTIONS[arg];
      if (field !== 'ignored') values[field] = value;
    } else {
      break; // first non-option: program args start here
    }
  }
  return {
    role,
    native,
    jobClassName: values.jobClassName ?? null,
    jobId: values.jobId ?? null,
    fromSavepoint: values.fromSavepoint ?? null,
    allowNonRestoredState,
    restoreMode: values.restoreMode ?? null,
    dynamicProperties,
    programArgs: rest.slice(i),
  };
}

/** Everything a simulated JobManager process needs, fixed at its start. */
export interface JobManagerLaunch {
  readonly args: ParsedFlinkArgs;
  /** The effective configuration: config.yaml overlaid with `-D` properties and arg-derived keys. */
  readonly config: ReadonlyMap<string, string>;
  readonly settings: FlinkClusterSettings;
  /** Restore path exactly as given (`--fromSavepoint` wins over `execution.savepoint.path`), or null. */
  readonly restoreFrom: string | null;
  readonly allowNonRestoredState: boolean;
  /** Job name shown by the REST API: the entry class's simple name, or Flink's default `Flink Streaming Job`. */
  readonly jobName: string;
  /** Flink version reported by GET /config, derived from the image tag (`flink:1.20` → 1.20.0). */
  readonly flinkVersion: string;
}

/** Flink version from an image reference: `flink:1.20.1-scala_2.12-java11` → `1.20.1`, `flink:2.2` → `2.2.0`; default 1.20.0. */
export function flinkVersionFromImage(image: string | undefined): string {
  const tag = image?.includes(':') ? image.slice(image.lastIndexOf(':') + 1) : '';
  const match = /^(\d+)\.(\d+)(?:\.(\d+))?/.exec(tag);
  if (!match) return '1.20.0';
  return `${match[1]}.${match[2]}.${match[3] ?? '0'}`;
}

/**
 * The name the REST API shows for a job run from `entryClass`: its simple name; without one,
 * Flink's default name of a streaming job whose program sets none, `Flink Streaming Job`.
 */
export function jobNameOf(entryClass: string | null): string {
  const className = entryClass ?? 'Flink Streaming Job';
  return className.slice(className.lastIndexOf('.') + 1);
}

/** Builds the launch from container args + config map. Throws like a JobManager that fails to start. */
export function buildJobManagerLaunch(args: readonly string[], configYamlMap: ReadonlyMap<string, string>, image?: string): JobManagerLaunch {
  let parsed = parseFlinkArgs(args);
  const config = new Map(configYamlMap);
  if (parsed.native && parsed.role === 'application-jobmanager') {
    const programArgs = configYamlMap.get('$internal.application.program-args');
    parsed = {
      ...parsed,
      jobClassName: parsed.jobClassName ?? configYamlMap.get('$internal.application.main') ?? null,
      programArgs: programArgs ? programArgs.split(';') : parsed.programArgs,
    };
  }
  for (const [k, v] of parsed.dynamicProperties) config.set(k, v);
  if (parsed.jobId !== null) config.set('$internal.pipeline.job-id', parsed.jobId);
  const settings = readClusterSettings(config);
  const restoreFrom = parsed.fromSavepoint ?? settings.savepointPath;
  return {
    args: parsed,
    config,
    settings,
    restoreFrom,
    allowNonRestoredState: parsed.allowNonRestoredState || settings.allowNonRestoredState,
    jobName: jobNameOf(parsed.jobClassName),
    flinkVersion: flinkVersionFromImage(image),
  };
}
