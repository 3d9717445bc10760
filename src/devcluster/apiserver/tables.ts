/**
 * Server-side printing: `Accept: application/json;as=Table;v=v1;g=meta.k8s.io` answers a
 * meta.k8s.io/v1 Table, as kubectl's `get` expects (without it kubectl prints only NAME AGE).
 *
 * Built-in kinds get the columns of the real printers (pkg/printers/internalversion/printers.go)
 * that kubectl users know: ConfigMap DATA, Deployment READY/UP-TO-DATE/AVAILABLE, Pod
 * READY/STATUS/RESTARTS, Service TYPE/CLUSTER-IP/EXTERNAL-IP/PORT(S), Ingress CLASS/HOSTS/ADDRESS/PORTS,
 * Job STATUS/COMPLETIONS/DURATION, CronJob SCHEDULE/TIMEZONE/SUSPEND/ACTIVE/LAST SCHEDULE, PDB MIN
 * AVAILABLE/MAX UNAVAILABLE/ALLOWED DISRUPTIONS, IngressClass CONTROLLER/PARAMETERS, ...; a version
 * stored as another (events.k8s.io/v1 Events) prints through the storage version's printer, as the
 * real server prints the internal object; custom resources get
 * Name plus their additionalPrinterColumns evaluated by JSONPath (apiextensions tableconvertor),
 * `date` cells turned into ages.
 * Caveats: the JSONPath subset is `.a.b`, `.a[0]`, `.a[*].b`, `['key']` and simple
 * `[?(@.type=="Ready")]` filters.
 */
import type { PrinterColumn } from './crd-registry.js';
import { asArray, asObject, isJsonObject, textOf, valueAt, type JsonObject, type JsonValue } from './json-clone.js';
import type { KubeObject, ResourceType } from './resource-types.js';

export interface ColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

function col(name: string, type = 'string', format = '', priority = 0, description = ''): ColumnDefinition {
  return { name, type, format, description, priority };
}

const NAME = col('Name', 'string', 'name', 0, 'Name must be unique within a namespace.');
const AGE = col('Age', 'string', '', 0, 'CreationTimestamp is a timestamp representing the server time when this object was created.');

