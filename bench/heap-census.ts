/**
 * A heap census of a V8 .heapsnapshot (written by the operator process's `heapSnapshot` request):
 * self size and count aggregated by group, and the difference between two snapshots.
 *
 *   npx tsx bench/heap-census.ts A.heapsnapshot                 # the census of one snapshot
 *   npx tsx bench/heap-census.ts A.heapsnapshot B.heapsnapshot --per 800 [--top 40]
 *                                                               # B − A per group (÷ 800 per deployment)
 *   npx tsx bench/heap-census.ts A.heapsnapshot --paths object:Timeout
 *                                                               # sample retainer chains of one kind of node
 *
 * A or B may also be the `.census.json` this tool writes next to each snapshot it reads (reading a
 * snapshot of a few hundred MB takes a while; the summary is reused). Large snapshots need
 * `NODE_OPTIONS=--max-old-space-size=6000`.
 *
 * Groups:
 * - a class instance is `object:<constructor>`; its most common holder (the owner's name and the
 *   edge that holds it, e.g. `ConfigMapStateStore.decoded[]`) is reported next to it;
 * - plain containers (Object, Array, Map, Set, …), strings, numbers, closures and contexts are
 *   grouped by that holder: `Map @ ConfigMapStateStore.decoded`, `string @ ShardOwnership.firstSeen[]`;
 *   a holder that is itself a plain container is named by its own holder (up to 8 levels), so a
 *   Map's entries are named after the field that holds the Map;
 * - a container's internal storage (property/element backing arrays, a Map's hash table) is
 *   folded into the container's group, so `Map @ X` counts what the Map really occupies; the parts
 *   of a concatenated (rope) or sliced string are folded into that string;
 * - everything reachable from the informer caches (client-node ListWatch `objects`/`indexCache`)
 *   through data only (plain objects, arrays, strings, numbers, their storage) is tagged
 *   `[informer]`: those are "the informer objects" the scale bench subtracts.
 *
 * Caveats: the holder is the first strong retainer, not the dominator: a string shared by two
 * owners is counted under one. Digits in edge names are replaced by `#` (dictionary keys such as
 * deployment names would otherwise make one group each).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

interface RawSnapshot {
  snapshot: {
    meta: {
      node_fields: string[];
      node_types: [string[], ...unknown[]];
      edge_fields: string[];
      edge_types: [string[], ...unknown[]];
    };
    node_count: number;
  };
  nodes: number[];
  edges: number[];
  strings: string[];
}

export interface CensusGroup {
  count: number;
  bytes: number;
  /** for class instances: holder label → count */
  holders?: Record<string, number>;
}

export interface Census {
  totalBytes: number;
  informerBytes: number;
  groups: Record<string, CensusGroup>;
}

const PLAIN_CONTAINERS = new Set(['Object', 'Array', 'Map', 'Set', 'WeakMap', 'WeakSet', '(object properties)', '(object elements)']);
const MAX_HOLDER_DEPTH = 8;

class HeapGraph {
  readonly nodeCount: number;
  private readonly nodeFieldCount: number;
  private readonly edgeFieldCount: number;
  private readonly typeOffset: number;
  private readonly nameOffset: number;
  private readonly sizeOffset: number;
  private readonly edgeCountOffset: number;
  private readonly edgeTypeOffset: number;
  private readonly edgeNameOffset: number;
  private readonly edgeToOffset: number;
  readonly nodeTypes: string[];
  readonly edgeTypes: string[];
  /** first edge index (in edges, /edgeFieldCount) of each node; length nodeCount + 1 */
  readonly firstEdge: Uint32Array;
  /** retainers in CSR form: retainerStart[n]..retainerStart[n+1] index retainerNode / retainerEdge */
  readonly retainerStart: Uint32Array;
  readonly retainerNode: Uint32Array;
  readonly retainerEdge: Uint32Array;

