/**
 * What the real registry strategies do for the built-in kinds on create and update
 * (PrepareForCreate/PrepareForUpdate, defaulting, Validate): status resets, server defaults
 * (Service cluster IPs, Deployment rollout defaults, Namespace phase), Secret stringData, and the
 * ConfigMap/Secret 1 MiB limit. The batch, networking and policy kinds are in served-group-strategies.ts.
 *
 * Caveats: only the defaults and validations an operator or kubectl would notice are implemented;
 * Pod and Deployment specs are otherwise stored as given.
 */
import { MUTATING_GR, prepareWebhookConfiguration, VALIDATING_GR } from './admission-webhooks.js';
import { invalid, invalidValue, requiredValue, tooLong, type FieldError } from './errors.js';
import { asArray, asObject, isJsonObject, textOf, valueAt, type JsonObject, type JsonValue } from './json-clone.js';
import type { NameRule } from './object-meta-validation.js';
import type { KubeObject } from './resource-types.js';
import { labelSelectorFromObject, matchesLabels } from './selectors.js';
import { prepareServedGroupKind } from './served-group-strategies.js';
import { BINDING_GR, POLICY_GR, prepareValidatingAdmissionPolicy, prepareValidatingAdmissionPolicyBinding } from './validating-admission-policy.js';

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

/**
 * The first address of the service range (10.96.0.0/16), which kube-apiserver gives to the
 * `default/kubernetes` Service (pkg/controlplane/controller/kubernetesservice); the counter below
 * never hands it out.
 */
export const KUBERNETES_SERVICE_IP = '10.96.0.1';

let nextServiceIp = 1;
function allocateClusterIp(): string {
  const n = nextServiceIp++;
  return `10.96.${Math.floor(n / 250) % 250}.${(n % 250) + 1}`;
}

/** Pod spec defaults (SetDefaults_PodSpec/Container), also for the pod templates of workloads. */
export function podSpecDefaults(spec: JsonValue | undefined): void {
  if (!isJsonObject(spec)) return;
  spec.restartPolicy ??= 'Always';
  spec.dnsPolicy ??= 'ClusterFirst';
  spec.schedulerName ??= 'default-scheduler';
  spec.terminationGracePeriodSeconds ??= 30;
  spec.securityContext ??= {};
  for (const c of [...asArray(spec.containers), ...asArray(spec.initContainers)]) {
    if (!isJsonObject(c)) continue;
    c.terminationMessagePath ??= '/dev/termination-log';
    c.terminationMessagePolicy ??= 'File';
    const image = textOf(c.image ?? '');
    c.imagePullPolicy ??= image.endsWith(':latest') || !image.includes(':') ? 'Always' : 'IfNotPresent';
    c.resources ??= {};
    for (const p of asArray(c.ports)) if (isJsonObject(p)) p.protocol ??= 'TCP';
  }
}

/** `obj[key]`, first set to `{}` when absent (as `obj[key] ??= {}`); undefined when it is not an object. */
export function objectField(obj: JsonObject, key: string): JsonObject | undefined {
  return asObject((obj[key] ??= {}));
}

function workloadDefaults(obj: KubeObject): void {
  const spec = objectField(obj, 'spec');
  if (!spec) return;
  spec.replicas ??= 1;
  spec.revisionHistoryLimit ??= 10;
  if (obj.kind === 'Deployment') {
    spec.progressDeadlineSeconds ??= 600;
    const strategy = (spec.strategy ??= { type: 'RollingUpdate' });
    if (isJsonObject(strategy) && strategy.type === 'RollingUpdate') strategy.rollingUpdate ??= { maxUnavailable: '25%', maxSurge: '25%' };
  }
  podSpecDefaults(valueAt(spec, ['template', 'spec']));
}

