/**
 * Counts the dev cluster's answered requests for the benchmarks, by who sent them and what they
 * were: one row per (actor, verb, resource, subresource, target), with request and response bytes.
 *
 * Who (the User-Agent): `simulation` (the simulated kubelet, controllers and Flink HA store send
 * SIMULATION_USER_AGENT), `driver` (the benchmark itself, BENCH_DRIVER_USER_AGENT), `operator`
 * (everything else: the operator process sends client-node's default agent).
 * Target: `state` for the companion `<name>-operator-state` ConfigMaps, `flink-rest` for the
 * service proxy (`services/proxy`: Flink REST calls in apiserver-proxy mode, which would not reach
 * the API server in `direct` mode), `other` otherwise.
 * Shards (bench/shard-bench.ts): an operator process started with `benchOperatorUserAgent(label)`
 * is told apart by `operatorLabel` (its rows stay `actor: 'operator'`, so every sum over the
 * operator covers all its processes), and a request whose object name belongs to a deployment
 * named `shardDeploymentName(shard, i)` (the deployment itself, `<name>-…`, `flink-config-<name>`,
 * its Events `<name>.<hex>`) carries that shard in `namedShard`.
 *
 * Guarantees: every request the log records between two `reset()`s is counted exactly once.
 * Caveats: a watch is recorded when the dev cluster logs it (its bytes are those known then).
 */
import type { RequestLogEntry } from '../src/devcluster/dev-cluster.js';
import { SIMULATION_USER_AGENT } from '../src/devcluster/simulated-cluster.js';

export const BENCH_DRIVER_USER_AGENT = 'flink-operator-bench-driver/0.1';

const BENCH_OPERATOR_USER_AGENT_PREFIX = 'flink-operator-bench-operator/';

/** The User-Agent of a benchmark operator process labelled `label` (one per shard in shard-bench.ts). */
export function benchOperatorUserAgent(label: string): string {
  return `${BENCH_OPERATOR_USER_AGENT_PREFIX}${label}`;
}

/** The label of a benchmark operator process from its User-Agent (undefined for any other agent). */
export function operatorLabelOf(userAgent: string): string | undefined {
  return userAgent.startsWith(BENCH_OPERATOR_USER_AGENT_PREFIX) ? userAgent.slice(BENCH_OPERATOR_USER_AGENT_PREFIX.length) : undefined;
}

/** The name of the benchmark's deployment `suffix` of shard `shard` (a lowercase word): `shard-<shard>-<suffix>`. */
export function shardDeploymentName(shard: string, suffix: string | number): string {
  return `shard-${shard}-${typeof suffix === 'number' ? String(suffix).padStart(5, '0') : suffix}`;
}

const SHARD_OBJECT_NAME = /^(?:flink-config-)?shard-([a-z]+)-/;

/** The shard whose deployment an object name belongs to (see shardDeploymentName), if any. */
export function namedShardOf(objectName: string): string | undefined {
  return SHARD_OBJECT_NAME.exec(objectName)?.[1];
}

export type Actor = 'operator' | 'simulation' | 'driver';
export type Target = 'state' | 'flink-rest' | 'other';

export interface TallyRow {
  actor: Actor;
  verb: string;
  resource: string;
  subresource: string;
  target: Target;
  /** the benchmark operator process that sent it (operatorLabelOf), when it was one */
  operatorLabel?: string;
  /** the shard of the deployment the request's object name belongs to (namedShardOf), when it names one */
  namedShard?: string;
  n: number;
  requestBytes: number;
  responseBytes: number;
}

export const WRITE_VERBS: ReadonlySet<string> = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

export function actorOf(userAgent: string): Actor {
  if (userAgent.startsWith(SIMULATION_USER_AGENT.split('/')[0])) return 'simulation';
  if (userAgent.startsWith(BENCH_DRIVER_USER_AGENT.split('/')[0])) return 'driver';
  return 'operator';
}

export function targetOf(entry: Pick<RequestLogEntry, 'resource' | 'subresource' | 'name'>): Target {
  if (entry.resource === 'services' && entry.subresource === 'proxy') return 'flink-rest';
  if (entry.resource === 'configmaps' && entry.name.endsWith('-operator-state')) return 'state';
  return 'other';
}

/** The running tally (lives in the cluster process, fed by the request log). */
export class RequestTally {
  private rows = new Map<string, TallyRow>();