  constructor(private readonly raw: RawSnapshot) {
    const meta = raw.snapshot.meta;
    this.nodeFieldCount = meta.node_fields.length;
    this.edgeFieldCount = meta.edge_fields.length;
    this.typeOffset = meta.node_fields.indexOf('type');
    this.nameOffset = meta.node_fields.indexOf('name');
    this.sizeOffset = meta.node_fields.indexOf('self_size');
    this.edgeCountOffset = meta.node_fields.indexOf('edge_count');
    this.edgeTypeOffset = meta.edge_fields.indexOf('type');
    this.edgeNameOffset = meta.edge_fields.indexOf('name_or_index');
    this.edgeToOffset = meta.edge_fields.indexOf('to_node');
    this.nodeTypes = meta.node_types[0];
    this.edgeTypes = meta.edge_types[0];
    this.nodeCount = raw.nodes.length / this.nodeFieldCount;
    const edgeCount = raw.edges.length / this.edgeFieldCount;
    this.firstEdge = new Uint32Array(this.nodeCount + 1);
    let e = 0;
    for (let n = 0; n < this.nodeCount; n++) {
      this.firstEdge[n] = e;
      e += raw.nodes[n * this.nodeFieldCount + this.edgeCountOffset];
    }
    this.firstEdge[this.nodeCount] = e;
    const counts = new Uint32Array(this.nodeCount + 1);
    for (let i = 0; i < edgeCount; i++) counts[this.edgeTo(i)]++;
    this.retainerStart = new Uint32Array(this.nodeCount + 1);
    for (let n = 0; n < this.nodeCount; n++) this.retainerStart[n + 1] = this.retainerStart[n] + counts[n];
    this.retainerNode = new Uint32Array(edgeCount);
    this.retainerEdge = new Uint32Array(edgeCount);
    const fill = this.retainerStart.slice(0, this.nodeCount);
    for (let n = 0; n < this.nodeCount; n++) {
      for (let i = this.firstEdge[n]; i < this.firstEdge[n + 1]; i++) {
        const to = this.edgeTo(i);
        const at = fill[to]++;
        this.retainerNode[at] = n;
        this.retainerEdge[at] = i;
      }
    }
  }

  type(n: number): string {
    return this.nodeTypes[this.raw.nodes[n * this.nodeFieldCount + this.typeOffset]];
  }

  name(n: number): string {
    return this.raw.strings[this.raw.nodes[n * this.nodeFieldCount + this.nameOffset]];
  }

  size(n: number): number {
    return this.raw.nodes[n * this.nodeFieldCount + this.sizeOffset];
  }

  edgeType(e: number): string {
    return this.edgeTypes[this.raw.edges[e * this.edgeFieldCount + this.edgeTypeOffset]];
  }

  edgeName(e: number): string {
    const t = this.edgeType(e);
    const v = this.raw.edges[e * this.edgeFieldCount + this.edgeNameOffset];
    return t === 'element' || t === 'hidden' ? '[]' : String(this.raw.strings[v]);
  }

  edgeTo(e: number): number {
    return this.raw.edges[e * this.edgeFieldCount + this.edgeToOffset] / this.nodeFieldCount;
  }
}

const isStorage = (g: HeapGraph, n: number): boolean => {
  const t = g.type(n);
  if (t === 'array' || t === 'object shape') return true;
  if (t !== 'hidden') return false;
  const name = g.name(n);
  return name !== 'system / Context' && !name.startsWith('system / NativeContext');
};

const isString = (g: HeapGraph, n: number): boolean => {
  const t = g.type(n);
  return t === 'string' || t === 'concatenated string' || t === 'sliced string';
};

const isData = (g: HeapGraph, n: number): boolean => {
  const t = g.type(n);
  if (t === 'string' || t === 'concatenated string' || t === 'sliced string' || t === 'number' || t === 'heap number' || t === 'bigint') return true;
  if (t === 'object') return g.name(n) === 'Object' || g.name(n) === 'Array';
  return isStorage(g, n);
};

