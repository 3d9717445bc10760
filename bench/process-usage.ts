/**
 * CPU seconds, event-loop utilization, RSS and heap of the current process, for the benchmark's
 * child processes (cluster-process.ts, simulation-process.ts). The event-loop utilization is the
 * share of time the loop was busy since the previous call.
 */
import { performance } from 'node:perf_hooks';

export interface ProcessUsage {
  cpuSeconds: number;
  /** event-loop utilization (0..1) since the previous `usage` request */
  eventLoopUtilization: number;
  rssBytes: number;
  heapUsedBytes: number;
}

let lastElu = performance.eventLoopUtilization();

/** CPU, event-loop utilization since the previous call, RSS and heap of this process. */
export function processUsage(): ProcessUsage {
  const now = performance.eventLoopUtilization();
  const delta = performance.eventLoopUtilization(now, lastElu);
  lastElu = now;
  const cpu = process.cpuUsage();
  const memory = process.memoryUsage();
  return { cpuSeconds: (cpu.user + cpu.system) / 1e6, eventLoopUtilization: delta.utilization, rssBytes: memory.rss, heapUsedBytes: memory.heapUsed };
}
