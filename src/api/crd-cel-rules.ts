/**
 * The CEL validation rules (`x-kubernetes-validations`) of the FlinkDeployment and FlinkSessionJob
 * CRDs: the rules of spec-validation.ts that can be decided from the object alone, so that the API
 * server refuses such a spec at `kubectl apply`, with the field and the same message the operator
 * prints (one definition of each message: field-message.ts). Transition rules (`oldSelf`) refuse
 * the changes that are never allowed.
 *
 *   withValidationRules(openAPIV3Schema, FLINK_DEPLOYMENT_RULES)  // used by crd-generator.ts
 *
 * What stays operator-only (design/014-admission-rules.md has the table, one row per corpus file):
 * - every rule that reads `spec.flinkConfiguration`: CEL cannot read data kept by
 *   `x-kubernetes-preserve-unknown-fields` (the ValidationRule API reference: "Unknown data
 *   preserved … is not accessible in CEL expressions"), flinkConfiguration must stay free-form
 *   (nested YAML, as Apache's CRD declares it), and the operator-wide default configuration the
 *   API server cannot see may supply the key (high availability, directories, parallelism.default);
 * - the ingress template (rendered with the resource's name and namespace first);
 * - a session job's jarURI (the allowed schemes are operator configuration).
 *
 * Guarantees
 * - Every rule here has an operator-side twin in spec-validation.ts with the same message text,
 *   so a resource written before the rules existed (or on a server without them) gets the same
 *   words in status.error; the corpus test applies each document with kubectl to check it.
 * - Each rule is independent of the others' order: where the operator stops at the first problem
 *   of a field (jarURI), the rules' conditions exclude the cases an earlier rule reports.
 * Caveats
 * - Transition rules compare with the object as stored (`oldSelf`), the operator with the last
 *   reconciled spec; they differ only while an invalid change is waiting, which the API server
 *   now refuses.
 * - `savepointRedeployNonce` without `initialSavepointPath` is refused on every write, while the
 *   operator refuses it only when the nonce changes (CEL's `oldSelf` is absent on create, and the
 *   library has no optional types for `optionalOldSelf`): clearing the path while keeping an old
 *   nonce is refused at apply.
 */
import { FLINK_VERSIONS, OLDEST_SUPPORTED_FLINK_VERSION, type FlinkVersion } from './flink-deployment-spec.js';
import { celStringLiteral } from './field-message.js';
import { OLDEST_CHECKPOINT_TRIGGER_VERSION } from './periodic-snapshot-schedule.js';
import {
  CHANGE_MESSAGES,
  COUNT_MESSAGES,
  DNS_1035_LABEL_SOURCE,
  JAR_URI_MESSAGES,
  LONGEST_DERIVED_NAME_PATTERN,
  MAX_DEPLOYMENT_NAME_LENGTH,
  NAME_LIMITS,
  NAME_MESSAGES,
  nameSuggestionPattern,
  NONCE_RULES,
  OLDEST_REMOTE_JAR_VERSION,
  REMOTE_JAR_SCHEMES,
  VERSION_FACTS,
  VERSION_MESSAGES,
} from './spec-validation-messages.js';

/** One `x-kubernetes-validations` entry (apiextensions.k8s.io/v1 ValidationRule). */
export interface CelValidationRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  fieldPath?: string;
  reason?: 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
}

/** Rules placed at one schema node: `path` lists the property names from the root (`[]` = the root). */
export interface RulePlacement {
  path: readonly string[];
  rules: readonly CelValidationRule[];
}

const lit = celStringLiteral;
/** A CEL list literal of strings. */
const celList = (values: readonly string[]) => `[${values.map(lit).join(', ')}]`;
const versionsBefore = (oldest: FlinkVersion) => FLINK_VERSIONS.slice(0, FLINK_VERSIONS.indexOf(oldest));

// ---------------------------------------------------------------- metadata.name (root)

const NAME = 'self.metadata.name';
const found = `${NAME}.replace('.', '-').find(${lit(nameSuggestionPattern)})`;
const suggestion = `${found} == '' ? 'flink-job' : ${found}`;

const NAME_RULES: CelValidationRule[] = [
  {
    rule: `${NAME}.matches(${lit(DNS_1035_LABEL_SOURCE)})`,
    messageExpression: NAME_MESSAGES.notDns1035.cel({ name: NAME, suggestion }),
    fieldPath: '.metadata.name',
  },
  {
    rule: `!${NAME}.matches(${lit(DNS_1035_LABEL_SOURCE)}) || size(${NAME}) <= ${MAX_DEPLOYMENT_NAME_LENGTH}`,
    messageExpression: NAME_MESSAGES.tooLong.cel({
      max: lit(NAME_LIMITS.max),
      limit: lit(NAME_LIMITS.limit),
      length: `string(size(${NAME}))`,
      longest: LONGEST_DERIVED_NAME_PATTERN.cel(NAME),
      longestLength: `string(size(${LONGEST_DERIVED_NAME_PATTERN.cel(NAME)}))`,
    }),
    fieldPath: '.metadata.name',
  },
];

