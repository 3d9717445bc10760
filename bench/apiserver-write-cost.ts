/**
 * `npx tsx bench/apiserver-write-cost.ts`: what one write costs inside the dev cluster's API
 * server, without HTTP: a status update (PUT /status) and a JSON merge patch of a 2 KB Deployment,
 * with 2,000 Deployments stored. The figure behind finding 8 of design/performance.md
 * (structuredClone → cloneJson). The loop's own copy of the body (one structuredClone per update,
 * what a parsed request body would be) is included in the update figure.
 */
import { ApiOperations, scopeFor } from '../src/devcluster/apiserver/api-operations.js';
import { ObjectStore } from '../src/devcluster/apiserver/object-store.js';
import { ResourceRegistry } from '../src/devcluster/apiserver/resource-registry.js';

const store = new ObjectStore(10_000);
const registry = new ResourceRegistry();
const ops = new ApiOperations(store, registry);
ops.create(scopeFor(registry.resolve('', 'v1', 'namespaces')!, ''), { metadata: { name: 'default' } }, {});
const deployments = registry.resolve('apps', 'v1', 'deployments')!;
const scope = scopeFor(deployments, 'default');
const N = 2_000;
const ROUNDS = 20_000;

const deployment = (i: number) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: `d${i}`, labels: { app: `d${i}`, type: 'flink-standalone-kubernetes', component: 'jobmanager' }, annotations: { note: 'x'.repeat(200) } },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: `d${i}` } },
    template: {
      metadata: { labels: { app: `d${i}` } },
      spec: {
        containers: [
          {
            name: 'flink-main-container',
            image: 'flink:1.20',
            args: ['jobmanager'],
            env: Array.from({ length: 10 }, (_, k) => ({ name: `E${k}`, value: 'v'.repeat(30) })),
            ports: [
              { containerPort: 8081, name: 'rest' },
              { containerPort: 6123, name: 'rpc' },
            ],
          },
        ],
      },
    },
  },
});

for (let i = 0; i < N; i++) ops.create(scope, deployment(i), {});

function measure(name: string, op: (k: number) => void): void {
  for (let k = 0; k < 2_000; k++) op(k); // warm-up
  const started = performance.now();
  for (let k = 0; k < ROUNDS; k++) op(k);
  console.log(`${name}: ${(((performance.now() - started) * 1000) / ROUNDS).toFixed(1)} µs`);
}

measure('status update (PUT /status)', (k) => {
  const name = `d${k % N}`;
  const body = structuredClone(ops.getStored(scope, name));
  const now = new Date().toISOString();
  body.status = {
    observedGeneration: 1,
    replicas: 1,
    readyReplicas: k % 2,
    conditions: [{ type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable', lastUpdateTime: now, lastTransitionTime: now }],
  };
  ops.update(scope, name, body, {}, 'status');
});
measure('merge patch of an annotation', (k) => {
  ops.patch(scope, `d${k % N}`, 'merge', JSON.stringify({ metadata: { annotations: { revision: String(k) } } }), {}, '');
});
