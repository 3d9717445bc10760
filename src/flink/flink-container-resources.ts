/**
 * The Flink container's Kubernetes resources and the matching Flink memory setting, from a
 * component spec (`jobManager` / `taskManager`):
 *
 * - `resource: {cpu, memory, ephemeralStorage}` (the Apache operator's shorthand) → requests and
 *   limits both set to cpu / memory (in Mi) / ephemeral-storage, as Flink's decorators do with
 *   limit factors 1.0; the memory also becomes `jobmanager|taskmanager.memory.process.size`.
 * - `resources` (a Kubernetes ResourceRequirements) → used verbatim; its memory (limit, else
 *   request) becomes the process size.
 * - neither → no resources, no process size (Flink's defaults apply).
 *
 * Memory strings are read as the Apache operator reads them: Flink's MemorySize syntax first
 * (`1024m` = 1024 MiB, `2g` = 2 GiB, case-insensitive, all binary units), else a Kubernetes
 * quantity (`2048Mi`, `2Gi`, `1Ei`). As in Flink, `2G` and `500M` are binary (GiB, MiB), unlike
 * Kubernetes. Invalid memory throws with the field name.
 */
import type { V1ResourceRequirements } from '@kubernetes/client-node';
import type { JobManagerSpec, TaskManagerSpec } from '../api/flink-deployment-spec.js';

const MIB = 1024 * 1024;

const FLINK_MEMORY_UNITS: ReadonlyArray<[readonly string[], number]> = [
  [['', 'b', 'bytes'], 1],
  [['k', 'kb', 'kibibytes'], 1024],
  [['m', 'mb', 'mebibytes'], MIB],
  [['g', 'gb', 'gibibytes'], 1024 * MIB],
  [['t', 'tb', 'tebibytes'], 1024 * 1024 * MIB],
];

const KUBERNETES_MEMORY_UNITS: Readonly<Record<string, number>> = {
  Ki: 1024,
  Mi: MIB,
  Gi: 1024 * MIB,
  Ti: 1024 * 1024 * MIB,
  Pi: 1024 ** 5,
  Ei: 1024 ** 6,
  P: 1e15,
  E: 1e18,
};

/** CPU cores of a Kubernetes quantity or a number (`2`, `500m`, `0.5`); undefined when not a positive amount. */
export function cpuCoresOf(quantity: unknown): number | undefined {
  if (typeof quantity !== 'string' && typeof quantity !== 'number') return undefined;
  const text = String(quantity).trim();
  const cores = text.endsWith('m') ? Number(text.slice(0, -1)) / 1000 : Number(text);
  return Number.isFinite(cores) && cores > 0 ? cores : undefined;
}

/** Bytes of a memory string (Flink syntax first, then a Kubernetes quantity). Throws naming `field`. */
export function parseMemoryBytes(value: string, field: string): number {
  const text = value.replace(/\s+/g, '');
  const match = /^(\d+(?:\.\d+)?)([A-Za-z]*)$/.exec(text);
  if (match) {
    const amount = Number(match[1]);
    const unit = match[2];
    const flinkFactor = FLINK_MEMORY_UNITS.find(([labels]) => labels.includes(unit.toLowerCase()))?.[1];
    if (flinkFactor !== undefined) return Math.round(amount * flinkFactor);
    const kubernetesFactor = KUBERNETES_MEMORY_UNITS[unit];
    if (kubernetesFactor !== undefined) return Math.round(amount * kubernetesFactor);
  }
  throw new Error(`${field}: "${value}" is not a memory size; use e.g. 2048m or 2g (Flink) or 2Gi (Kubernetes)`);
}

/** A byte count in Flink's MemorySize syntax: whole MiB as `<n>m`, otherwise `<n>b`. */
export function flinkMemorySize(bytes: number): string {
  return bytes % MIB === 0 ? `${bytes / MIB}m` : `${bytes}b`;
}

/** Kubernetes quantity of a byte count: whole MiB as `<n>Mi`, otherwise plain bytes. */
export function kubernetesMemoryQuantity(bytes: number): string {
  return bytes % MIB === 0 ? `${bytes / MIB}Mi` : String(bytes);
}

export interface ComponentResources {
  /** Container resources, or undefined when the spec sets none. */
  readonly requirements?: V1ResourceRequirements;
  /** Flink `*.memory.process.size` value, or undefined. */
  readonly processSize?: string;
}

/** Resources of one component. `field` (`spec.jobManager` / `spec.taskManager`) names it in errors. */
export function componentResources(component: JobManagerSpec | TaskManagerSpec | undefined, field: string): ComponentResources {
  if (!component) return {};
  if (
    component.resource &&
    (component.resource.cpu !== undefined || component.resource.memory !== undefined || component.resource.ephemeralStorage !== undefined)
  ) {
    const { cpu, memory, ephemeralStorage } = component.resource;
    const quantities: Record<string, string> = {};
    let processSize: string | undefined;
    if (cpu !== undefined) quantities.cpu = String(cpu);
    if (memory !== undefined) {
      const bytes = parseMemoryBytes(memory, `${field}.resource.memory`);
      quantities.memory = kubernetesMemoryQuantity(bytes);
      processSize = flinkMemorySize(bytes);
    }
    if (ephemeralStorage !== undefined) quantities['ephemeral-storage'] = ephemeralStorage;
    return {
      requirements: { requests: { ...quantities }, limits: { ...quantities } },
      ...(processSize !== undefined ? { processSize } : {}),
    };
  }
  if (component.resources) {
    const requirements = structuredClone(component.resources) as V1ResourceRequirements;
    const memory = component.resources.limits?.memory ?? component.resources.requests?.memory;
    if (memory === undefined) return { requirements };
    return { requirements, processSize: flinkMemorySize(parseMemoryBytes(String(memory), `${field}.resources.memory`)) };
  }
  return {};
}
