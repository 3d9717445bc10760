/**
 * admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding:
 * their server defaults and write validation, and the admission of every other write through them,
 * with the same CEL evaluator as the CRD validation rules (cel-environment.ts).
 *
 * Admission (k8s.io/apiserver/pkg/admission/plugin/policy/validating/dispatcher.go, validator.go,
 * .../policy/matching/matching.go, .../webhook/predicates/{namespace,object,rules}):
 * - a policy does something only through a binding (`spec.policyName`); policies by name, each
 *   policy's bindings by name;
 * - matching: the policy's matchConstraints, then the binding's matchResources (which narrows;
 *   empty resourceRules there match what the policy matches): namespaceSelector (cluster-scoped
 *   resources other than namespaces always match; a Namespace is matched by its own labels),
 *   objectSelector (the new object's labels OR the old object's, so an update that removes the
 *   labels and a delete are both caught; a missing object never matches), excludeResourceRules,
 *   resourceRules with resourceNames, matchPolicy Equivalent through the other served versions;
 * - matchConditions: any false → the binding does not apply; an error (with no false) → the
 *   failurePolicy decides (Fail: denied with the error, Ignore: not applied);
 * - CEL variables `object` (null on DELETE), `oldObject` (null on CREATE), `request` (the
 *   admission.k8s.io/v1 AdmissionRequest as unstructured JSON: kind, resource, subResource,
 *   requestKind, requestResource, name, namespace, operation, userInfo{username, uid, groups,
 *   extra}, dryRun, options; empty optional fields omitted as Go's omitempty does),
 *   `namespaceObject` (null for cluster-scoped), `variables` (spec.variables, in order, each seeing
 *   the earlier ones), `params` (always null);
 * - a validation that is not `true` is a failure: reason (default Invalid), message from
 *   messageExpression (a one-line string), else message, else `failed expression: <expr>`; an
 *   evaluation error is `expression '<expr>' resulted in error: <err>` and follows failurePolicy;
 * - binding validationActions: Deny → the first denial is returned as
 *   `<resource> "<name>" is forbidden: ValidatingAdmissionPolicy '<p>' with binding '<b>' denied
 *   request: <message>` with the decision's reason and its code (Forbidden 403, Invalid 422,
 *   Unauthorized 401, RequestEntityTooLarge 413) and `details.causes: [{message}]`; Warn → a
 *   `Validation failed for ValidatingAdmissionPolicy '<p>' with binding '<b>': <message>` warning;
 *   Audit → nothing the client sees;
 * - writes of the admission configuration kinds themselves are exempt.
 *
 * Caveats: `paramKind` is accepted on write but a binding of such a policy denies (failurePolicy
 * Fail) with "failed to configure binding: … paramKind …", as no params are looked up; no
 * `authorizer` variable; no type checking (status.typeChecking stays empty) and no CEL cost
 * budget; variables are evaluated eagerly, so a failing variable is absent from `variables`
 * (referencing it fails with "no such key") rather than failing with its own error; `request.options`
 * is the bare Create/Update/DeleteOptions kind; auditAnnotations are validated but not published.
 */
import { ADMISSION_GROUP, ruleMatches, type AdmissionAttributes } from './admission-webhooks.js';
import { celValueOf, compileCel, jsonOfCel, type CelBindings, type CompiledCel } from './cel-environment.js';
import { ApiError, invalid, invalidValue, notSupported, requiredValue, type FieldError, type StatusDetails } from './errors.js';
import { asArray, asObject, isJsonObject, textOf, type JsonObject, type JsonValue } from './json-clone.js';
import { validateName } from './object-meta-validation.js';
import type { ObjectStore } from './object-store.js';
import type { UserInfo } from './rbac-authorizer.js';
import type { KubeObject } from './resource-types.js';
import { labelSelectorFromObject, matchesLabels, parseFieldSelector, parseLabelSelector } from './selectors.js';
import type { ApiOperations, Scope, WriteOptions } from './api-operations.js';

export const POLICIES_RESOURCE = 'validatingadmissionpolicies';
export const BINDINGS_RESOURCE = 'validatingadmissionpolicybindings';
export const POLICY_GR = `${ADMISSION_GROUP}/${POLICIES_RESOURCE}`;
export const BINDING_GR = `${ADMISSION_GROUP}/${BINDINGS_RESOURCE}`;

