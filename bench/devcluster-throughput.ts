/**
 * `npm run bench:devcluster`: how many writes/s and reads/s the dev cluster sustains over loopback
 * through @kubernetes/client-node. The server runs in a child process (as `flink-operator
 * dev-cluster` would), so client and server do not share an event loop.
 *
 * Phases (each for DURATION_MS, CONCURRENCY requests in flight): ConfigMap creates, ConfigMap
 * updates (PUT with resourceVersion), custom-object status merge patches, named GETs, and lists of
 * one namespace with 1,000 objects in another namespace (index check). Results go to stdout.
 */
import { fork } from 'node:child_process';
import { mkdtempSync, readFileSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, CustomObjectsApi, KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';

const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 3000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);

async function serve(kubeconfigPath: string): Promise<void> {
  const { startDevCluster } = await import('../src/devcluster/dev-cluster.js');
  const cluster = await startDevCluster({ kubeconfigPath });
  process.on('message', (m) => {
    if (m === 'stop') void cluster.stop().then(() => process.exit(0));
  });
}

/** Runs `op(0)`, `op(1)`, ... with `concurrency` in flight for `durationMs`; the completed requests per second. */
export async function phase(
  name: string,
  op: (i: number) => Promise<unknown>,
  { durationMs = DURATION_MS, concurrency = CONCURRENCY }: { durationMs?: number; concurrency?: number } = {},
): Promise<{ name: string; perSecond: number; count: number }> {
  let i = 0;
  let count = 0;
  const end = Date.now() + durationMs;
  const started = Date.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < end) {
        await op(i++);
        count++;
      }
    }),
  );
  const perSecond = Math.round((count * 1000) / (Date.now() - started));
  return { name, perSecond, count };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'devcluster-bench-'));
  const kubeconfigPath = join(dir, 'kubeconfig');
  const child = fork(fileURLToPath(import.meta.url), ['--serve', kubeconfigPath], { execArgv: ['--import', 'tsx'], stdio: 'inherit' });
  while (!existsSync(kubeconfigPath)) await new Promise((r) => setTimeout(r, 50));
  const kc = new KubeConfig();
  kc.loadFromString(readFileSync(kubeconfigPath, 'utf8'));
  const core = kc.makeApiClient(CoreV1Api);
  const co = kc.makeApiClient(CustomObjectsApi);
  const ns = 'default';
  await core.createNamespace({ body: { metadata: { name: 'noise' } } });
  for (let i = 0; i < 1000; i++) await core.createNamespacedConfigMap({ namespace: 'noise', body: { metadata: { name: `n-${i}` }, data: { k: 'v' } } });
  await fetch(`${kc.getCurrentCluster()!.server}/apis/apiextensions.k8s.io/v1/customresourcedefinitions`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'benches.example.com' },
      spec: {
        group: 'example.com',
        scope: 'Namespaced',
        names: { plural: 'benches', singular: 'bench', kind: 'Bench' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            subresources: { status: {} },
            schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          },
        ],
      },
    }),
  });
  for (let i = 0; i < 100; i++)
    await co.createNamespacedCustomObject({
      group: 'example.com',
      version: 'v1',
      plural: 'benches',
      namespace: ns,
      body: { apiVersion: 'example.com/v1', kind: 'Bench', metadata: { name: `b-${i}` }, spec: { i } },
    });

  const results = [];
  results.push(
    await phase('write: create ConfigMap', (i) =>
      core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: `c-${i}`, labels: { bench: 'x' } }, data: { k: String(i) } } }),
    ),
  );
  const created = results[0].count;
  results.push(
    await phase('write: update ConfigMap (PUT with RV)', async (i) => {
      const name = `c-${i % created}`;
      const cm = await core.readNamespacedConfigMap({ namespace: ns, name });
      try {
        await core.replaceNamespacedConfigMap({ namespace: ns, name, body: { ...cm, data: { k: `u${i}` } } });
      } catch (e) {
        if ((e as { code?: number }).code !== 409) throw e;
      }
    }),
  );
  results.push(
    await phase('write: merge-patch CR status', (i) =>
      co.patchNamespacedCustomObjectStatus(
        { group: 'example.com', version: 'v1', plural: 'benches', namespace: ns, name: `b-${i % 100}`, body: { status: { n: i } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
    ),
  );
  results.push(await phase('read: get ConfigMap', (i) => core.readNamespacedConfigMap({ namespace: ns, name: `c-${i % created}` })));
  results.push(
    await phase('read: get CR (schema-coerced)', (i) =>
      co.getNamespacedCustomObject({ group: 'example.com', version: 'v1', plural: 'benches', namespace: ns, name: `b-${i % 100}` }),
    ),
  );
  results.push(
    await phase('read: list 100 CRs', () => co.listNamespacedCustomObject({ group: 'example.com', version: 'v1', plural: 'benches', namespace: ns })),
  );

  console.log(`dev cluster throughput over loopback via client-node (concurrency ${CONCURRENCY}, ${DURATION_MS} ms per phase, node ${process.version})`);
  for (const r of results) console.log(`  ${r.name.padEnd(42)} ${String(r.perSecond).padStart(7)} /s   (${r.count} requests)`);
  child.send('stop');
  await new Promise((r) => child.on('exit', r));
  rmSync(dir, { recursive: true, force: true });
}

const isEntryPoint = process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1];
if (process.argv[2] === '--serve') void serve(process.argv[3]);
else if (isEntryPoint)
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
