/**
 * `status.clusterInfo` of a FlinkDeployment as the Apache operator fills it: a flat string map
 * that dashboards, metrics exporters and scripts written for the Apache operator read.
 *
 * | key | value | Apache source |
 * |---|---|---|
 * | `flink-version` | GET /config `flink-version`, e.g. `1.20.0` | AbstractFlinkService.populateFlinkVersion (DashboardConfiguration.FIELD_NAME_FLINK_VERSION) |
 * | `flink-revision` | GET /config `flink-revision`, e.g. `b2ca390 @ 2022-02-03T14:54:22+01:00` | same |
 * | `total-cpu` | cores of all JobManagers and TaskManagers, a Java double (`3.0`) | FlinkUtils.calculateClusterCpuUsage |
 * | `total-memory` | bytes of all JobManagers and TaskManagers, a Java long (`4294967296`) | FlinkUtils.calculateClusterMemoryUsage |
 * | `state-size` | bytes of the newest completed checkpoint (`state_size` of GET /jobs/:id/checkpoints) | AbstractFlinkService.populateStateSize |
 *
 * The arithmetic is Apache's (flink-kubernetes-operator, utils/FlinkUtils.java):
 * - cpu = jmCpu × jmCpuLimitFactor × jmReplicas + tmCpu × tmCpuLimitFactor × tmReplicas, where a
 *   component's cpu is `resource.cpu` / `resources` (request, else limit) / `kubernetes.<c>.cpu`,
 *   default 1.0; its limit factor is limit ÷ request when `resources` sets both, else
 *   `kubernetes.<c>.cpu.limit-factor`, default 1.0; jmReplicas `jobManager.replicas` /
 *   `kubernetes.jobmanager.replicas`, default 1;
 * - memory = round(jmMiB × 1024² × jmMemoryLimitFactor × jmReplicas) + round(tmMiB × 1024² ×
 *   tmMemoryLimitFactor × tmReplicas), where MiB is the whole mebibytes of the process size
 *   (`resource.memory` / `resources` / `<c>.memory.process.size`; Flink's MemorySize.getMebiBytes
 *   truncates) and the limit factors are read as the cpu ones (`kubernetes.<c>.memory.limit-factor`).
 *
 * Guarantees: pure; values are strings formatted as Java's String.valueOf formats them, so a
 * tool that compares them with an Apache-managed cluster sees the same text.
 * Caveats: tmReplicas is the TaskManagers the operator observes (the TaskManager Deployment's
 * replicas, or native-mode pods), where Apache counts the TaskManagers registered with the
 * JobManager (GET /taskmanagers): this costs no request per pass. When a component's process size
 * is not known from the spec (no memory anywhere), `total-memory` is left out (Apache's validation
 * refuses such a spec). When both `resource` and `resources` are set, the one this operator
 * renders into the pods wins (`resource`, flink-container-resources.ts), not Apache's `resources`.
 */
import type { FlinkDeploymentSpec, JobManagerSpec, TaskManagerSpec } from '../api/flink-deployment-spec.js';
import { flattenFlinkConfiguration } from '../api/flink-configuration.js';
import type { FlinkDashboardConfig } from './flink-rest-types.js';
import { cpuCoresOf, parseMemoryBytes } from './flink-container-resources.js';

/** The keys of status.clusterInfo (Apache: DashboardConfiguration and AbstractFlinkService.FIELD_NAME_*). */
export const CLUSTER_INFO_KEYS = {
  flinkVersion: 'flink-version',
  flinkRevision: 'flink-revision',
  totalCpu: 'total-cpu',
  totalMemory: 'total-memory',
  stateSize: 'state-size',
} as const;

/** What GET /config tells of the running JobManager's Flink build. */
export interface FlinkBuild {
  readonly version: string;
  readonly revision?: string;
}

export function flinkBuildOf(config: FlinkDashboardConfig): FlinkBuild {
  return { version: config['flink-version'], ...(config['flink-revision'] !== undefined ? { revision: config['flink-revision'] } : {}) };
}

/** The resources of a whole cluster, as Apache computes them. */
export interface ClusterResourceTotals {
  /** Cores. */
  readonly cpu: number;
  /** Bytes; undefined when a process size is not known from the spec. */
  readonly memoryBytes?: number;
}

const MIB = 1024 * 1024;

type Component = JobManagerSpec | TaskManagerSpec | undefined;

function hasShorthand(component: Component): boolean {
  const r = component?.resource;
  return r !== undefined && (r.cpu !== undefined || r.memory !== undefined || r.ephemeralStorage !== undefined);
}

/** Request, else limit (Apache ResourceConfigUtils.getRequestOrLimit). */
function requestOrLimit(component: Component, key: string): number | string | undefined {
  const requests = component?.resources?.requests;
  const limits = component?.resources?.limits;
  return requests?.[key] ?? limits?.[key];
}

/** limit ÷ request when both are set and the request is positive (Apache ResourceConfigUtils.computeLimitFactor). */
function limitFactor(component: Component, key: string, amount: (q: number | string) => number | undefined): number | undefined {
  const request = component?.resources?.requests?.[key];
  const limit = component?.resources?.limits?.[key];
  if (request === undefined || limit === undefined) return undefined;
  const r = amount(request);
  const l = amount(limit);
  return r !== undefined && l !== undefined && r > 0 ? l / r : undefined;
}