/** IsExemptAdmissionConfigurationResource (k8s.io/apiserver/pkg/admission/plugin/policy/generic). */
const EXEMPT_RESOURCES = new Set([
  'validatingwebhookconfigurations',
  'mutatingwebhookconfigurations',
  POLICIES_RESOURCE,
  BINDINGS_RESOURCE,
  'mutatingadmissionpolicies',
  'mutatingadmissionpolicybindings',
]);

/** One write as the policies see it. */
export interface PolicyAdmissionRequest extends AdmissionAttributes {
  /** the object's name ('' for a create whose name is generated) */
  name: string;
  kind: string;
  /** the object as it would be stored (undefined on DELETE) */
  object: KubeObject | undefined;
  /** the stored object (undefined on CREATE) */
  oldObject: KubeObject | undefined;
  user: UserInfo;
  dryRun: boolean;
  /** the other served versions of the same group resource (matchPolicy Equivalent) */
  equivalentVersions?: readonly string[];
}

const FAILURE_POLICIES = ['Fail', 'Ignore'];
const MATCH_POLICIES = ['Equivalent', 'Exact'];
const OPERATIONS = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'];
const VALIDATION_ACTIONS = ['Audit', 'Deny', 'Warn'];
const VALIDATION_REASONS = ['Forbidden', 'Invalid', 'RequestEntityTooLarge', 'Unauthorized'];
const CEL_IDENTIFIER = /^[_a-zA-Z][_a-zA-Z0-9]*$/;
const CEL_RESERVED = new Set(
  'true false null in as break const continue else for function if import let loop package namespace return var void while'.split(' '),
);

/** Status codes of the reasons a validation may give (policy_decision.go reasonToCode). */
function codeOfReason(reason: string): number {
  if (reason === 'Forbidden') return 403;
  if (reason === 'Unauthorized') return 401;
  if (reason === 'RequestEntityTooLarge') return 413;
  return 422;
}

// ---------------------------------------------------------------- writes of the policy kinds

const compiled = new Map<string, CompiledCel | { compileError: string }>();

function compileCached(source: string): CompiledCel | { compileError: string } {
  let c = compiled.get(source);
  if (!c) {
    c = compileCel(source);
    if (compiled.size > 2000) compiled.clear();
    compiled.set(source, c);
  }
  return c;
}

/** An expression field: required, and it must compile (convertCELErrorToValidationError's Invalid). */
function validateExpression(value: JsonValue | undefined, field: string, requiredDetail: string, errs: FieldError[]): void {
  const text = typeof value === 'string' ? value : '';
  if (text.trim() === '') {
    errs.push(requiredValue(field, requiredDetail));
    return;
  }
  const c = compileCached(text);
  if ('compileError' in c) errs.push(invalidValue(field, text, `compilation failed: ERROR: ${c.compileError}`));
}

/** SetDefaults_MatchResources: matchPolicy Equivalent, empty selectors, rule scope `*`. */
function defaultMatchResources(mr: JsonObject): void {
  mr.matchPolicy ??= 'Equivalent';
  mr.namespaceSelector ??= {};
  mr.objectSelector ??= {};
  for (const r of [...asArray(mr.resourceRules), ...asArray(mr.excludeResourceRules)]) if (isJsonObject(r)) r.scope ??= '*';
}

/** validateMatchResources and validateNamedRuleWithOperations, for the fields a user gets wrong. */
function validateMatchResources(mr: JsonObject, at: string, errs: FieldError[]): void {
  if (!MATCH_POLICIES.includes(textOf(mr.matchPolicy))) errs.push(notSupported(`${at}.matchPolicy`, mr.matchPolicy, MATCH_POLICIES));
  for (const list of ['resourceRules', 'excludeResourceRules']) {
    asArray(mr[list]).forEach((rule, i) => {
      const r = asObject(rule) ?? {};
      const ruleAt = `${at}.${list}[${i}]`;
      const operations = asArray(r.operations);
      if (operations.length === 0) errs.push(requiredValue(`${ruleAt}.operations`));
      operations.forEach((op, j) => {
        if (!OPERATIONS.includes(textOf(op))) errs.push(notSupported(`${ruleAt}.operations[${j}]`, op, OPERATIONS));
      });
      for (const f of ['apiGroups', 'apiVersions', 'resources']) if (asArray(r[f]).length === 0) errs.push(requiredValue(`${ruleAt}.${f}`));
    });
  }
}

