/**
 * What the real registry strategies do for the built-in kinds on create and update
 * (PrepareForCreate/PrepareForUpdate, defaulting, Validate): status resets, server defaults
 * (Service cluster IPs, Deployment rollout defaults, Namespace phase), Secret stringData, and the
 * ConfigMap/Secret 1 MiB limit.
 *
 * Caveats: only the defaults and validations an operator or kubectl would notice are implemented;
 * Pod and Deployment specs are otherwise stored as given.
 */
import { invalid, invalidValue, requiredValue, tooLong, type FieldError, type JsonObject } from './errors.js';
import type { NameRule } from './object-meta-validation.js';
import { labelSelectorFromObject, matchesLabels } from './selectors.js';

export const MAX_CONFIG_BYTES = 1048576;
const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;

export function nameRuleFor(groupResource: string): NameRule {
  switch (groupResource) {
    case '/namespaces':
      return 'label';
    case '/services':
      return 'dns1035';
    case 'rbac.authorization.k8s.io/roles':
    case 'rbac.authorization.k8s.io/rolebindings':
    case 'rbac.authorization.k8s.io/clusterroles':
    case 'rbac.authorization.k8s.io/clusterrolebindings':
      return 'path-segment';
    default:
      return 'subdomain';
  }
}

let nextServiceIp = 1;
function allocateClusterIp(): string {
  const n = nextServiceIp++;
  return `10.96.${Math.floor(n / 250) % 250}.${(n % 250) + 1}`;
}

function podSpecDefaults(spec: JsonObject | undefined): void {
  if (!spec || typeof spec !== 'object') return;
  spec.restartPolicy ??= 'Always';
  spec.dnsPolicy ??= 'ClusterFirst';
  spec.schedulerName ??= 'default-scheduler';
  spec.terminationGracePeriodSeconds ??= 30;
  spec.securityContext ??= {};
  for (const c of [...(spec.containers ?? []), ...(spec.initContainers ?? [])]) {
    if (!c || typeof c !== 'object') continue;
    c.terminationMessagePath ??= '/dev/termination-log';
    c.terminationMessagePolicy ??= 'File';
    c.imagePullPolicy ??= String(c.image ?? '').endsWith(':latest') || !String(c.image ?? '').includes(':') ? 'Always' : 'IfNotPresent';
    c.resources ??= {};
    for (const p of c.ports ?? []) p.protocol ??= 'TCP';
  }
}

function workloadDefaults(obj: JsonObject): void {
  const spec = (obj.spec ??= {});
  spec.replicas ??= 1;
  spec.revisionHistoryLimit ??= 10;
  if (obj.kind === 'Deployment') {
    spec.progressDeadlineSeconds ??= 600;
    spec.strategy ??= { type: 'RollingUpdate' };
    if (spec.strategy.type === 'RollingUpdate') spec.strategy.rollingUpdate ??= { maxUnavailable: '25%', maxSurge: '25%' };
  }
  podSpecDefaults(spec.template?.spec);
}

function validateWorkload(obj: JsonObject): FieldError[] {
  const errs: FieldError[] = [];
  const spec = obj.spec ?? {};
  if (!spec.selector) errs.push(requiredValue('spec.selector'));
  else {
    const labels = spec.template?.metadata?.labels ?? {};
    if (!matchesLabels(labelSelectorFromObject(spec.selector), labels)) {
      const rendered = `map[string]string{${Object.entries(labels)
        .map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`)
        .join(', ')}}`;
      errs.push({
        type: 'FieldValueInvalid',
        field: 'spec.template.metadata.labels',
        text: `Invalid value: ${rendered}: \`selector\` does not match template \`labels\``,
      });
    }
  }
  if (typeof spec.replicas === 'number' && spec.replicas < 0) errs.push(invalidValue('spec.replicas', spec.replicas, 'must be greater than or equal to 0'));
  if (!Array.isArray(spec.template?.spec?.containers) || spec.template.spec.containers.length === 0) errs.push(requiredValue('spec.template.spec.containers'));
  return errs;
}