// ---------------------------------------------------------------- spec (FlinkDeployment)

const UNSUPPORTED_VERSIONS = versionsBefore(OLDEST_SUPPORTED_FLINK_VERSION);
const OLD_FOR_REMOTE_JARS = versionsBefore(OLDEST_REMOTE_JAR_VERSION).filter((v) => !UNSUPPORTED_VERSIONS.includes(v));
const OLD_FOR_CHECKPOINTS = versionsBefore(OLDEST_CHECKPOINT_TRIGGER_VERSION);
const SCHEME_OF_URI = '^([a-zA-Z][a-zA-Z0-9+.-]*)://';
const JAR = 'self.job.jarURI';
const jarScheme = (uri: string) => `${uri}.split('://')[0].lowerAscii()`;

const VERSION_RULES: CelValidationRule[] = [
  { rule: 'has(self.flinkVersion)', message: VERSION_MESSAGES.required.text({}), fieldPath: '.flinkVersion' },
  {
    rule: `!has(self.flinkVersion) || !(self.flinkVersion in ${celList(UNSUPPORTED_VERSIONS)})`,
    messageExpression: VERSION_MESSAGES.unsupported.cel({
      version: 'self.flinkVersion',
      oldest: lit(VERSION_FACTS.oldest),
      oldestText: lit(VERSION_FACTS.oldestText),
    }),
    fieldPath: '.flinkVersion',
  },
  {
    rule: `!has(self.job) || !has(${JAR}) || !has(self.flinkVersion) || !(self.flinkVersion in ${celList(OLD_FOR_REMOTE_JARS)}) || !${JAR}.matches(${lit(SCHEME_OF_URI)}) || !(${jarScheme(JAR)} in ${celList(REMOTE_JAR_SCHEMES)})`,
    messageExpression: JAR_URI_MESSAGES.remoteOnOldFlink.cel({ scheme: jarScheme(JAR), version: 'self.flinkVersion' }),
    fieldPath: '.job.jarURI',
  },
];

/** Rules at spec.job of a FlinkDeployment (self = the job). */
const JOB_RULES: CelValidationRule[] = [
  {
    rule: '!has(self.parallelism) || self.parallelism >= 1',
    messageExpression: COUNT_MESSAGES.parallelismTooLow.cel({ value: 'string(self.parallelism)' }),
    fieldPath: '.parallelism',
  },
  {
    rule: `!has(self.jarURI) || self.jarURI.matches(${lit(SCHEME_OF_URI)})`,
    messageExpression: JAR_URI_MESSAGES.noScheme.cel({
      uri: 'self.jarURI',
      hint: `self.jarURI.startsWith('/') ? ${JAR_URI_MESSAGES.absolutePathHint.cel({ uri: 'self.jarURI' })} : ${lit(JAR_URI_MESSAGES.exampleHint)}`,
    }),
    fieldPath: '.jarURI',
  },
  {
    rule: `!has(self.jarURI) || !self.jarURI.matches(${lit(SCHEME_OF_URI)}) || ${jarScheme('self.jarURI')} != 'local' || self.jarURI.substring(8).startsWith('/')`,
    messageExpression: JAR_URI_MESSAGES.localNotAbsolute.cel({ uri: 'self.jarURI', rest: 'self.jarURI.substring(8)' }),
    fieldPath: '.jarURI',
  },
  {
    rule: `!has(self.jarURI) || !self.jarURI.matches(${lit(SCHEME_OF_URI)}) || ${jarScheme('self.jarURI')} == 'local' || ${jarScheme('self.jarURI')} in ${celList(REMOTE_JAR_SCHEMES)}`,
    messageExpression: JAR_URI_MESSAGES.unsupportedScheme.cel({
      scheme: jarScheme('self.jarURI'),
      uri: 'self.jarURI',
      schemes: lit(REMOTE_JAR_SCHEMES.join(', ')),
    }),
    fieldPath: '.jarURI',
  },
  {
    rule: "!has(self.savepointRedeployNonce) || (has(self.initialSavepointPath) && self.initialSavepointPath != '')",
    message: CHANGE_MESSAGES.redeployWithoutPath.text({}),
    fieldPath: '.savepointRedeployNonce',
  },
];

const replicasRule = (component: 'jobManager' | 'taskManager'): CelValidationRule => ({
  rule: '!has(self.replicas) || self.replicas >= 1',
  messageExpression: COUNT_MESSAGES.replicasTooLow[component].cel({ value: 'string(self.replicas)' }),
  fieldPath: '.replicas',
});