/** A Go `%#v` of a []ValidationAction, as field.Invalid renders it. */
function renderActions(actions: JsonValue[]): string {
  return `[]admissionregistration.ValidationAction{${actions.map((a) => JSON.stringify(textOf(a))).join(', ')}}`;
}

/**
 * The registry strategy of ValidatingAdmissionPolicy (pkg/registry/admissionregistration/
 * validatingadmissionpolicy/strategy.go) with SetDefaults_ValidatingAdmissionPolicySpec and
 * ValidateValidatingAdmissionPolicy (pkg/apis/admissionregistration/validation/validation.go):
 * failurePolicy, matchConstraints (required, with resourceRules), matchConditions, variables,
 * validations (expression, messageExpression, message, reason). Throws 422.
 */
export function prepareValidatingAdmissionPolicy(obj: KubeObject, old: KubeObject | undefined): void {
  const spec = asObject((obj.spec ??= {})) ?? {};
  if (!old) obj.status = {};
  spec.failurePolicy ??= 'Fail';
  const mc = asObject(spec.matchConstraints);
  if (mc) defaultMatchResources(mc);
  const errs: FieldError[] = [];
  if (!FAILURE_POLICIES.includes(textOf(spec.failurePolicy))) errs.push(notSupported('spec.failurePolicy', spec.failurePolicy, FAILURE_POLICIES));
  const paramKind = asObject(spec.paramKind);
  if (paramKind) {
    if (!paramKind.apiVersion) errs.push(requiredValue('spec.paramKind.apiVersion'));
    if (!paramKind.kind) errs.push(requiredValue('spec.paramKind.kind'));
  }
  if (!mc) errs.push(requiredValue('spec.matchConstraints'));
  else {
    validateMatchResources(mc, 'spec.matchConstraints', errs);
    if (asArray(mc.resourceRules).length === 0) errs.push(requiredValue('spec.matchConstraints.resourceRules'));
  }
  const conditionNames = new Set<string>();
  asArray(spec.matchConditions).forEach((c, i) => {
    const at = `spec.matchConditions[${i}]`;
    const condition = asObject(c) ?? {};
    validateExpression(condition.expression, `${at}.expression`, '', errs);
    const name = textOf(condition.name ?? '');
    if (!name) errs.push(requiredValue(`${at}.name`));
    else if (conditionNames.has(name)) errs.push({ type: 'FieldValueDuplicate', field: `${at}.name`, text: `Duplicate value: ${JSON.stringify(name)}` });
    conditionNames.add(name);
  });
  asArray(spec.variables).forEach((v, i) => {
    const at = `spec.variables[${i}]`;
    const variable = asObject(v) ?? {};
    const name = textOf(variable.name ?? '');
    if (name.trim() === '') errs.push(requiredValue(`${at}.name`, 'name is not specified'));
    else if (!CEL_IDENTIFIER.test(name) || CEL_RESERVED.has(name)) errs.push(invalidValue(`${at}.name`, name, 'name is not a valid CEL identifier'));
    validateExpression(variable.expression, `${at}.expression`, 'expression is not specified', errs);
  });
  const validations = asArray(spec.validations);
  if (validations.length === 0 && asArray(spec.auditAnnotations).length === 0) {
    errs.push(requiredValue('spec.validations', 'validations or auditAnnotations must contain at least one item'));
    errs.push(requiredValue('spec.auditAnnotations', 'validations or auditAnnotations must contain at least one item'));
  }
  validations.forEach((v, i) => {
    const at = `spec.validations[${i}]`;
    const validation = asObject(v) ?? {};
    validateExpression(validation.expression, `${at}.expression`, 'expression is not specified', errs);
    const messageExpression = validation.messageExpression;
    if (typeof messageExpression === 'string' && messageExpression !== '') {
      if (messageExpression.trim() === '') errs.push(invalidValue(`${at}.messageExpression`, messageExpression, 'must be non-empty if specified'));
      else validateExpression(messageExpression, `${at}.messageExpression`, '', errs);
    }
    const message = validation.message;
    if (typeof message === 'string' && message !== '') {
      if (message.trim() === '') errs.push(invalidValue(`${at}.message`, message, 'message must be non-empty if specified'));
      else if (/[\n\r]/.test(message.trim())) errs.push(invalidValue(`${at}.message`, message, 'message must not contain line breaks'));
    }
    if (validation.reason !== undefined && validation.reason !== null && !VALIDATION_REASONS.includes(textOf(validation.reason))) {
      errs.push(notSupported(`${at}.reason`, validation.reason, VALIDATION_REASONS));
    }
  });
  asArray(spec.auditAnnotations).forEach((a, i) => {
    const annotation = asObject(a) ?? {};
    validateExpression(annotation.valueExpression, `spec.auditAnnotations[${i}].valueExpression`, 'valueExpression is not specified', errs);
  });
  if (errs.length) throw invalid(ADMISSION_GROUP, 'ValidatingAdmissionPolicy', obj.metadata.name, errs);
}

