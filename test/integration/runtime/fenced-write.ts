import type { CoreV1Api, V1ConfigMap } from '@kubernetes/client-node';
import { LEADER_ANNOTATION, assertNotStale, formatFencingToken, storedFencingToken, type FencingToken } from '../../../src/runtime/fencing-token.js';

/**
 * A minimal fenced state write (test helper; the real one is the state store's): read the
 * ConfigMap, refuse if its `flink-operator.io/leader` token is from a newer term than ours
 * (StaleLeaderError), then PUT it locked on the resourceVersion read, stamped with our token.
 * A 409 (someone wrote in between) re-reads and re-checks, up to 3 times.
 */
export async function fencedStateWrite(
  core: CoreV1Api,
  namespace: string,
  name: string,
  token: FencingToken,
  data: Record<string, string>,
  labels: Record<string, string> = {},
): Promise<V1ConfigMap> {
  for (let attempt = 0; ; attempt++) {
    let current: V1ConfigMap | undefined;
    try {
      current = await core.readNamespacedConfigMap({ namespace, name });
    } catch (error) {
      if ((error as { code?: number }).code !== 404) throw error;
    }
    assertNotStale(storedFencingToken(current?.metadata), token);
    const annotations = { ...(current?.metadata?.annotations ?? {}), [LEADER_ANNOTATION]: formatFencingToken(token) };
    try {
      if (!current) return await core.createNamespacedConfigMap({ namespace, body: { metadata: { name, namespace, labels, annotations }, data } });
      return await core.replaceNamespacedConfigMap({ namespace, name, body: { ...current, metadata: { ...current.metadata, annotations }, data } });
    } catch (error) {
      if ((error as { code?: number }).code !== 409 || attempt >= 2) throw error;
    }
  }
}
