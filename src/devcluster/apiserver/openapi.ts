/**
 * Minimal OpenAPI documents, just enough for `kubectl apply` with validation on
 * (see /work/shared/reference/kube-api.md §4.3, verified against kubectl 1.20 and 1.32):
 * - /openapi/v2: the 29-byte gnostic protobuf Document {swagger:"2.0", info{Kubernetes,v1.32.0}};
 *   kubectl skips client-side validation of kinds absent from it.
 * - /openapi/v3: a root listing every served group version, and per group version one PATCH
 *   operation per resource carrying x-kubernetes-group-version-kind and the fieldValidation
 *   parameter, so kubectl sends fieldValidation=Strict and lets the server reject unknown fields.
 * Guarantees: the `hash` in each serverRelativeURL changes when the served types change, so
 * kubectl's HTTP cache never serves a stale document.
 * Caveats: no schemas (components.schemas is empty); `kubectl explain` does not work.
 */
import { createHash } from 'node:crypto';
import type { ResourceRegistry } from './resource-registry.js';
import type { ResourceType } from './resource-types.js';

export const OPENAPI_V2_CONTENT_TYPE = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';
export const OPENAPI_V2_BODY = Buffer.from('0a03322e3012150a0a4b756265726e65746573120776312e33322e304200', 'hex');

function gvPath(group: string, version: string): string {
  return group ? `apis/${group}/${version}` : `api/${version}`;
}

function gvDocument(types: ResourceType[]): object {
  const paths: Record<string, object> = {};
  for (const t of types) {
    const base = `/${gvPath(t.group, t.version)}`;
    const item = t.namespaced ? `${base}/namespaces/{namespace}/${t.plural}/{name}` : `${base}/${t.plural}/{name}`;
    const op = {
      'x-kubernetes-group-version-kind': { group: t.group, version: t.version, kind: t.kind },
      'x-kubernetes-action': 'patch',
      parameters: [
        { name: 'fieldValidation', in: 'query', schema: { type: 'string', uniqueItems: true } },
        { name: 'fieldManager', in: 'query', schema: { type: 'string', uniqueItems: true } },
        { name: 'dryRun', in: 'query', schema: { type: 'string', uniqueItems: true } },
      ],
      responses: { '200': { description: 'OK' } },
    };
    paths[item] = { patch: op };
    const coll = t.namespaced ? `${base}/namespaces/{namespace}/${t.plural}` : `${base}/${t.plural}`;
    paths[coll] = {
      post: { ...op, 'x-kubernetes-action': 'post' },
    };
  }
  return { openapi: '3.0.0', info: { title: 'Kubernetes', version: 'v1.32.0' }, paths, components: { schemas: {} } };
}

export class OpenApiDocuments {
  private cacheRevision = -1;
  private docs = new Map<string, { body: string; hash: string }>();

  constructor(private readonly registry: ResourceRegistry) {}

  private refresh(): void {
    if (this.cacheRevision === this.registry.revision) return;
    const byGv = new Map<string, ResourceType[]>();
    for (const t of this.registry.allTypes()) {
      const key = gvPath(t.group, t.version);
      let list = byGv.get(key);
      if (!list) byGv.set(key, (list = []));
      list.push(t);
    }
    const docs = new Map<string, { body: string; hash: string }>();
    for (const [key, types] of byGv) {
      const body = JSON.stringify(gvDocument(types));
      const hash = createHash('sha512').update(body).digest('hex').slice(0, 64).toUpperCase();
      docs.set(key, { body, hash });
    }
    this.docs = docs;
    this.cacheRevision = this.registry.revision;
  }

  root(): string {
    this.refresh();
    const paths: Record<string, object> = {};
    for (const [key, d] of this.docs) paths[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${d.hash}` };
    return JSON.stringify({ paths });
  }

  /** The document for `api/v1` or `apis/G/V`, or undefined. */
  groupVersion(key: string): string | undefined {
    this.refresh();
    return this.docs.get(key)?.body;
  }
}