/** Nodes reachable from client-node ListWatch caches through data edges only. */
function informerNodes(g: HeapGraph): Uint8Array {
  const marked = new Uint8Array(g.nodeCount);
  const stack: number[] = [];
  for (let n = 0; n < g.nodeCount; n++) {
    if (g.type(n) !== 'object' || g.name(n) !== 'ListWatch') continue;
    for (let e = g.firstEdge[n]; e < g.firstEdge[n + 1]; e++) {
      const edge = g.edgeName(e);
      if (edge === 'objects' || edge === 'indexCache') stack.push(g.edgeTo(e));
    }
  }
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (marked[n]) continue;
    marked[n] = 1;
    for (let e = g.firstEdge[n]; e < g.firstEdge[n + 1]; e++) {
      if (g.edgeType(e) === 'weak') continue;
      const to = g.edgeTo(e);
      const name = g.name(to);
      if (!marked[to] && (isData(g, to) || (g.type(to) === 'object' && name === 'Map'))) stack.push(to);
    }
  }
  return marked;
}

/** The first strong retainer of n that is not a synthetic root: [owner, edge], or undefined. */
function holderOf(g: HeapGraph, n: number): [number, number] | undefined {
  let fallback: [number, number] | undefined;
  for (let r = g.retainerStart[n]; r < g.retainerStart[n + 1]; r++) {
    const e = g.retainerEdge[r];
    const t = g.edgeType(e);
    if (t === 'weak' || t === 'shortcut') continue;
    const owner = g.retainerNode[r];
    if (g.type(owner) === 'synthetic') {
      fallback ??= [owner, e];
      continue;
    }
    return [owner, e];
  }
  return fallback;
}