function numberOf(config: Readonly<Record<string, string>>, key: string): number | undefined {
  const raw = config[key]?.trim();
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  return Number.isFinite(value) ? value : undefined;
}

function componentCpu(component: Component, config: Readonly<Record<string, string>>, prefix: 'jobmanager' | 'taskmanager'): number {
  const cores = hasShorthand(component) ? component?.resource?.cpu : cpuCoresOf(requestOrLimit(component, 'cpu'));
  const factor = hasShorthand(component) ? undefined : limitFactor(component, 'cpu', cpuCoresOf);
  return (cores ?? numberOf(config, `kubernetes.${prefix}.cpu`) ?? 1) * (factor ?? numberOf(config, `kubernetes.${prefix}.cpu.limit-factor`) ?? 1);
}

function memoryBytesOf(quantity: number | string, field: string): number | undefined {
  try {
    return parseMemoryBytes(String(quantity), field);
  } catch {
    return undefined;
  }
}

/** round(MiB × 1024² × limit factor × replicas), undefined when the process size is unknown. */
function componentMemory(
  component: Component,
  config: Readonly<Record<string, string>>,
  prefix: 'jobmanager' | 'taskmanager',
  replicas: number,
): number | undefined {
  const field = `spec.${prefix === 'jobmanager' ? 'jobManager' : 'taskManager'}`;
  const shorthand = hasShorthand(component);
  const fromSpec = shorthand ? component?.resource?.memory : requestOrLimit(component, 'memory');
  const processSize = fromSpec ?? config[`${prefix}.memory.process.size`];
  if (processSize === undefined) return undefined;
  const bytes = memoryBytesOf(processSize, `${field}.memory`);
  if (bytes === undefined) return undefined;
  const factor =
    (shorthand ? undefined : limitFactor(component, 'memory', (q) => memoryBytesOf(q, `${field}.resources.memory`))) ??
    numberOf(config, `kubernetes.${prefix}.memory.limit-factor`) ??
    1;
  return Math.round(Math.floor(bytes / MIB) * MIB * factor * replicas);
}

/** The cluster's cores and bytes for `spec` (the deployed spec with the operator's defaults) and `taskManagerReplicas` TaskManagers. */
export function clusterResourceTotals(spec: FlinkDeploymentSpec, taskManagerReplicas: number): ClusterResourceTotals {
  const config = flattenFlinkConfiguration(spec.flinkConfiguration);
  const jmReplicas = (spec.jobManager?.replicas ?? 0) > 0 ? spec.jobManager!.replicas! : (numberOf(config, 'kubernetes.jobmanager.replicas') ?? 1);
  const cpu = componentCpu(spec.jobManager, config, 'jobmanager') * jmReplicas + componentCpu(spec.taskManager, config, 'taskmanager') * taskManagerReplicas;
  const jmMemory = componentMemory(spec.jobManager, config, 'jobmanager', jmReplicas);
  const tmMemory = componentMemory(spec.taskManager, config, 'taskmanager', taskManagerReplicas);
  return { cpu, ...(jmMemory !== undefined && tmMemory !== undefined ? { memoryBytes: jmMemory + tmMemory } : {}) };
}

/**
 * A double as Java's `String.valueOf(double)` writes it: `3.0`, `0.5`, `1.0E7`, `1.0E-4` (plain
 * notation with at least one fraction digit from 10⁻³ up to 10⁷, computerized scientific outside).
 */
export function javaDoubleString(value: number): string {
  if (!Number.isFinite(value)) return Number.isNaN(value) ? 'NaN' : value > 0 ? 'Infinity' : '-Infinity';
  if (value === 0) return Object.is(value, -0) ? '-0.0' : '0.0';
  const magnitude = Math.abs(value);
  if (magnitude >= 1e-3 && magnitude < 1e7) {
    const text = String(value);
    return text.includes('.') ? text : `${text}.0`;
  }
  const [mantissa, exponent] = value.toExponential().split('e');
  return `${mantissa.includes('.') ? mantissa : `${mantissa}.0`}E${Number(exponent)}`;
}

/** What one pass learned for clusterInfo; each part is left out when this pass did not learn it. */
export interface ClusterInfoFacts {
  readonly build?: FlinkBuild;
  readonly totals?: ClusterResourceTotals;
  /** Bytes of the newest completed checkpoint. */
  readonly stateSize?: number;
}

/**
 * The new clusterInfo: `previous` with what this pass learned written over it (Apache puts the
 * new values into the map it keeps, it never clears one). Undefined when there is nothing to show.
 */
export function mergeClusterInfo(previous: Readonly<Record<string, string>> | undefined, facts: ClusterInfoFacts): Record<string, string> | undefined {
  const info: Record<string, string> = { ...previous };
  if (facts.build) {
    info[CLUSTER_INFO_KEYS.flinkVersion] = facts.build.version;
    if (facts.build.revision !== undefined) info[CLUSTER_INFO_KEYS.flinkRevision] = facts.build.revision;
  }
  if (facts.totals) {
    info[CLUSTER_INFO_KEYS.totalCpu] = javaDoubleString(facts.totals.cpu);
    if (facts.totals.memoryBytes !== undefined) info[CLUSTER_INFO_KEYS.totalMemory] = String(facts.totals.memoryBytes);
  }
  if (facts.stateSize !== undefined) info[CLUSTER_INFO_KEYS.stateSize] = String(facts.stateSize);
  return Object.keys(info).length > 0 ? info : undefined;
}