  record(entry: RequestLogEntry): void {
    const actor = actorOf(entry.userAgent);
    const target = targetOf(entry);
    const operatorLabel = actor === 'operator' ? operatorLabelOf(entry.userAgent) : undefined;
    const namedShard = entry.name ? namedShardOf(entry.name) : undefined;
    const key = `${actor}\u0000${entry.verb}\u0000${entry.resource}\u0000${entry.subresource}\u0000${target}\u0000${operatorLabel ?? ''}\u0000${namedShard ?? ''}`;
    let row = this.rows.get(key);
    if (!row) {
      row = { actor, verb: entry.verb, resource: entry.resource, subresource: entry.subresource, target, n: 0, requestBytes: 0, responseBytes: 0 };
      if (operatorLabel !== undefined) row.operatorLabel = operatorLabel;
      if (namedShard !== undefined) row.namedShard = namedShard;
      this.rows.set(key, row);
    }
    row.n++;
    row.requestBytes += entry.requestBytes;
    row.responseBytes += entry.responseBytes;
  }

  snapshot(): TallyRow[] {
    return [...this.rows.values()].map((r) => ({ ...r }));
  }

  reset(): void {
    this.rows = new Map();
  }
}

/** Sums over the rows matching `filter`. */
export function sumRows(rows: readonly TallyRow[], filter: (row: TallyRow) => boolean): { n: number; requestBytes: number; responseBytes: number } {
  let n = 0;
  let requestBytes = 0;
  let responseBytes = 0;
  for (const r of rows) {
    if (!filter(r)) continue;
    n += r.n;
    requestBytes += r.requestBytes;
    responseBytes += r.responseBytes;
  }
  return { n, requestBytes, responseBytes };
}

/** The operator's API-server requests by verb (Flink REST through the proxy and watches left out). */
export function operatorRequestsByVerb(rows: readonly TallyRow[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of rows) {
    if (r.actor !== 'operator' || r.target === 'flink-rest' || r.verb === 'watch' || isLeaseRow(r)) continue;
    out[r.verb] = (out[r.verb] ?? 0) + r.n;
  }
  return out;
}

/** Leader election's Lease reads and renewals: a fixed cost of the process (1 GET + 1 PUT per retry period), not of any deployment. */
function isLeaseRow(r: TallyRow): boolean {
  return r.resource === 'leases';
}

/** What the operator cost in one measured window, in the figures the report uses. */
export interface OperatorCost {
  byVerb: Record<string, number>;
  /** `verb resource[/subresource][ (state)]` → count, Flink REST and watches left out */
  byRequest: Record<string, number>;
  /** writes to the state ConfigMaps */
  stateWrites: number;
  /** writes to FlinkDeployment status (patch or update of the status subresource) */
  statusWrites: number;
  /** every other write (owned Deployments/Services/ConfigMaps, finalizers, Events) */
  otherWrites: number;
  /** GETs and LISTs of the API (not Flink REST) */
  reads: number;
  /** Flink REST calls through the service proxy */
  flinkRest: number;
  /** request bytes sent by the operator to the API server (Flink REST excluded) */
  bytesSent: number;
  bytesReceived: number;
  /** Lease requests of leader election in the window (left out of every figure above) */
  leaseRequests: number;
}

/**
 * The operator's cost in `rows`. `stateCreates`: state ConfigMaps created in the window (a POST has
 * no name in the log, so the caller counts them); they move from "other" to "state" writes.
 */
export function operatorCost(rows: readonly TallyRow[], stateCreates = 0): OperatorCost {
  const op = rows.filter((r) => r.actor === 'operator');
  const api = op.filter((r) => r.target !== 'flink-rest' && r.verb !== 'watch' && !isLeaseRow(r));
  const isWrite = (r: TallyRow) => WRITE_VERBS.has(r.verb);
  const isStatusWrite = (r: TallyRow) => isWrite(r) && r.resource === 'flinkdeployments' && r.subresource === 'status';
  const sent = sumRows(api, () => true);
  const byRequest: Record<string, number> = {};
  for (const r of api) {
    const key = `${r.verb} ${r.resource}${r.subresource ? `/${r.subresource}` : ''}${r.target === 'state' ? ' (state)' : ''}`;
    byRequest[key] = (byRequest[key] ?? 0) + r.n;
  }
  return {
    byVerb: operatorRequestsByVerb(rows),
    byRequest,
    stateWrites: sumRows(api, (r) => isWrite(r) && r.target === 'state').n + stateCreates,
    statusWrites: sumRows(api, isStatusWrite).n,
    otherWrites: sumRows(api, (r) => isWrite(r) && r.target !== 'state' && !isStatusWrite(r)).n - stateCreates,
    reads: sumRows(api, (r) => r.verb === 'get' || r.verb === 'list').n,
    flinkRest: sumRows(op, (r) => r.target === 'flink-rest').n,
    bytesSent: sent.requestBytes,
    bytesReceived: sent.responseBytes,
    leaseRequests: sumRows(op, isLeaseRow).n,
  };
}