/** A nonce changed in the change that suspends the job, or while it is suspended (validateJobChange). */
function nonceRules(): CelValidationRule[] {
  const suspended = "has(self.job) && has(self.job.state) && self.job.state == 'suspended'";
  const suspending = "(has(oldSelf.job) && has(oldSelf.job.state) ? oldSelf.job.state : 'running') != 'suspended'";
  return NONCE_RULES.map(({ field, what }) => {
    const inJob = field.startsWith('job.');
    const now = `self.${field}`;
    const before = `oldSelf.${field}`;
    const parentNow = inJob ? 'has(self.job) && ' : '';
    const beforeGuard = inJob ? `has(oldSelf.job) && has(${before})` : `has(${before})`;
    const isChanged = `(${parentNow}has(${now}) && (!(${beforeGuard}) || ${now} != ${before}))`;
    return {
      rule: `!(${suspended}) || !${isChanged}`,
      messageExpression: `${suspending} ? ${CHANGE_MESSAGES.whileSuspending.cel({ what: lit(what), field: lit(field) })} : ${CHANGE_MESSAGES.whileSuspended.cel({ what: lit(what), field: lit(field) })}`,
      fieldPath: `.${field}`,
      reason: 'FieldValueForbidden',
    };
  });
}

/** Changes of a FlinkDeployment that are never allowed (the operator's validateChange). */
const CHANGE_RULES: CelValidationRule[] = [
  {
    rule: 'has(oldSelf.job) == has(self.job)',
    messageExpression: `has(oldSelf.job) ? ${lit(CHANGE_MESSAGES.jobRemoved.text({}))} : ${lit(CHANGE_MESSAGES.jobAdded.text({}))}`,
    fieldPath: '.job',
    reason: 'FieldValueForbidden',
  },
  {
    rule: "(has(oldSelf.mode) ? oldSelf.mode : 'native') == (has(self.mode) ? self.mode : 'native')",
    messageExpression: CHANGE_MESSAGES.modeChanged.cel({
      from: "has(oldSelf.mode) ? oldSelf.mode : 'native'",
      to: "has(self.mode) ? self.mode : 'native'",
    }),
    fieldPath: '.mode',
    reason: 'FieldValueForbidden',
  },
  ...nonceRules(),
  {
    rule: `!has(self.flinkVersion) || !(self.flinkVersion in ${celList(OLD_FOR_CHECKPOINTS)}) || !(has(self.job) && has(self.job.checkpointTriggerNonce) && (!(has(oldSelf.job) && has(oldSelf.job.checkpointTriggerNonce)) || self.job.checkpointTriggerNonce != oldSelf.job.checkpointTriggerNonce))`,
    messageExpression: CHANGE_MESSAGES.checkpointOnOldFlink.cel({ version: 'self.flinkVersion' }),
    fieldPath: '.job.checkpointTriggerNonce',
    reason: 'FieldValueForbidden',
  },
];

/** Where the FlinkDeployment rules go, in both served versions (the spec is the same in v1 and v1beta1). */
export const FLINK_DEPLOYMENT_RULES: readonly RulePlacement[] = [
  { path: [], rules: NAME_RULES },
  { path: ['spec'], rules: [...VERSION_RULES, ...CHANGE_RULES] },
  { path: ['spec', 'job'], rules: JOB_RULES },
  { path: ['spec', 'jobManager'], rules: [replicasRule('jobManager')] },
  { path: ['spec', 'taskManager'], rules: [replicasRule('taskManager')] },
];

/** The FlinkSessionJob rules: the job rules a session job shares with a FlinkDeployment (validateJobChange, parallelism). */
export const FLINK_SESSION_JOB_RULES: readonly RulePlacement[] = [
  { path: ['spec'], rules: nonceRules() },
  { path: ['spec', 'job'], rules: [JOB_RULES[0], JOB_RULES[JOB_RULES.length - 1]] },
];

/**
 * A copy of `openAPIV3Schema` with each placement's rules as the `x-kubernetes-validations` of its
 * node. Throws when a placement names a property the schema does not declare (a renamed field).
 */
export function withValidationRules(openAPIV3Schema: Record<string, unknown>, placements: readonly RulePlacement[]): Record<string, unknown> {
  const copy = structuredClone(openAPIV3Schema);
  for (const { path, rules } of placements) {
    let node: Record<string, unknown> = copy;
    for (const key of path) {
      const properties = node.properties as Record<string, Record<string, unknown>> | undefined;
      const next = properties?.[key];
      if (!next) throw new Error(`CEL rules placed at ${path.join('.')}: the schema has no property ${key}`);
      node = next;
    }
    node['x-kubernetes-validations'] = rules.map((r) => ({ ...r }));
  }
  return copy;
}
