/**
 * `npx tsx bench/state-encode-cost.ts [--sizes 800,5000,20000,50000] [--runs 3]`: what one
 * `encodeStateConfigMap` call costs (it is synchronous: the figure is how long it blocks the event
 * loop) for a typical state whose savepoint history has that many records, s3:// locations of
 * 100–200 characters. With the default limits 800 records fit uncompressed, 5,000 need gzip,
 * 20,000 and 50,000 need the history trimmed; after each trim, a row for the next write at the
 * limit (the trimmed history plus one new savepoint). Records come from a fixed seed, so every run
 * encodes the same bytes. `work` (YAML passes of the history, gzip calls) is the codec's own count.
 */
import { encodeStateConfigMap, type EncodeResult } from '../src/state/state-configmap-codec.js';
import { emptyInternalState, type InternalState, type SavepointRecord } from '../src/api/internal-state.js';
import { flinkDeployment } from '../src/api/flink-deployment-builder.js';
import { seededRandom } from '../src/devcluster/simulation/simulation-random.js';

function flag(name: string, fallback: string): string {
  const index = process.argv.indexOf(name);
  return index >= 0 ? (process.argv[index + 1] ?? fallback) : fallback;
}
const sizes = flag('--sizes', '800,5000,20000,50000').split(',').map(Number);
const runs = Number(flag('--runs', '3'));

/** Oldest first, as the operator keeps it: one job id per ~50 savepoints, mostly periodic. */
function history(count: number): SavepointRecord[] {
  const next = seededRandom(42);
  const hex = (length: number) => Array.from({ length }, () => Math.floor(next() * 16).toString(16)).join('');
  const word = (length: number) => Array.from({ length }, () => 'abcdefghijklmnopqrstuvwxyz'[Math.floor(next() * 26)]).join('');
  const bucket = `fl-${word(4)}`;
  let jobId = hex(32);
  const records: SavepointRecord[] = [];
  for (let i = 0; i < count; i++) {
    if (next() < 0.02) jobId = hex(32);
    const prefix = Array.from({ length: Math.floor(next() * 6) }, () => word(3 + Math.floor(next() * 14))).join('/');
    const location = `s3://${bucket}/${prefix ? `${prefix}/` : ''}savepoints/orders-enrichment/${jobId}/savepoint-${jobId.slice(0, 6)}-${hex(12)}`;
    const roll = next();
    const timeStamp = 1764400000000 + i * 600_000 + Math.floor(next() * 1000);
    if (roll < 0.9) records.push({ location, timeStamp, triggerType: 'PERIODIC', formatType: 'CANONICAL', jobId });
    else if (roll < 0.97) records.push({ location, timeStamp, triggerType: 'UPGRADE', formatType: 'CANONICAL', jobId });
    else records.push({ location, timeStamp, triggerType: 'MANUAL', formatType: 'NATIVE', triggerNonce: i, jobId });
  }
  return records;
}

const deployment = flinkDeployment('orders-enrichment').inNamespace('team-payments').withUid('1234').withGeneration(3).build();
function state(savepointHistory: SavepointRecord[]): InternalState {
  return {
    ...emptyInternalState(),
    revision: 7,
    phase: 'RUNNING',
    lastReconciledSpec: deployment.spec,
    lastStableSpec: deployment.spec,
    lastReconciledGeneration: 3,
    deployedJobId: 'a'.repeat(32),
    savepointHistory,
  };
}

function outcome(result: EncodeResult): string {
  if (result.trimmedSavepoints > 0) return `trimmed ${result.trimmedSavepoints}`;
  return result.compressedKeys.includes('savepointHistory') ? 'gzip' : 'plain';
}

/** The encode's own work counters (absent before they existed). */
function work(result: EncodeResult): string {
  if (!('work' in result)) return '—';
  const { historySerializations, gzipCalls, gzippedBytes } = result.work;
  return `${historySerializations} YAML / ${gzipCalls} gzip (${(gzippedBytes / 1e6).toFixed(1)} MB)`;
}

encodeStateConfigMap(state(history(800)), { deployment }); // warm-up
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

function row(label: string, input: InternalState): EncodeResult {
  const lengths = input.savepointHistory.map((record) => record.location.length);
  const times: number[] = [];
  let result: EncodeResult | undefined;
  for (let run = 0; run < runs; run++) {
    const started = performance.now();
    result = encodeStateConfigMap(input, { deployment });
    times.push(performance.now() - started);
  }
  if (!result) throw new Error('--runs must be at least 1');
  if (result.totalBytes > 1_000_000) throw new Error(`encoded ${result.totalBytes} bytes, over the limit`);
  const range = `${Math.min(...times).toFixed(0)}–${Math.max(...times).toFixed(0)}`;
  console.log(
    `| ${label} | ${Math.min(...lengths)}–${Math.max(...lengths)} chars | ${outcome(result)} | ${result.totalBytes.toLocaleString('en-US')} | ${median(times).toFixed(0)} (${range}) | ${work(result)} |`,
  );
  return result;
}

console.log(`| savepoint records | locations | outcome | total bytes | ms per encode, median of ${runs} (min–max) | work |`);
console.log('|---|---|---|---|---|---|');
for (const count of sizes) {
  const records = history(count + 1);
  const result = row(count.toLocaleString('en-US'), state(records.slice(0, count)));
  // the steady state at the limit: the trimmed history plus the next savepoint, as the next write sees it
  if (result.trimmedSavepoints > 0) {
    const kept = result.state.savepointHistory;
    row(`${kept.length.toLocaleString('en-US')} + 1 (at the limit)`, state([...kept, records[count]]));
  }
}
