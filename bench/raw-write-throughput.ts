/**
 * The development cluster's raw write throughput (issue 10, part 3), measured against the same
 * cluster process the operator runs against, before any FlinkDeployment exists: the writes an
 * operator transition makes, without an operator.
 *
 * One phase (`phase` of devcluster-throughput.ts), `concurrency` writers, alternating
 * - a ConfigMap PUT locked on the resourceVersion (each writer owns one ConfigMap and keeps the
 *   resourceVersion of its last answer: no GET in between), and
 * - a JSON merge patch of a custom object's /status (a CRD of its own, so the operator ignores it).
 * The figure is completed writes per second.
 */
import { ApiextensionsV1Api, CoreV1Api, CustomObjectsApi, type KubeConfig, PatchStrategy, setHeaderOptions, type V1ConfigMap } from '@kubernetes/client-node';
import { phase } from './devcluster-throughput.js';

const NAMESPACE = 'raw-writes';

export interface RawWriteThroughput {
  writesPerSecond: number;
  count: number;
  durationMs: number;
  concurrency: number;
}

export async function measureRawWriteThroughput(kc: KubeConfig, options: { durationMs: number; concurrency: number }): Promise<RawWriteThroughput> {
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  await core.createNamespace({ body: { metadata: { name: NAMESPACE } } });
  await kc.makeApiClient(ApiextensionsV1Api).createCustomResourceDefinition({
    body: {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'rawwrites.bench.example.com' },
      spec: {
        group: 'bench.example.com',
        scope: 'Namespaced',
        names: { plural: 'rawwrites', singular: 'rawwrite', kind: 'RawWrite' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            subresources: { status: {} },
            schema: { openAPIV3Schema: { type: 'object', x_kubernetes_preserve_unknown_fields: true } },
          },
        ],
      },
    },
  });
  const configMaps: V1ConfigMap[] = [];
  for (let w = 0; w < options.concurrency; w++) {
    configMaps.push(await core.createNamespacedConfigMap({ namespace: NAMESPACE, body: { metadata: { name: `raw-${w}` }, data: { n: '0' } } }));
  }
  // the CRD's REST endpoint is served once it is Established; retry the first create briefly
  for (let attempt = 0; ; attempt++) {
    try {
      await custom.createNamespacedCustomObject({
        group: 'bench.example.com',
        version: 'v1',
        plural: 'rawwrites',
        namespace: NAMESPACE,
        body: { apiVersion: 'bench.example.com/v1', kind: 'RawWrite', metadata: { name: 'raw-0' } },
      });
      break;
    } catch (error) {
      if (attempt > 50) throw error;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  for (let w = 1; w < options.concurrency; w++) {
    await custom.createNamespacedCustomObject({
      group: 'bench.example.com',
      version: 'v1',
      plural: 'rawwrites',
      namespace: NAMESPACE,
      body: { apiVersion: 'bench.example.com/v1', kind: 'RawWrite', metadata: { name: `raw-${w}` } },
    });
  }

  // each write takes an idle ConfigMap/object from the pool: never two writes on one object at once
  const idle = Array.from({ length: options.concurrency }, (_, w) => w);
  const started = Date.now();
  const result = await phase(
    'raw writes',
    async (i) => {
      const w = idle.pop()!;
      try {
        if (i % 2 === 0) {
          const cm = configMaps[w];
          cm.data = { n: String(i) };
          configMaps[w] = await core.replaceNamespacedConfigMap({ namespace: NAMESPACE, name: cm.metadata!.name!, body: cm });
        } else {
          await custom.patchNamespacedCustomObjectStatus(
            { group: 'bench.example.com', version: 'v1', plural: 'rawwrites', namespace: NAMESPACE, name: `raw-${w}`, body: { status: { n: i } } },
            setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
          );
        }
      } finally {
        idle.push(w);
      }
    },
    { durationMs: options.durationMs, concurrency: options.concurrency },
  );
  return { writesPerSecond: result.perSecond, count: result.count, durationMs: Date.now() - started, concurrency: options.concurrency };
}