/**
 * The registry strategy of ValidatingAdmissionPolicyBinding with its defaults and
 * validateValidatingAdmissionPolicyBindingSpec: policyName (required, a DNS subdomain),
 * validationActions (required, supported, no duplicates, not both Deny and Warn), matchResources.
 * Throws 422.
 */
export function prepareValidatingAdmissionPolicyBinding(obj: KubeObject): void {
  const spec = asObject((obj.spec ??= {})) ?? {};
  const mr = asObject(spec.matchResources);
  if (mr) defaultMatchResources(mr);
  const errs: FieldError[] = [];
  const policyName = textOf(spec.policyName ?? '');
  if (!policyName) errs.push(requiredValue('spec.policyName'));
  else errs.push(...validateName(policyName, 'subdomain', 'spec.policyName'));
  const paramRef = asObject(spec.paramRef);
  if (paramRef) {
    if (!paramRef.name && !paramRef.selector) errs.push(requiredValue('spec.paramRef', 'one of name or selector must be specified'));
    if (!paramRef.parameterNotFoundAction) errs.push(requiredValue('spec.paramRef.parameterNotFoundAction'));
  }
  if (mr) validateMatchResources(mr, 'spec.matchResources', errs);
  const actions = asArray(spec.validationActions);
  const seen = new Set<string>();
  actions.forEach((action, i) => {
    const a = textOf(action);
    if (!VALIDATION_ACTIONS.includes(a)) errs.push(notSupported(`spec.validationActions[${i}]`, action, VALIDATION_ACTIONS));
    if (seen.has(a)) errs.push({ type: 'FieldValueDuplicate', field: `spec.validationActions[${i}]`, text: `Duplicate value: ${JSON.stringify(a)}` });
    seen.add(a);
  });
  if (seen.has('Deny') && seen.has('Warn')) {
    errs.push({
      type: 'FieldValueInvalid',
      field: 'spec.validationActions',
      text: `Invalid value: ${renderActions(actions)}: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)`,
    });
  }
  if (seen.size === 0) errs.push(requiredValue('spec.validationActions', 'at least one validation action is required'));
  if (errs.length) throw invalid(ADMISSION_GROUP, 'ValidatingAdmissionPolicyBinding', obj.metadata.name, errs);
}

// ---------------------------------------------------------------- matching

function labelsOf(obj: KubeObject | undefined): JsonObject | undefined {
  return obj ? (asObject(obj.metadata.labels ?? undefined) ?? {}) : undefined;
}

function selectorMatches(selector: JsonValue | undefined, labels: JsonObject | undefined): boolean {
  return labels !== undefined && matchesLabels(labelSelectorFromObject(asObject(selector)), labels);
}

function isEmptySelector(selector: JsonValue | undefined): boolean {
  const s = asObject(selector);
  return !s || (Object.keys(asObject(s.matchLabels) ?? {}).length === 0 && asArray(s.matchExpressions).length === 0);
}

/** A NamedRuleWithOperations list against the request (matching.go matchesResourceRules). */
function rulesMatch(rules: JsonValue[], matchPolicy: JsonValue | undefined, req: PolicyAdmissionRequest): boolean {
  const named = (rule: JsonValue, version: string): boolean => {
    if (!ruleMatches(rule, req, version)) return false;
    const names = asArray(asObject(rule)?.resourceNames).map(textOf);
    return names.length === 0 || names.includes(req.name);
  };
  if (rules.some((r) => named(r, req.version))) return true;
  if (matchPolicy === 'Exact') return false;
  return (req.equivalentVersions ?? []).some((v) => v !== req.version && rules.some((r) => named(r, v)));
}