export function takeCensus(raw: RawSnapshot): Census {
  const g = new HeapGraph(raw);
  const informer = informerNodes(g);
  const labelMemo = new Map<number, string>();

  /** What a node is held by, named by the nearest owner that is not a plain container. */
  const holderLabel = (n: number, depth: number): string => {
    const memo = labelMemo.get(n);
    if (memo !== undefined) return memo;
    const holder = holderOf(g, n);
    let label: string;
    if (!holder) label = '(unreachable)';
    else {
      const [owner, edge] = holder;
      const edgeName = g.edgeName(edge).replace(/\d+/g, '#').replace(/^#$/, '[]');
      const edgePart = isStorage(g, n) ? '' : edgeName === '[]' ? '[]' : `.${edgeName}`;
      const ownerName = g.name(owner);
      const ownerType = g.type(owner);
      const plain = (ownerType === 'object' && PLAIN_CONTAINERS.has(ownerName)) || isStorage(g, owner) || isString(g, owner);
      if (plain && depth < MAX_HOLDER_DEPTH) label = `${holderLabel(owner, depth + 1)}${isString(g, owner) ? '' : edgePart}`;
      else if (ownerType === 'closure') label = `closure ${ownerName || '(anonymous)'}${edgePart}`;
      else if (ownerType === 'synthetic') label = ownerName;
      else label = `${ownerName}${edgePart}`;
    }
    labelMemo.set(n, label);
    return label;
  };

  const groups: Record<string, CensusGroup> = {};
  let totalBytes = 0;
  let informerBytes = 0;
  for (let n = 0; n < g.nodeCount; n++) {
    const size = g.size(n);
    totalBytes += size;
    if (informer[n]) informerBytes += size;
    let node = n;
    // fold internal storage into the container it belongs to
    // and the parts of a concatenated or sliced string into that string
    for (let hops = 0; hops < 8; hops++) {
      const holder = holderOf(g, node);
      if (!holder || g.type(holder[0]) === 'synthetic') break;
      const [owner] = holder;
      const ropePart = isString(g, node) && (g.type(owner) === 'concatenated string' || g.type(owner) === 'sliced string');
      if (!ropePart && !isStorage(g, node)) break;
      node = owner;
    }
    const type = g.type(node);
    const name = g.name(node);
    let key: string;
    let holderForClass: string | undefined;
    if (type === 'object' && !PLAIN_CONTAINERS.has(name)) {
      key = `object:${name}`;
      holderForClass = holderLabel(node, 0);
    } else if (type === 'object') key = `${name} @ ${holderLabel(node, 0)}`;
    else if (type === 'closure') key = `closure ${name || '(anonymous)'} @ ${holderLabel(node, 0)}`;
    else if (type === 'code' || type === 'synthetic' || type === 'native' || type === 'symbol') key = `${type}:${name.slice(0, 60)}`;
    else if (type === 'hidden' && name === 'system / Context') key = `context @ ${holderLabel(node, 0)}`;
    else if (type === 'string' || type === 'concatenated string' || type === 'sliced string') key = `string @ ${holderLabel(node, 0)}`;
    else if (type === 'number' || type === 'heap number' || type === 'bigint') key = `number @ ${holderLabel(node, 0)}`;
    else key = `${type}:${name.slice(0, 60)}`;
    if (informer[n]) key = `[informer] ${key}`;
    const group = (groups[key] ??= { count: 0, bytes: 0 });
    if (node === n) group.count++;
    group.bytes += size;
    if (holderForClass !== undefined && node === n) {
      group.holders ??= {};
      group.holders[holderForClass] = (group.holders[holderForClass] ?? 0) + 1;
    }
  }
  return { totalBytes, informerBytes, groups };
}

/**
 * Retainer chains (first strong retainer, up to 10 hops) of a few nodes of `type:name`, e.g.
 * `object:Generator`: where a group's instances hang.
 */
export function retainerPaths(raw: RawSnapshot, typeAndName: string, samples: number): string[] {
  const g = new HeapGraph(raw);
  const [type, ...rest] = typeAndName.split(':');
  const name = rest.join(':');
  const matches: number[] = [];
  for (let n = 0; n < g.nodeCount; n++) if (g.type(n) === type && g.name(n) === name) matches.push(n);
  const out: string[] = [`${matches.length} nodes of ${typeAndName}`];
  const step = Math.max(1, Math.floor(matches.length / samples));
  for (let i = 0; i < matches.length && out.length <= samples; i += step) {
    const chain: string[] = [];
    let node = matches[i];
    for (let hops = 0; hops < 10; hops++) {
      const holder = holderOf(g, node);
      if (!holder) break;
      chain.push(`${g.type(holder[0])}:${g.name(holder[0]).slice(0, 40)} -${g.edgeName(holder[1])}->`);
      node = holder[0];
      if (g.type(node) === 'synthetic') break;
    }
    out.push(chain.reverse().join(' '));
  }
  return out;
}

function loadCensus(path: string): Census {
  if (path.endsWith('.census.json')) return JSON.parse(readFileSync(path, 'utf8')) as Census;
  const cached = `${path}.census.json`;
  if (existsSync(cached)) return JSON.parse(readFileSync(cached, 'utf8')) as Census;
  const census = takeCensus(JSON.parse(readFileSync(path, 'utf8')) as RawSnapshot);
  writeFileSync(cached, JSON.stringify(census));
  return census;
}

function topHolders(holders: Record<string, number> | undefined, baseline: Record<string, number> | undefined): string {
  if (!holders) return '';
  return Object.entries(holders)
    .map(([label, n]) => [label, n - (baseline?.[label] ?? 0)] as const)
    .filter(([, n]) => n !== 0)
    .sort((a, b) => Math.abs(b[1]) - Math.abs(a[1]))
    .slice(0, 3)
    .map(([label, n]) => `${label} ×${n}`)
    .join('; ');
}

const kib = (bytes: number): string => (bytes / 1024).toFixed(1);

function printCensus(census: Census, top: number): void {
  console.log(`total ${kib(census.totalBytes)} KiB, informer objects ${kib(census.informerBytes)} KiB`);
  const rows = Object.entries(census.groups).sort((a, b) => b[1].bytes - a[1].bytes);
  console.log('| KiB | count | group | holders |\n|---:|---:|---|---|');
  for (const [key, group] of rows.slice(0, top)) console.log(`| ${kib(group.bytes)} | ${group.count} | ${key} | ${topHolders(group.holders, undefined)} |`);
}

function printDifference(a: Census, b: Census, per: number, top: number): void {
  const totalDelta = b.totalBytes - a.totalBytes;
  const informerDelta = b.informerBytes - a.informerBytes;
  console.log(
    `total Δ ${kib(totalDelta)} KiB (${(totalDelta / per).toFixed(0)} B per deployment); informer objects Δ ${kib(informerDelta)} KiB (${(informerDelta / per).toFixed(0)} B); beyond them ${((totalDelta - informerDelta) / per).toFixed(0)} B per deployment`,
  );
  const keys = new Set([...Object.keys(a.groups), ...Object.keys(b.groups)]);
  const rows = [...keys].map((key) => {
    const ga = a.groups[key];
    const gb = b.groups[key];
    return { key, bytes: (gb?.bytes ?? 0) - (ga?.bytes ?? 0), count: (gb?.count ?? 0) - (ga?.count ?? 0), holders: topHolders(gb?.holders, ga?.holders) };
  });
  rows.sort((x, y) => y.bytes - x.bytes);
  const beyond = rows.filter((r) => !r.key.startsWith('[informer]'));
  console.log(`\nbeyond the informer objects (top ${top} by growth):`);
  console.log('| B per deployment | count per deployment | group | holders (Δ count) |\n|---:|---:|---|---|');
  for (const r of beyond.slice(0, top)) console.log(`| ${(r.bytes / per).toFixed(0)} | ${(r.count / per).toFixed(2)} | ${r.key} | ${r.holders} |`);
  const shrunk = beyond.filter((r) => r.bytes < 0).reverse();
  if (shrunk.length > 0) {
    console.log('\nshrunk most:');
    for (const r of shrunk.slice(0, 5)) console.log(`| ${(r.bytes / per).toFixed(0)} | ${(r.count / per).toFixed(2)} | ${r.key} |`);
  }
  const byOwner = new Map<string, number>();
  for (const r of beyond) byOwner.set(ownerOf(r.key), (byOwner.get(ownerOf(r.key)) ?? 0) + r.bytes);
  console.log('\nbeyond the informer objects, by owner (the first name of the holder):');
  console.log('| B per deployment | owner |\n|---:|---|');
  for (const [owner, bytes] of [...byOwner].sort((x, y) => y[1] - x[1]).slice(0, top)) console.log(`| ${(bytes / per).toFixed(0)} | ${owner} |`);
  console.log('\ninformer objects (top 8):');
  for (const r of rows.filter((x) => x.key.startsWith('[informer]')).slice(0, 8))
    console.log(`| ${(r.bytes / per).toFixed(0)} | ${(r.count / per).toFixed(2)} | ${r.key} |`);
}

/** The owner a group's key names: the class of `object:X`, else the first name of its holder. */
function ownerOf(key: string): string {
  const at = key.indexOf(' @ ');
  if (at < 0) return key.startsWith('code:') ? '(compiled code)' : key;
  const holder = key.slice(at + 3);
  return holder.startsWith('closure ') ? holder : /^[^.[]*/.exec(holder)![0] || holder;
}

function main(): void {
  const args = process.argv.slice(2);
  const option = (name: string, fallback: number): number => {
    const i = args.indexOf(name);
    if (i < 0) return fallback;
    const value = Number(args[i + 1]);
    args.splice(i, 2);
    return value;
  };
  const pathsIndex = args.indexOf('--paths');
  if (pathsIndex >= 0) {
    const raw = JSON.parse(readFileSync(args[0], 'utf8')) as RawSnapshot;
    for (const line of retainerPaths(raw, args[pathsIndex + 1], 12)) console.log(line);
    return;
  }
  const per = option('--per', 1);
  const top = option('--top', 30);
  if (args.length === 1) printCensus(loadCensus(args[0]), top);
  else if (args.length === 2) printDifference(loadCensus(args[0]), loadCensus(args[1]), per, top);
  else {
    console.error('usage: heap-census.ts A.heapsnapshot [B.heapsnapshot] [--per N] [--top K]');
    process.exit(2);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) main();