function validateWorkload(obj: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const spec = asObject(obj.spec) ?? {};
  if (!spec.selector) errs.push(requiredValue('spec.selector'));
  else {
    const labels = asObject(valueAt(spec, ['template', 'metadata', 'labels'])) ?? {};
    if (!matchesLabels(labelSelectorFromObject(asObject(spec.selector)), labels)) {
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
  const containers = valueAt(spec, ['template', 'spec', 'containers']);
  if (!Array.isArray(containers) || containers.length === 0) errs.push(requiredValue('spec.template.spec.containers'));
  return errs;
}

/** The values of a data map (ConfigMap/Secret data, binaryData) as text. */
function dataValues(data: JsonValue | undefined): string[] {
  return Object.values(asObject(data) ?? {}).map(textOf);
}

function configBytes(obj: KubeObject): number {
  let total = 0;
  for (const v of dataValues(obj.data)) total += Buffer.byteLength(v);
  for (const v of dataValues(obj.binaryData)) total += Buffer.from(v, 'base64').length;
  return total;
}

function validateConfigKeys(obj: KubeObject, fields: string[]): FieldError[] {
  const errs: FieldError[] = [];
  for (const f of fields) {
    for (const k of Object.keys(asObject(obj[f]) ?? {})) {
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
export function prepareBuiltin(groupResource: string, obj: KubeObject, old: KubeObject | undefined): void {
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
        const data: JsonObject = { ...asObject(obj.data) };
        obj.data = data;
        for (const [k, v] of Object.entries(obj.stringData)) data[k] = Buffer.from(textOf(v)).toString('base64');
        delete obj.stringData;
      }
      obj.type ??= 'Opaque';
      errs.push(...validateConfigKeys(obj, ['data']));
      if (dataValues(obj.data).reduce((n, v) => n + Buffer.from(v, 'base64').length, 0) > MAX_CONFIG_BYTES) {
        errs.push(tooLong('data', MAX_CONFIG_BYTES));
      }
      break;
    case '/services': {
      const spec = objectField(obj, 'spec');
      if (spec) {
        spec.type ??= 'ClusterIP';
        spec.sessionAffinity ??= 'None';
        const oldIp = valueAt(old?.spec, ['clusterIP']);
        if (oldIp && !spec.clusterIP) spec.clusterIP = oldIp;
        if (!spec.clusterIP && spec.type !== 'ExternalName') spec.clusterIP = allocateClusterIp();
        if (spec.clusterIP && spec.type !== 'ExternalName') {
          spec.clusterIPs ??= [spec.clusterIP];
          spec.ipFamilies ??= ['IPv4'];
          spec.ipFamilyPolicy ??= 'SingleStack';
          spec.internalTrafficPolicy ??= 'Cluster';
        }
        for (const p of asArray(spec.ports)) {
          if (!isJsonObject(p)) continue;
          p.protocol ??= 'TCP';
          p.targetPort ??= p.port;
        }
      }
      if (!old) obj.status = { loadBalancer: {} };
      break;
    }
    case '/pods': {
      podSpecDefaults(obj.spec);
      if (!old) obj.status = { phase: 'Pending', qosClass: 'BestEffort' };
      const containers = valueAt(obj.spec, ['containers']);
      if (!Array.isArray(containers) || containers.length === 0) errs.push(requiredValue('spec.containers'));
      break;
    }
    case 'apps/deployments':
    case 'apps/replicasets':
      workloadDefaults(obj);
      if (!old) obj.status = {};
      errs.push(...validateWorkload(obj));
      break;
    case VALIDATING_GR:
    case MUTATING_GR:
      prepareWebhookConfiguration(groupResource, obj);
      break;
    case POLICY_GR:
      prepareValidatingAdmissionPolicy(obj, old);
      break;
    case BINDING_GR:
      prepareValidatingAdmissionPolicyBinding(obj);
      break;
    case '/serviceaccounts':
    case '/events':
      break;
    default:
      errs.push(...prepareServedGroupKind(groupResource, obj, old));
      break;
  }
  if (errs.length) {
    const [group] = groupResource.split('/');
    throw invalid(group, obj.kind ?? '', obj.metadata.name, errs);
  }
}
