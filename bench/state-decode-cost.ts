/**
 * `npx tsx bench/state-decode-cost.ts`: what one load of a typical state ConfigMap costs when it is
 * decoded (YAML + schema validation) versus copied from ConfigMapStateStore's decoded-state cache
 * (structuredClone). The figure behind the cache (design/performance.md).
 */
import { encodeStateConfigMap, decodeStateConfigMap } from '../src/state/state-configmap-codec.js';
import { emptyInternalState } from '../src/api/internal-state.js';
import { flinkDeployment } from '../src/api/flink-deployment-builder.js';
const d = flinkDeployment('x').build();
d.metadata.uid = '1234';
const state = {
  ...emptyInternalState(),
  revision: 7,
  phase: 'RUNNING' as const,
  lastReconciledSpec: d.spec,
  lastStableSpec: d.spec,
  lastReconciledGeneration: 3,
  deployedJobId: 'a'.repeat(32),
  savepointHistory: Array.from({ length: 5 }, (_, i) => ({
    location: `file:///flink-data/savepoints/savepoint-${i}-abcdef`,
    timeStamp: 1700000000000 + i,
    triggerType: 'UPGRADE',
    jobId: 'b'.repeat(32),
  })),
} as any;
const { configMap } = encodeStateConfigMap(state, { deployment: d, existing: undefined });
configMap.metadata!.resourceVersion = '5';
const N = 3000;
for (let i = 0; i < 300; i++) decodeStateConfigMap(configMap);
let t = performance.now();
for (let i = 0; i < N; i++) decodeStateConfigMap(configMap);
const dec = (performance.now() - t) / N;
const decoded = decodeStateConfigMap(configMap);
t = performance.now();
for (let i = 0; i < N; i++) structuredClone(decoded);
const clone = (performance.now() - t) / N;
console.log(`decode ${(dec * 1000).toFixed(0)} µs, structuredClone ${(clone * 1000).toFixed(0)} µs, data bytes ${JSON.stringify(configMap.data).length}`);