/** Human age as kubectl prints it (`5s`, `3m12s`, `4h`, `2d3h`). */
export function humanAge(since: string | undefined, now = Date.now()): string {
  if (!since) return '<unknown>';
  const t = Date.parse(since);
  if (Number.isNaN(t)) return '<unknown>';
  const s = Math.max(0, Math.floor((now - t) / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return `${m}m${s % 60 ? `${s % 60}s` : ''}`;
  if (m < 180) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 8) return `${h}h${m % 60 ? `${m % 60}m` : ''}`;
  if (h < 48) return `${h}h`;
  const d = Math.floor(h / 24);
  if (d < 8) return `${d}d${h % 24 ? `${h % 24}h` : ''}`;
  return `${d}d`;
}

type Printer = { columns: ColumnDefinition[]; cells: (o: KubeObject) => JsonValue[] };

/** `o.a?.b?.c` of an object, for the printers below. */
const at = (o: JsonValue | undefined, ...path: string[]): JsonValue | undefined => valueAt(o, path);

/** A timestamp to age: only a string is one (anything else is `<unknown>`). */
function ageOf(since: JsonValue | undefined): string {
  return humanAge(typeof since === 'string' ? since : undefined);
}

function age(o: KubeObject): string {
  return humanAge(o.metadata.creationTimestamp);
}

function countKeys(v: JsonValue | undefined): number {
  return isJsonObject(v) ? Object.keys(v).length : 0;
}

function podReady(o: KubeObject): string {
  const total = asArray(at(o, 'spec', 'containers')).length;
  const ready = asArray(at(o, 'status', 'containerStatuses')).filter((c) => at(c, 'ready')).length;
  return `${ready}/${total}`;
}

function podRestarts(o: KubeObject): number {
  return asArray(at(o, 'status', 'containerStatuses')).reduce((n: number, c) => {
    const restarts = at(c, 'restartCount');
    return n + (typeof restarts === 'number' ? restarts : 0);
  }, 0);
}

function podStatus(o: KubeObject): JsonValue {
  if (o.metadata.deletionTimestamp) return 'Terminating';
  for (const c of asArray(at(o, 'status', 'containerStatuses'))) {
    const waiting = at(c, 'state', 'waiting', 'reason');
    if (waiting) return waiting;
    const terminated = at(c, 'state', 'terminated', 'reason');
    if (terminated && at(o, 'status', 'phase') !== 'Succeeded') return terminated;
  }
  return at(o, 'status', 'reason') ?? at(o, 'status', 'phase') ?? 'Pending';
}

function servicePorts(o: KubeObject): string {
  const ports = asArray(at(o, 'spec', 'ports')).map((p) => {
    const nodePort = at(p, 'nodePort');
    return `${textOf(at(p, 'port'))}${nodePort ? `:${textOf(nodePort)}` : ''}/${textOf(at(p, 'protocol') ?? 'TCP')}`;
  });
  return ports.length ? ports.join(',') : '<none>';
}

function externalIp(o: KubeObject): JsonValue {
  const ing = asArray(at(o, 'status', 'loadBalancer', 'ingress'))
    .map((i) => at(i, 'ip') ?? at(i, 'hostname'))
    .filter(Boolean);
  const ext = [...asArray(at(o, 'spec', 'externalIPs')), ...ing];
  if (ext.length) return ext.map((v) => (v === null || v === undefined ? '' : textOf(v))).join(',');
  const type = at(o, 'spec', 'type');
  if (type === 'LoadBalancer') return '<pending>';
  if (type === 'ExternalName') return at(o, 'spec', 'externalName') ?? '<none>';
  return '<none>';
}

function selectorString(sel: JsonValue | undefined): string {
  const entries = Object.entries(asObject(sel) ?? {});
  return entries.length ? entries.map(([k, v]) => `${k}=${textOf(v)}`).join(',') : '<none>';
}

/** formatHosts of printers.go: up to 3 hosts, `*` when none, `+ N more...` beyond. */
function ingressHosts(o: KubeObject): string {
  const rules = asArray(at(o, 'spec', 'rules'));
  const hosts: string[] = [];
  let more = false;
  for (const rule of rules) {
    if (hosts.length === 3) more = true;
    const host = at(rule, 'host');
    if (!more && typeof host === 'string' && host) hosts.push(host);
  }
  if (hosts.length === 0) return '*';
  return more ? `${hosts.join(',')} + ${rules.length - 3} more...` : hosts.join(',');
}

/** ingressLoadBalancerStatusStringer: sorted unique IPs (else hostnames), clipped to 16 characters. */
function loadBalancerAddresses(o: KubeObject): string {
  const found = new Set<string>();
  for (const i of asArray(at(o, 'status', 'loadBalancer', 'ingress'))) {
    const ip = at(i, 'ip');
    const hostname = at(i, 'hostname');
    if (typeof ip === 'string' && ip) found.add(ip);
    else if (typeof hostname === 'string' && hostname) found.add(hostname);
  }
  const joined = [...found].sort().join(',');
  return joined.length > 16 ? `${joined.slice(0, 13)}...` : joined;
}

function hasTrueCondition(o: KubeObject, type: string): boolean {
  return asArray(at(o, 'status', 'conditions')).some((c) => at(c, 'type') === type && at(c, 'status') === 'True');
}

/** printJob's STATUS cell (1.32 order of precedence). */
function jobStatus(o: KubeObject): string {
  if (hasTrueCondition(o, 'Complete')) return 'Complete';
  if (hasTrueCondition(o, 'Failed')) return 'Failed';
  if (o.metadata.deletionTimestamp) return 'Terminating';
  for (const t of ['Suspended', 'FailureTarget', 'SuccessCriteriaMet']) if (hasTrueCondition(o, t)) return t;
  return 'Running';
}

function jobCompletions(o: KubeObject): string {
  const succeeded = textOf(at(o, 'status', 'succeeded') ?? 0);
  const completions = at(o, 'spec', 'completions');
  if (typeof completions === 'number') return `${succeeded}/${completions}`;
  const parallelism = at(o, 'spec', 'parallelism');
  return typeof parallelism === 'number' && parallelism > 1 ? `${succeeded}/1 of ${parallelism}` : `${succeeded}/1`;
}

function jobDuration(o: KubeObject): string {
  const start = at(o, 'status', 'startTime');
  if (typeof start !== 'string') return '';
  const completion = at(o, 'status', 'completionTime');
  return typeof completion === 'string' ? humanAge(start, Date.parse(completion)) : humanAge(start);
}

/** layoutContainerCells: container names and images, comma-joined. */
function containerCells(podSpec: JsonValue | undefined): [string, string] {
  const containers = asArray(at(podSpec, 'containers'));
  return [containers.map((c) => textOf(at(c, 'name') ?? '')).join(','), containers.map((c) => textOf(at(c, 'image') ?? '')).join(',')];
}

/** metav1.FormatLabelSelector: matchLabels and matchExpressions as a selector string. */
function formatLabelSelector(sel: JsonValue | undefined): string {
  if (!isJsonObject(sel)) return '<none>';
  const parts = Object.entries(asObject(sel.matchLabels) ?? {}).map(([k, v]) => `${k}=${textOf(v)}`);
  for (const e of asArray(sel.matchExpressions)) {
    const key = textOf(at(e, 'key') ?? '');
    const values = asArray(at(e, 'values')).map(textOf).join(',');
    const op = at(e, 'operator');
    if (op === 'In') parts.push(`${key} in (${values})`);
    else if (op === 'NotIn') parts.push(`${key} notin (${values})`);
    else if (op === 'Exists') parts.push(key);
    else if (op === 'DoesNotExist') parts.push(`!${key}`);
  }
  const out = parts.join(',');
  return out === '' ? '<none>' : out;
}

function intOrStringCell(v: JsonValue | undefined): string {
  return v === undefined || v === null ? 'N/A' : textOf(v);
}

const BUILTIN_PRINTERS: Record<string, Printer> = {
  '/configmaps': {
    columns: [NAME, col('Data', 'string'), AGE],
    cells: (o) => [o.metadata.name, countKeys(o.data) + countKeys(o.binaryData), age(o)],
  },
  '/secrets': { columns: [NAME, col('Type'), col('Data'), AGE], cells: (o) => [o.metadata.name, o.type ?? 'Opaque', countKeys(o.data), age(o)] },
  '/namespaces': { columns: [NAME, col('Status'), AGE], cells: (o) => [o.metadata.name, at(o, 'status', 'phase') ?? 'Active', age(o)] },
  '/serviceaccounts': { columns: [NAME, col('Secrets', 'integer'), AGE], cells: (o) => [o.metadata.name, asArray(o.secrets).length, age(o)] },
  '/pods': {
    columns: [NAME, col('Ready'), col('Status'), col('Restarts', 'string'), AGE, col('IP', 'string', '', 1), col('Node', 'string', '', 1)],
    cells: (o) => [
      o.metadata.name,
      podReady(o),
      podStatus(o),
      String(podRestarts(o)),
      age(o),
      at(o, 'status', 'podIP') ?? '<none>',
      at(o, 'spec', 'nodeName') ?? '<none>',
    ],
  },
  '/services': {
    columns: [NAME, col('Type'), col('Cluster-IP'), col('External-IP'), col('Port(s)'), AGE, col('Selector', 'string', '', 1)],
    cells: (o) => [
      o.metadata.name,
      at(o, 'spec', 'type') ?? 'ClusterIP',
      at(o, 'spec', 'clusterIP') ?? '<none>',
      externalIp(o),
      servicePorts(o),
      age(o),
      selectorString(at(o, 'spec', 'selector')),
    ],
  },
  '/events': {
    columns: [col('Last Seen'), col('Type'), col('Reason'), col('Object'), col('Message')],
    cells: (o) => [
      ageOf(o.lastTimestamp ?? o.eventTime ?? o.metadata.creationTimestamp),
      o.type ?? '',
      o.reason ?? '',
      `${textOf(at(o, 'involvedObject', 'kind') ?? '').toLowerCase()}/${textOf(at(o, 'involvedObject', 'name') ?? '')}`,
      o.message ?? '',
    ],
  },
  'apps/deployments': {
    columns: [NAME, col('Ready'), col('Up-to-date', 'integer'), col('Available', 'integer'), AGE],
    cells: (o) => [
      o.metadata.name,
      `${textOf(at(o, 'status', 'readyReplicas') ?? 0)}/${textOf(at(o, 'spec', 'replicas') ?? 1)}`,
      at(o, 'status', 'updatedReplicas') ?? 0,
      at(o, 'status', 'availableReplicas') ?? 0,
      age(o),
    ],
  },
  'apps/replicasets': {
    columns: [NAME, col('Desired', 'integer'), col('Current', 'integer'), col('Ready', 'integer'), AGE],
    cells: (o) => [o.metadata.name, at(o, 'spec', 'replicas') ?? 1, at(o, 'status', 'replicas') ?? 0, at(o, 'status', 'readyReplicas') ?? 0, age(o)],
  },
  'coordination.k8s.io/leases': { columns: [NAME, col('Holder'), AGE], cells: (o) => [o.metadata.name, at(o, 'spec', 'holderIdentity') ?? '', age(o)] },
  'admissionregistration.k8s.io/validatingwebhookconfigurations': {
    columns: [NAME, col('Webhooks', 'integer'), AGE],
    cells: (o) => [o.metadata.name, asArray(o.webhooks).length, age(o)],
  },
  'admissionregistration.k8s.io/mutatingwebhookconfigurations': {
    columns: [NAME, col('Webhooks', 'integer'), AGE],
    cells: (o) => [o.metadata.name, asArray(o.webhooks).length, age(o)],
  },
  'networking.k8s.io/ingresses': {
    columns: [NAME, col('Class'), col('Hosts'), col('Address'), col('Ports'), AGE],
    cells: (o) => [
      o.metadata.name,
      at(o, 'spec', 'ingressClassName') ?? '<none>',
      ingressHosts(o),
      loadBalancerAddresses(o),
      asArray(at(o, 'spec', 'tls')).length ? '80, 443' : '80',
      age(o),
    ],
  },
  'networking.k8s.io/ingressclasses': {
    columns: [NAME, col('Controller'), col('Parameters'), AGE],
    cells: (o) => {
      const p = at(o, 'spec', 'parameters');
      const group = at(p, 'apiGroup');
      const parameters = isJsonObject(p) ? `${textOf(p.kind ?? '')}${typeof group === 'string' ? `.${group}` : ''}/${textOf(p.name ?? '')}` : '<none>';
      return [o.metadata.name, at(o, 'spec', 'controller') ?? '', parameters, age(o)];
    },
  },
  'batch/jobs': {
    columns: [
      NAME,
      col('Status'),
      col('Completions'),
      col('Duration'),
      AGE,
      col('Containers', 'string', '', 1),
      col('Images', 'string', '', 1),
      col('Selector', 'string', '', 1),
    ],
    cells: (o) => [
      o.metadata.name,
      jobStatus(o),
      jobCompletions(o),
      jobDuration(o),
      age(o),
      ...containerCells(at(o, 'spec', 'template', 'spec')),
      formatLabelSelector(at(o, 'spec', 'selector')),
    ],
  },
  'batch/cronjobs': {
    columns: [
      NAME,
      col('Schedule'),
      col('Timezone'),
      col('Suspend', 'boolean'),
      col('Active', 'integer'),
      col('Last Schedule'),
      AGE,
      col('Containers', 'string', '', 1),
      col('Images', 'string', '', 1),
      col('Selector', 'string', '', 1),
    ],
    cells: (o) => {
      const last = at(o, 'status', 'lastScheduleTime');
      const suspend = at(o, 'spec', 'suspend');
      return [
        o.metadata.name,
        at(o, 'spec', 'schedule') ?? '',
        at(o, 'spec', 'timeZone') ?? '<none>',
        // printBoolPtr
        typeof suspend === 'boolean' ? (suspend ? 'True' : 'False') : '<unset>',
        asArray(at(o, 'status', 'active')).length,
        typeof last === 'string' ? humanAge(last) : '<none>',
        age(o),
        ...containerCells(at(o, 'spec', 'jobTemplate', 'spec', 'template', 'spec')),
        formatLabelSelector(at(o, 'spec', 'jobTemplate', 'spec', 'selector')),
      ];
    },
  },
  'policy/poddisruptionbudgets': {
    columns: [NAME, col('Min Available'), col('Max Unavailable'), col('Allowed Disruptions', 'integer'), AGE],
    cells: (o) => [
      o.metadata.name,
      intOrStringCell(at(o, 'spec', 'minAvailable')),
      intOrStringCell(at(o, 'spec', 'maxUnavailable')),
      at(o, 'status', 'disruptionsAllowed') ?? 0,
      age(o),
    ],
  },
  'apiextensions.k8s.io/customresourcedefinitions': {
    columns: [NAME, col('Created At', 'date')],
    cells: (o) => [o.metadata.name, o.metadata.creationTimestamp ?? null],
  },
};

const DEFAULT_PRINTER: Printer = { columns: [NAME, AGE], cells: (o) => [o.metadata.name, age(o)] };

// ---- JSONPath subset ----

function evalJsonPath(obj: JsonValue, path: string): JsonValue[] {
  let expr = path.trim();
  if (expr.startsWith('{') && expr.endsWith('}')) expr = expr.slice(1, -1);
  if (expr.startsWith('$')) expr = expr.slice(1);
  const tokens: string[] = [];
  const re = /\.([A-Za-z0-9_\-$]+)|\[(\d+|\*)\]|\['([^']+)'\]|\[\?\(@\.([A-Za-z0-9_.]+)\s*==\s*["']([^"']*)["']\)\]|\.\*/g;
  let m: RegExpExecArray | null;
  let consumed = 0;
  while ((m = re.exec(expr))) {
    if (m.index !== consumed) return [];
    consumed = m.index + m[0].length;
    if (m[1] !== undefined) tokens.push(`k:${m[1]}`);
    else if (m[2] !== undefined) tokens.push(m[2] === '*' ? '*' : `i:${m[2]}`);
    else if (m[3] !== undefined) tokens.push(`k:${m[3]}`);
    else if (m[4] !== undefined) tokens.push(`f:${m[4]}=${m[5]}`);
    else tokens.push('*');
  }
  if (consumed !== expr.length) return [];
  let current: JsonValue[] = [obj];
  for (const t of tokens) {
    const next: JsonValue[] = [];
    for (const c of current) {
      if (c === null) continue;
      if (t === '*') {
        if (Array.isArray(c)) next.push(...c);
        else if (isJsonObject(c)) for (const v of Object.values(c)) if (v !== undefined) next.push(v);
      } else if (t.startsWith('k:')) {
        const v = valueAt(c, [t.slice(2)]);
        if (v !== undefined) next.push(v);
      } else if (t.startsWith('i:')) {
        if (Array.isArray(c)) {
          const v = c[Number(t.slice(2))];
          if (v !== undefined) next.push(v);
        }
      } else if (t.startsWith('f:')) {
        const [field, value] = t.slice(2).split('=');
        if (Array.isArray(c)) {
          for (const item of c) if (textOf(valueAt(item, field.split('.'))) === value) next.push(item);
        }
      }
    }
    current = next;
  }
  return current;
}

function crCell(obj: KubeObject, c: PrinterColumn): JsonValue {
  const values = evalJsonPath(obj, c.jsonPath);
  if (values.length === 0) return null;
  const v = values.length === 1 ? values[0] : values;
  if (c.type === 'date') return typeof v === 'string' ? humanAge(v) : null;
  if (c.type === 'integer') return typeof v === 'number' ? Math.trunc(v) : typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : null;
  if (c.type === 'number') return typeof v === 'number' ? v : null;
  if (c.type === 'boolean') return typeof v === 'boolean' ? v : null;
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

function printerFor(type: ResourceType, groupResource: string): Printer {
  if (type.crd) {
    const declared = type.crd.printerColumns;
    if (declared.length === 0) return DEFAULT_PRINTER;
    return {
      columns: [NAME, ...declared.map((c) => col(c.name, c.type === 'date' ? 'date' : c.type, c.format ?? '', c.priority ?? 0, c.description ?? ''))],
      cells: (o) => [o.metadata.name, ...declared.map((c) => crCell(o, c))],
    };
  }
  const printer = BUILTIN_PRINTERS[groupResource] ?? DEFAULT_PRINTER;
  const conversion = type.storedAs;
  if (!conversion) return printer;
  // the real server prints the internal object, so every version of a resource prints the same
  return { columns: printer.columns, cells: (o) => printer.cells({ ...conversion.toStorage(o), metadata: o.metadata }) };
}

function partialMeta(o: KubeObject): JsonObject {
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: o.metadata };
}

/**
 * What each Table row carries (`includeObject`, as kube-apiserver's TableOptions): the object's
 * metadata (`Metadata`, the default), the whole object (`Object`: what `kubectl get --sort-by`
 * asks for, it sorts on the objects), or nothing (`None`).
 */
export type TableRowObject = 'None' | 'Metadata' | 'Object';

/** The `includeObject` query parameter; an unknown value is a 400 in kube-apiserver, here the default. */
export function tableRowObjectOf(value: string | null): TableRowObject {
  return value === 'None' || value === 'Object' ? value : 'Metadata';
}

/** A meta.k8s.io/v1 Table (members in the order they are serialized). */
export interface Table {
  kind: 'Table';
  apiVersion: 'meta.k8s.io/v1';
  metadata: { resourceVersion: string | undefined };
  columnDefinitions: ColumnDefinition[] | null;
  rows: { cells: JsonValue[]; object?: JsonObject }[];
}

export function tableOf(
  type: ResourceType,
  groupResource: string,
  objects: KubeObject[],
  resourceVersion: string | undefined,
  withColumns = true,
  rowObject: TableRowObject = 'Metadata',
): Table {
  const printer = printerFor(type, groupResource);
  const objectOf = (o: KubeObject): JsonObject | undefined => (rowObject === 'None' ? undefined : rowObject === 'Object' ? o : partialMeta(o));
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: { resourceVersion },
    columnDefinitions: withColumns ? printer.columns : null,
    rows: objects.map((o) => {
      const object = objectOf(o);
      return { cells: printer.cells(o), ...(object ? { object } : {}) };
    }),
  };
}

/** Does the Accept header ask for a Table? */
export function wantsTable(accept: string | undefined): boolean {
  if (!accept) return false;
  return accept.split(',').some((part) => {
    const params = part.split(';').map((p) => p.trim());
    return params.includes('as=Table') && params[0] === 'application/json';
  });
}