function configBytes(obj: JsonObject): number {
  let total = 0;
  for (const v of Object.values(obj.data ?? {})) total += Buffer.byteLength(String(v));
  for (const v of Object.values(obj.binaryData ?? {})) total += Buffer.from(String(v), 'base64').length;
  return total;
}

function validateConfigKeys(obj: JsonObject, fields: string[]): FieldError[] {
  const errs: FieldError[] = [];
  for (const f of fields) {
    for (const k of Object.keys(obj[f] ?? {})) {
      if (k.length > 253) errs.push(invalidValue(`${f}[${k}]`, k, 'must be no more than 253 characters'));
      else if (!CONFIG_KEY.test(k)) {
        errs.push(
          invalidValue(
            `${f}[${k}]`,
            k,
            "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
          ),
        );
      }
    }
  }
  return errs;
}

/**
 * Applies the server-side defaults and field resets of a create (`old` undefined) or an update
 * (old = stored object), then validates. `obj` is a private copy and is modified. Throws 422.
 */
export function prepareBuiltin(groupResource: string, obj: JsonObject, old: JsonObject | undefined): void {
  const errs: FieldError[] = [];
  switch (groupResource) {
    case '/namespaces':
      obj.spec ??= { finalizers: ['kubernetes'] };
      if (!old) obj.status = { phase: 'Active' };
      obj.metadata.labels = { ...(obj.metadata.labels ?? {}), 'kubernetes.io/metadata.name': obj.metadata.name };
      break;
    case '/configmaps':
      errs.push(...validateConfigKeys(obj, ['data', 'binaryData']));
      if (configBytes(obj) > MAX_CONFIG_BYTES) errs.push(tooLong('[]', MAX_CONFIG_BYTES));
      break;
    case '/secrets':
      if (obj.stringData && typeof obj.stringData === 'object') {
        obj.data = { ...(obj.data ?? {}) };
        for (const [k, v] of Object.entries(obj.stringData)) obj.data[k] = Buffer.from(String(v)).toString('base64');
        delete obj.stringData;
      }
      obj.type ??= 'Opaque';
      errs.push(...validateConfigKeys(obj, ['data']));
      if (Object.values(obj.data ?? {}).reduce((n: number, v) => n + Buffer.from(String(v), 'base64').length, 0) > MAX_CONFIG_BYTES) {
        errs.push(tooLong('data', MAX_CONFIG_BYTES));
      }
      break;
    case '/services': {
      const spec = (obj.spec ??= {});
      spec.type ??= 'ClusterIP';
      spec.sessionAffinity ??= 'None';
      if (old?.spec?.clusterIP && !spec.clusterIP) spec.clusterIP = old.spec.clusterIP;
      if (!spec.clusterIP && spec.type !== 'ExternalName') spec.clusterIP = allocateClusterIp();
      if (spec.clusterIP && spec.type !== 'ExternalName') {
        spec.clusterIPs ??= [spec.clusterIP];
        spec.ipFamilies ??= ['IPv4'];
        spec.ipFamilyPolicy ??= 'SingleStack';
        spec.internalTrafficPolicy ??= 'Cluster';
      }
      for (const p of spec.ports ?? []) {
        p.protocol ??= 'TCP';
        p.targetPort ??= p.port;
      }
      if (!old) obj.status = { loadBalancer: {} };
      break;
    }
    case '/pods':
      podSpecDefaults(obj.spec);
      if (!old) obj.status = { phase: 'Pending', qosClass: 'BestEffort' };
      if (!Array.isArray(obj.spec?.containers) || obj.spec.containers.length === 0) errs.push(requiredValue('spec.containers'));
      break;
    case 'apps/deployments':
    case 'apps/replicasets':
      workloadDefaults(obj);
      if (!old) obj.status = {};
      errs.push(...validateWorkload(obj));
      break;
    case '/serviceaccounts':
    case '/events':
    default:
      break;
  }
  if (errs.length) {
    const [group] = groupResource.split('/');
    throw invalid(group, obj.kind ?? '', obj.metadata?.name ?? '', errs);
  }
}
