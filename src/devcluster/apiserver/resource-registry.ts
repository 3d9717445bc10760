/**
 * Every resource type served right now: the built-ins plus the served versions of each CRD.
 * Discovery, OpenAPI and routing all read from here, so they change together as CRDs come and go.
 *
 * Guarantees: `revision` changes whenever the set of served types (or a CRD) changes, so caches
 * keyed by it (OpenAPI hashes, read encodings) never serve stale schemas.
 */
import { CrdRegistry, servedVersionsInOrder } from './crd-registry.js';
import { apiResourceList, apiVersionOf, BUILTIN_TYPES, groupResourceKey, type KubeObject, type ResourceType } from './resource-types.js';

export interface ApiGroupInfo {
  name: string;
  versions: string[];
  preferredVersion: string;
}

export class ResourceRegistry {
  readonly crds = new CrdRegistry();
  private index = new Map<string, ResourceType>();
  private groupsCache: ApiGroupInfo[] = [];
  revision = 0;

  constructor() {
    this.rebuild();
  }

  /** Re-registers a committed CRD (create/update) and rebuilds the index. */
  crdChanged(crd: KubeObject): void {
    this.crds.upsert(crd);
    this.rebuild();
  }

  crdRemoved(name: string): void {
    this.crds.remove(name);
    this.rebuild();
  }

  private rebuild(): void {
    this.revision++;
    const index = new Map<string, ResourceType>();
    for (const t of [...BUILTIN_TYPES, ...this.crds.allTypes()]) index.set(`${t.group}/${t.version}/${t.plural}`, t);
    this.index = index;
    const groups = new Map<string, Set<string>>();
    for (const t of index.values()) {
      if (!t.group) continue;
      let s = groups.get(t.group);
      if (!s) groups.set(t.group, (s = new Set()));
      s.add(t.version);
    }
    this.groupsCache = [...groups.entries()].map(([name, vs]) => {
      const versions = servedVersionsInOrder([...vs]);
      return { name, versions, preferredVersion: versions[0] };
    });
  }

  resolve(group: string, version: string, plural: string): ResourceType | undefined {
    return this.index.get(`${group}/${version}/${plural}`);
  }

  /** Any served type of a group resource (for kind/scope lookups by the GC). */
  anyTypeOf(groupResource: string): ResourceType | undefined {
    for (const t of this.index.values()) if (groupResourceKey(t.group, t.plural) === groupResource) return t;
    return undefined;
  }

  /** The served type for an ownerReference's apiVersion + kind. */
  typeForKind(apiVersion: string, kind: string): ResourceType | undefined {
    for (const t of this.index.values()) if (t.kind === kind && apiVersionOf(t) === apiVersion) return t;
    for (const t of this.index.values()) if (t.kind === kind && apiVersion.startsWith(t.group ? `${t.group}/` : 'v')) return t;
    return undefined;
  }

  typesIn(group: string, version: string): ResourceType[] {
    return [...this.index.values()].filter((t) => t.group === group && t.version === version);
  }

  allTypes(): ResourceType[] {
    return [...this.index.values()];
  }

  groups(): ApiGroupInfo[] {
    return this.groupsCache;
  }

  // ---- legacy discovery documents ----

  apiVersionsDoc(serverAddress: string): object {
    return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }] };
  }

  apiGroupDoc(g: ApiGroupInfo): object {
    return {
      kind: 'APIGroup',
      apiVersion: 'v1',
      name: g.name,
      versions: g.versions.map((v) => ({ groupVersion: `${g.name}/${v}`, version: v })),
      preferredVersion: { groupVersion: `${g.name}/${g.preferredVersion}`, version: g.preferredVersion },
    };
  }

  apiGroupListDoc(): object {
    return { kind: 'APIGroupList', apiVersion: 'v1', groups: this.groups().map((g) => this.apiGroupDoc(g)) };
  }

  apiResourceListDoc(group: string, version: string): object | undefined {
    const types = this.typesIn(group, version);
    if (types.length === 0) return undefined;
    return apiResourceList(group ? `${group}/${version}` : version, types);
  }
}