/** Matcher.Matches of policy/matching: namespace and object selectors, exclusions, then the rules. */
function matchResourcesMatch(store: ObjectStore, mr: JsonObject, req: PolicyAdmissionRequest, allWhenNoRules: boolean): boolean {
  if (!isEmptySelector(mr.namespaceSelector)) {
    let labels: JsonObject | undefined;
    if (req.group === '' && req.resource === 'namespaces') labels = labelsOf(req.object ?? req.oldObject);
    else if (req.namespace !== '') labels = labelsOf(store.get('/namespaces', '', req.namespace)) ?? {};
    if (labels !== undefined && !selectorMatches(mr.namespaceSelector, labels)) return false;
  }
  if (!isEmptySelector(mr.objectSelector)) {
    if (!selectorMatches(mr.objectSelector, labelsOf(req.object)) && !selectorMatches(mr.objectSelector, labelsOf(req.oldObject))) return false;
  }
  if (rulesMatch(asArray(mr.excludeResourceRules), mr.matchPolicy, req)) return false;
  const rules = asArray(mr.resourceRules);
  if (rules.length === 0) return allWhenNoRules;
  return rulesMatch(rules, mr.matchPolicy, req);
}

// ---------------------------------------------------------------- evaluation

function omitEmpty(obj: JsonObject): JsonObject {
  for (const [k, v] of Object.entries(obj)) {
    if (v === undefined || v === '' || (Array.isArray(v) && v.length === 0) || (isJsonObject(v) && Object.keys(v).length === 0)) delete obj[k];
  }
  return obj;
}

const OPTIONS_KIND: Record<string, string> = { CREATE: 'CreateOptions', UPDATE: 'UpdateOptions', DELETE: 'DeleteOptions', CONNECT: 'ConnectOptions' };

/** cel.CreateAdmissionRequest as unstructured JSON (omitempty fields dropped when empty). */
function admissionRequestJson(req: PolicyAdmissionRequest): JsonObject {
  const kind = { group: req.group, version: req.version, kind: req.kind };
  const resource = { group: req.group, version: req.version, resource: req.resource };
  const userInfo = omitEmpty({
    username: req.user.name,
    uid: req.user.uid ?? '',
    groups: [...req.user.groups],
    extra: Object.fromEntries(Object.entries(req.user.extra ?? {}).map(([k, v]) => [k, [...v]])),
  });
  return omitEmpty({
    uid: '',
    kind,
    resource,
    subResource: req.subresource,
    requestKind: kind,
    requestResource: resource,
    requestSubResource: req.subresource,
    name: req.name,
    namespace: req.namespace,
    operation: req.operation,
    userInfo,
    dryRun: req.dryRun,
    options: { kind: OPTIONS_KIND[req.operation] ?? '', apiVersion: 'meta.k8s.io/v1' },
  });
}

/** cel.CreateNamespaceObject: the namespace's spec, status and a subset of its metadata. */
function namespaceObjectJson(ns: KubeObject | undefined): JsonObject | null {
  if (!ns) return null;
  const m = ns.metadata;
  const metadata: JsonObject = {};
  for (const k of [
    'name',
    'generateName',
    'uid',
    'resourceVersion',
    'generation',
    'creationTimestamp',
    'deletionTimestamp',
    'labels',
    'annotations',
    'finalizers',
  ]) {
    const v = m[k];
    if (v !== undefined && v !== null) metadata[k] = v;
  }
  const out: JsonObject = { metadata };
  if (ns.spec !== undefined) out.spec = ns.spec;
  if (ns.status !== undefined) out.status = ns.status;
  return out;
}

type Evaluation = { value: JsonValue } | { error: string };

function evaluate(source: string, bindings: CelBindings): Evaluation {
  const c = compileCached(source);
  if ('compileError' in c) return { error: `compilation error: compilation failed: ERROR: ${c.compileError}` };
  const outcome = c.evaluate(bindings);
  // cel-go names a missing map key `no such key: k` where @bufbuild/cel says `field not found: k`
  if ('error' in outcome) return { error: `expression '${source}' resulted in error: ${outcome.error.replace(/^field not found: /, 'no such key: ')}` };
  return { value: jsonOfCel(outcome.value) };
}

