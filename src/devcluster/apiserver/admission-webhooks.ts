/**
 * admissionregistration.k8s.io/v1 ValidatingWebhookConfiguration and MutatingWebhookConfiguration:
 * their server defaults, and what kube-apiserver does with a write one of their webhooks matches
 * when that webhook cannot be reached.
 *
 * The emulator calls no webhook. A webhook is reachable when its `clientConfig.url` is set (the
 * emulator then admits as if the webhook had allowed), or when its `clientConfig.service` exists and
 * selects at least one Ready pod that is not being deleted (what the Endpoints controller would
 * publish as a ready address). Otherwise it is unreachable, and:
 * - `failurePolicy: Fail` (the default) refuses the write with kube-apiserver's error: 500
 *   InternalError `Internal error occurred: failed calling webhook "<name>": failed to call webhook:
 *   Post "https://<svc>.<ns>.svc:<port><path>?timeout=<t>s": no endpoints available for service "<svc>"`
 *   (`service "<svc>" not found` when the Service does not exist);
 * - `failurePolicy: Ignore`: the webhook is skipped.
 *
 * Matching follows k8s.io/apiserver/pkg/admission/plugin/webhook/predicates/rules (operations,
 * apiGroups, apiVersions, resources with `*`, `res/sub`, `res/*`, `*\/*`, scope) and matchPolicy
 * (Equivalent, the default: a rule naming another served version of the same group resource
 * matches). Mutating webhooks are consulted before validating ones, configurations by name, as the
 * real dispatchers do; writes of the webhook configurations themselves are exempt (as in
 * kube-apiserver). Caveats: namespaceSelector, objectSelector and matchConditions are ignored
 * (every object matches), and a service without a selector never has endpoints (no Endpoints
 * resource is served). A real kube-apiserver without `--enable-aggregator-routing` resolves the
 * Service to its ClusterIP and reports a connection error (`dial tcp …: connect: connection refused`)
 * or a timeout instead of "no endpoints available"; the code, reason and the part up to `Post "…":`
 * are the same.
 */
import { internalError, invalid, notSupported, requiredValue, type FieldError } from './errors.js';
import { asArray, asObject, isJsonObject, textOf, valueAt, type JsonObject, type JsonValue } from './json-clone.js';
import type { ObjectStore } from './object-store.js';
import type { KubeObject } from './resource-types.js';
import { labelSelectorFromObject, matchesLabels } from './selectors.js';

export const ADMISSION_GROUP = 'admissionregistration.k8s.io';
export const VALIDATING_GR = `${ADMISSION_GROUP}/validatingwebhookconfigurations`;
export const MUTATING_GR = `${ADMISSION_GROUP}/mutatingwebhookconfigurations`;

export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

/** What a webhook rule is matched against (admission.Attributes). */
export interface AdmissionAttributes {
  operation: AdmissionOperation;
  group: string;
  version: string;
  /** plural */
  resource: string;
  /** '' for the main resource */
  subresource: string;
  /** '' for cluster-scoped objects */
  namespace: string;
}

/** One rule (RuleWithOperations) against the request: the predicates of rules.go. */
export function ruleMatches(rule: JsonValue | undefined, a: AdmissionAttributes, version = a.version): boolean {
  const r = asObject(rule);
  if (!r) return false;
  const strings = (v: JsonValue | undefined) => asArray(v).map(textOf);
  const exactOrWildcard = (values: string[], wanted: string) => values.some((v) => v === '*' || v === wanted);
  if (!exactOrWildcard(strings(r.operations), a.operation)) return false;
  if (!exactOrWildcard(strings(r.apiGroups), a.group)) return false;
  if (!exactOrWildcard(strings(r.apiVersions), version)) return false;
  const resourceOk = strings(r.resources).some((entry) => {
    const slash = entry.indexOf('/');
    const res = slash < 0 ? entry : entry.slice(0, slash);
    const sub = slash < 0 ? '' : entry.slice(slash + 1);
    return (res === '*' || res === a.resource) && (sub === '*' || sub === a.subresource);
  });
  if (!resourceOk) return false;
  const scope = r.scope === undefined || r.scope === null ? '*' : textOf(r.scope);
  if (scope === '*') return true;
  if (scope === 'Namespaced') return a.namespace !== '';
  if (scope === 'Cluster') return a.namespace === '';
  return false;
}

/**
 * Whether a webhook's rules match the request. `equivalentVersions`: the other served versions of
 * the same group resource (matchPolicy Equivalent, the default, matches through them too).
 */
export function webhookMatches(webhook: JsonValue | undefined, a: AdmissionAttributes, equivalentVersions: readonly string[] = []): boolean {
  const w = asObject(webhook);
  if (!w) return false;
  const rules = asArray(w.rules);
  if (rules.some((r) => ruleMatches(r, a))) return true;
  if (w.matchPolicy === 'Exact') return false;
  return equivalentVersions.some((v) => v !== a.version && rules.some((r) => ruleMatches(r, a, v)));
}

/** Requests on the webhook configurations themselves are never sent to webhooks (IsExemptAdmissionConfigurationResource). */
export function isExemptResource(a: Pick<AdmissionAttributes, 'group' | 'resource'>): boolean {
  const exempt = ['validatingwebhookconfigurations', 'mutatingwebhookconfigurations', 'validatingadmissionpolicies', 'validatingadmissionpolicybindings'];
  return a.group === ADMISSION_GROUP && exempt.includes(a.resource);
}

