/**
 * Aggregated discovery (apidiscovery.k8s.io/v2): one `GET /api` or `GET /apis` that lists every
 * group version with its resources, which kubectl ≥1.26 asks for before falling back to the legacy
 * per-group-version documents.
 *
 * Guarantees: it is served only when the Accept header names exactly
 * `application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList`, and the response carries
 * exactly that Content-Type (kube-api.md §4.1: kubectl 1.28 offers only v2beta1 and fails when
 * answered with v2, so any other Accept gets the legacy documents). It is built from the same
 * registry as legacy discovery, so both always agree.
 */
import type { ResourceRegistry } from './resource-registry.js';
import { ALL_VERBS, type ResourceType } from './resource-types.js';

export const AGGREGATED_DISCOVERY_V2 = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';

/** True when one of the Accept alternatives is exactly aggregated discovery v2. */
export function acceptsAggregatedV2(accept: string | undefined): boolean {
  if (!accept) return false;
  return accept.split(',').some((alt) => {
    const params = alt.split(';').map((p) => p.trim());
    return (
      params[0] === 'application/json' && params.includes('g=apidiscovery.k8s.io') && params.includes('v=v2') && params.includes('as=APIGroupDiscoveryList')
    );
  });
}

function resourceEntry(t: ResourceType): object {
  const r: Record<string, unknown> = {
    resource: t.plural,
    responseKind: { group: t.group, version: t.version, kind: t.kind },
    scope: t.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: t.singular,
    verbs: t.verbs ?? ALL_VERBS,
  };
  if (t.shortNames.length) r.shortNames = t.shortNames;
  if (t.categories.length) r.categories = t.categories;
  const subresources: object[] = [];
  if (t.statusSubresource)
    subresources.push({ subresource: 'status', responseKind: { group: t.group, version: t.version, kind: t.kind }, verbs: ['get', 'patch', 'update'] });
  if (t.scale)
    subresources.push({ subresource: 'scale', responseKind: { group: 'autoscaling', version: 'v1', kind: 'Scale' }, verbs: ['get', 'patch', 'update'] });
  if (t.tokenRequest)
    subresources.push({ subresource: 'token', responseKind: { group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest' }, verbs: ['create'] });
  if (t.proxy)
    subresources.push({
      subresource: 'proxy',
      responseKind: { group: '', version: 'v1', kind: 'ServiceProxyOptions' },
      verbs: ['create', 'delete', 'get', 'patch', 'update'],
    });
  if (subresources.length) r.subresources = subresources;
  return r;
}

function versionEntry(registry: ResourceRegistry, group: string, version: string): object {
  return { version, resources: registry.typesIn(group, version).map(resourceEntry), freshness: 'Current' };
}

/** The APIGroupDiscoveryList for `/api` (core) or `/apis` (every named group). */
export function aggregatedDiscovery(registry: ResourceRegistry, core: boolean): object {
  const items = core
    ? [{ metadata: { creationTimestamp: null }, versions: [versionEntry(registry, '', 'v1')] }]
    : registry
        .groups()
        .map((g) => ({ metadata: { name: g.name, creationTimestamp: null }, versions: g.versions.map((v) => versionEntry(registry, g.name, v)) }));
  return { kind: 'APIGroupDiscoveryList', apiVersion: 'apidiscovery.k8s.io/v2', metadata: {}, items };
}