interface Decision {
  message: string;
  reason: string;
}

/** The failing validations of one binding (validator.go Validate), or a matchConditions/configuration error. */
function decisionsOf(policy: KubeObject, store: ObjectStore, req: PolicyAdmissionRequest): Decision[] {
  const spec = asObject(policy.spec) ?? {};
  const failClosed = spec.failurePolicy !== 'Ignore';
  if (spec.paramKind) {
    if (!failClosed) return [];
    const pk = asObject(spec.paramKind) ?? {};
    return [
      {
        message: `failed to configure binding: the development cluster does not look up params (spec.paramKind ${textOf(pk.apiVersion ?? '')}/${textOf(pk.kind ?? '')}); use a policy without paramKind`,
        reason: 'Invalid',
      },
    ];
  }
  const isNamespace = req.group === '' && req.resource === 'namespaces';
  const variables = new Map<string, ReturnType<typeof celValueOf>>();
  const bindings: CelBindings = {
    object: celValueOf(req.object),
    oldObject: celValueOf(req.oldObject),
    request: celValueOf(admissionRequestJson(req)),
    namespaceObject: celValueOf(isNamespace || !req.namespace ? null : namespaceObjectJson(store.get('/namespaces', '', req.namespace))),
    params: null,
    variables,
  };
  const conditionErrors: string[] = [];
  for (const c of asArray(spec.matchConditions)) {
    const result = evaluate(textOf(asObject(c)?.expression ?? ''), bindings);
    if ('error' in result) conditionErrors.push(result.error);
    else if (result.value === false) return [];
  }
  if (conditionErrors.length) {
    if (!failClosed) return [];
    return [{ message: conditionErrors.length === 1 ? conditionErrors[0] : `[${conditionErrors.join(', ')}]`, reason: 'Invalid' }];
  }
  for (const v of asArray(spec.variables)) {
    const variable = asObject(v) ?? {};
    const result = evaluate(textOf(variable.expression ?? ''), bindings);
    if ('value' in result) variables.set(textOf(variable.name ?? ''), celValueOf(result.value));
  }
  const decisions: Decision[] = [];
  for (const v of asArray(spec.validations)) {
    const validation = asObject(v) ?? {};
    const expression = textOf(validation.expression ?? '');
    const result = evaluate(expression, bindings);
    if ('error' in result) {
      if (failClosed) decisions.push({ message: result.error, reason: 'Invalid' });
      continue;
    }
    if (result.value === true) continue;
    let message = '';
    if (typeof validation.messageExpression === 'string' && validation.messageExpression.trim() !== '') {
      const m = evaluate(validation.messageExpression, bindings);
      if ('value' in m && typeof m.value === 'string' && !m.value.includes('\n')) message = m.value.trim();
    }
    if (!message && typeof validation.message === 'string') message = validation.message.trim();
    if (!message) message = `failed expression: ${expression.trim()}`;
    decisions.push({ message, reason: typeof validation.reason === 'string' && validation.reason ? validation.reason : 'Invalid' });
  }
  return decisions;
}

/** The denial of a write (dispatcher.go): admission.NewForbidden's message with the decision's reason and code. */
class PolicyDenial extends ApiError {
  constructor(
    code: number,
    reason: string,
    message: string,
    details: StatusDetails,
    /** the cause's message: the denial without the resource prefix */
    private readonly denial: string,
  ) {
    super(code, reason, message, details);
  }

  override toStatus(): JsonObject {
    const status = super.toStatus();
    const details = asObject(status.details);
    // a StatusCause with only a message (Go's omitempty drops the empty reason and field)
    if (details) details.causes = [{ message: this.denial }];
    return status;
  }
}

function byName(a: KubeObject, b: KubeObject): number {
  return a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0;
}

/**
 * Admits one write through the stored policies and their bindings: returns the warnings of
 * bindings with the Warn action, throws the denial of the first failing validation of a binding
 * with the Deny action.
 */