/** The URL kube-apiserver posts to for a service-backed webhook, as its error message shows it. */
export function webhookServiceUrl(service: JsonObject, timeoutSeconds: number): string {
  const port = typeof service.port === 'number' ? service.port : 443;
  const path = typeof service.path === 'string' && service.path !== '' ? service.path : '/';
  return `https://${textOf(service.name ?? '')}.${textOf(service.namespace ?? '')}.svc:${port}${path}?timeout=${timeoutSeconds}s`;
}

function podReady(pod: KubeObject): boolean {
  if (pod.metadata.deletionTimestamp) return false;
  return asArray(valueAt(pod, ['status', 'conditions'])).some((c) => isJsonObject(c) && c.type === 'Ready' && c.status === 'True');
}

/** Why the webhook's service cannot be reached, undefined when it can (or the webhook has a url). */
export function unreachableReason(store: ObjectStore, webhook: JsonObject): string | undefined {
  const service = asObject(valueAt(webhook, ['clientConfig', 'service']));
  if (!service) return undefined;
  const name = textOf(service.name ?? '');
  const namespace = textOf(service.namespace ?? '');
  const svc = store.get('/services', namespace, name);
  if (!svc) return `service "${name}" not found`;
  const selector = asObject(valueAt(svc, ['spec', 'selector']));
  const ready =
    selector !== undefined &&
    Object.keys(selector).length > 0 &&
    [...store.list('/pods', namespace)].some((p) => matchesLabels(labelSelectorFromObject({ matchLabels: selector }), p.metadata.labels) && podReady(p));
  return ready ? undefined : `no endpoints available for service "${name}"`;
}

/**
 * Runs the admission webhooks matching `a` as far as the emulator can: throws kube-apiserver's
 * InternalError for the first unreachable webhook with failurePolicy Fail (mutating configurations
 * first, each kind by configuration name, webhooks in order).
 */
export function admitThroughWebhooks(store: ObjectStore, a: AdmissionAttributes, equivalentVersions: readonly string[] = []): void {
  if (isExemptResource(a)) return;
  for (const gr of [MUTATING_GR, VALIDATING_GR]) {
    const configurations = [...store.list(gr, '')].sort((x, y) => (x.metadata.name < y.metadata.name ? -1 : x.metadata.name > y.metadata.name ? 1 : 0));
    for (const configuration of configurations) {
      for (const webhook of asArray(configuration.webhooks)) {
        if (!isJsonObject(webhook) || !webhookMatches(webhook, a, equivalentVersions)) continue;
        const reason = unreachableReason(store, webhook);
        if (reason === undefined || webhook.failurePolicy === 'Ignore') continue;
        const service = asObject(valueAt(webhook, ['clientConfig', 'service'])) ?? {};
        const timeout = typeof webhook.timeoutSeconds === 'number' ? webhook.timeoutSeconds : 10;
        throw internalError(
          `failed calling webhook "${textOf(webhook.name ?? '')}": failed to call webhook: Post "${webhookServiceUrl(service, timeout)}": ${reason}`,
        );
      }
    }
  }
}

/**
 * The defaults of admissionregistration/v1 (SetDefaults_ValidatingWebhook, _MutatingWebhook,
 * _Rule, _ServiceReference) and the validations a user would hit first: each webhook needs a name,
 * exactly one of clientConfig.url and clientConfig.service, sideEffects None or NoneOnDryRun and
 * admissionReviewVersions. Throws 422.
 */
export function prepareWebhookConfiguration(groupResource: string, obj: KubeObject): void {
  const kind = groupResource === MUTATING_GR ? 'MutatingWebhookConfiguration' : 'ValidatingWebhookConfiguration';
  const errs: FieldError[] = [];
  asArray(obj.webhooks).forEach((w, i) => {
    const at = `webhooks[${i}]`;
    if (!isJsonObject(w)) return;
    if (!w.name) errs.push(requiredValue(`${at}.name`));
    w.failurePolicy ??= 'Fail';
    w.matchPolicy ??= 'Equivalent';
    w.namespaceSelector ??= {};
    w.objectSelector ??= {};
    w.timeoutSeconds ??= 10;
    if (groupResource === MUTATING_GR) w.reinvocationPolicy ??= 'Never';
    for (const r of asArray(w.rules)) if (isJsonObject(r)) r.scope ??= '*';
    const clientConfig = asObject(w.clientConfig);
    const service = asObject(clientConfig?.service);
    if (service) service.port ??= 443;
    if (!clientConfig || (!service && !clientConfig.url) || (service && clientConfig.url)) {
      errs.push({ type: 'FieldValueRequired', field: `${at}.clientConfig`, text: 'Required value: exactly one of url or service is required' });
    }
    if (w.sideEffects === undefined || w.sideEffects === null) errs.push(requiredValue(`${at}.sideEffects`));
    else if (w.sideEffects !== 'None' && w.sideEffects !== 'NoneOnDryRun') {
      errs.push(notSupported(`${at}.sideEffects`, w.sideEffects, ['None', 'NoneOnDryRun']));
    }
    if (asArray(w.admissionReviewVersions).length === 0) errs.push(requiredValue(`${at}.admissionReviewVersions`));
  });
  if (errs.length) throw invalid(ADMISSION_GROUP, kind, obj.metadata.name, errs);
}