export function admitThroughPolicies(store: ObjectStore, req: PolicyAdmissionRequest): string[] {
  if (req.group === ADMISSION_GROUP && EXEMPT_RESOURCES.has(req.resource)) return [];
  const bindingsByPolicy = new Map<string, KubeObject[]>();
  for (const b of store.list(BINDING_GR, '')) {
    const name = textOf(asObject(b.spec)?.policyName ?? '');
    bindingsByPolicy.set(name, [...(bindingsByPolicy.get(name) ?? []), b]);
  }
  if (bindingsByPolicy.size === 0) return [];
  const warnings: string[] = [];
  let denial: { policy: string; binding: string; decision: Decision } | undefined;
  for (const policy of [...store.list(POLICY_GR, '')].sort(byName)) {
    const bindings = bindingsByPolicy.get(policy.metadata.name);
    if (!bindings) continue;
    const mc = asObject(asObject(policy.spec)?.matchConstraints);
    if (!mc || !matchResourcesMatch(store, mc, req, false)) continue;
    for (const binding of bindings.sort(byName)) {
      const spec = asObject(binding.spec) ?? {};
      const mr = asObject(spec.matchResources);
      if (mr && !matchResourcesMatch(store, mr, req, true)) continue;
      const actions = asArray(spec.validationActions).map(textOf);
      for (const decision of decisionsOf(policy, store, req)) {
        if (actions.includes('Deny')) denial ??= { policy: policy.metadata.name, binding: binding.metadata.name, decision };
        if (actions.includes('Warn')) {
          warnings.push(
            `Validation failed for ValidatingAdmissionPolicy '${policy.metadata.name}' with binding '${binding.metadata.name}': ${decision.message}`,
          );
        }
      }
    }
  }
  if (!denial) return warnings;
  const { policy, binding, decision } = denial;
  const name = req.name || req.object?.metadata.name || textOf(req.object?.metadata.generateName ?? '') || 'Unknown';
  const resource = req.group ? `${req.resource}.${req.group}` : req.resource;
  const message = `ValidatingAdmissionPolicy '${policy}' with binding '${binding}' denied request: ${decision.message}`;
  const details: StatusDetails = req.group ? { name, group: req.group, kind: req.resource } : { name, kind: req.resource };
  throw new PolicyDenial(codeOfReason(decision.reason), decision.reason, `${resource} "${name}" is forbidden: ${message}`, details, message);
}

/** One resource request of the HTTP layer, as {@link admitRequestThroughPolicies} needs it. */
export interface PolicyRequestTarget {
  method: string;
  scope: Scope;
  /** '' for a collection */
  name: string;
  subresource: string;
  user: UserInfo;
  query: URLSearchParams;
}

/**
 * Wires a write request to the policies: a create or update is admitted by ApiOperations through
 * `opts.admit` with the object as it would be stored (after defaulting and the kind's validation,
 * as the real registry calls its admission after BeforeCreate/BeforeUpdate); a delete is admitted
 * here, with each object it would delete (a deletecollection: every object its selectors match,
 * before any is deleted). Returns the array the Warn action's warnings are collected in.
 */
export function admitRequestThroughPolicies(ops: ApiOperations, target: PolicyRequestTarget, opts: WriteOptions): string[] {
  const warnings: string[] = [];
  const { store } = ops;
  const { scope, query } = target;
  const { type } = scope;
  const base = {
    group: type.group,
    version: type.version,
    resource: type.plural,
    subresource: target.subresource,
    namespace: scope.namespace,
    kind: type.kind,
    user: target.user,
    equivalentVersions: ops.registry
      .allTypes()
      .filter((t) => t.group === type.group && t.plural === type.plural)
      .map((t) => t.version),
  };
  opts.admit = (object, oldObject) => {
    const operation = oldObject ? 'UPDATE' : 'CREATE';
    warnings.push(...admitThroughPolicies(store, { ...base, operation, name: object.metadata.name, object, oldObject, dryRun: !!opts.dryRun }));
  };
  if (target.method === 'DELETE') {
    const dryRun = query.getAll('dryRun').length > 0;
    const doomed = target.name
      ? [store.get(scope.groupResource, scope.namespace, target.name)].filter((o) => o !== undefined)
      : ops.listStored(scope, parseLabelSelector(query.get('labelSelector')), parseFieldSelector(query.get('fieldSelector'), scope.groupResource), false);
    for (const stored of doomed) {
      const oldObject = ops.encode(type, stored);
      warnings.push(...admitThroughPolicies(store, { ...base, operation: 'DELETE', name: stored.metadata.name, object: undefined, oldObject, dryRun }));
    }
  }
  return warnings;
}
