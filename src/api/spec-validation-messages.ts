/**
 * The messages of the FlinkDeployment rules that both the operator (spec-validation.ts) and the
 * API server (the CRD's CEL rules, crd-cel-rules.ts) check, each defined once (field-message.ts)
 * with the facts it names (versions, schemes, name limits).
 *
 * Guarantees: the operator's text of a message and the CEL rule's messageExpression render the
 * same words for the same values; the invalid-spec corpus (test/api/invalid-specs/) pins them.
 */
import { MAX_DERIVED_NAME_LENGTH } from './flink-deployment.js';
import { OLDEST_SUPPORTED_FLINK_VERSION, type FlinkVersion } from './flink-deployment-spec.js';
import { celStringLiteral, fieldMessage } from './field-message.js';

/**
 * Every name derived from a FlinkDeployment's name (`%s` = the name): the JobManager Deployment and
 * internal Service (`%s`), the REST Service, the TaskManager Deployment, Flink's configuration
 * ConfigMap, the operator state ConfigMap, and the `app=%s` label value.
 */
export const DERIVED_NAME_PATTERNS = ['%s', '%s-rest', '%s-taskmanager', 'flink-config-%s', '%s-operator-state'] as const;
/** The longest FlinkDeployment name whose derived names all fit {@link MAX_DERIVED_NAME_LENGTH}. */
export const MAX_DEPLOYMENT_NAME_LENGTH = MAX_DERIVED_NAME_LENGTH - Math.max(...DERIVED_NAME_PATTERNS.map((p) => p.length - 2));

const LONGEST_PATTERN = [...DERIVED_NAME_PATTERNS].sort((a, b) => b.length - a.length)[0];
/** The longest derived name of a name, as text and as a CEL expression. */
export const LONGEST_DERIVED_NAME_PATTERN = {
  text: (name: string) => LONGEST_PATTERN.replace('%s', name),
  cel: (name: string) => {
    const [before, after] = LONGEST_PATTERN.split('%s');
    return [before ? celStringLiteral(before) : '', name, after ? celStringLiteral(after) : ''].filter(Boolean).join(' + ');
  },
};

/** A DNS-1035 label (what a FlinkDeployment name must be: its name is also a Service name). */
export const DNS_1035_LABEL_SOURCE = '^[a-z]([-a-z0-9]*[a-z0-9])?$';
export const DNS_1035_LABEL = new RegExp(DNS_1035_LABEL_SOURCE);
/**
 * The part of a cleaned-up name kept as the suggested name: from the first letter, at most the
 * longest allowed name, ending with a letter or digit.
 */
export const nameSuggestionPattern = `[a-z]([-a-z0-9]{0,${MAX_DEPLOYMENT_NAME_LENGTH - 2}}[a-z0-9])?`;

/**
 * The name suggested for an invalid one: lower-cased, every character other than a letter, digit
 * or '-' replaced by '-', then {@link nameSuggestionPattern}'s first match, else `flink-job` (the
 * CEL rule computes the same for the names the API server lets reach it: DNS-1123 subdomains,
 * whose only such character is '.').
 */
export function suggestName(name: string): string {
  const found = new RegExp(nameSuggestionPattern).exec(name.toLowerCase().replace(/[^a-z0-9-]/g, '-'))?.[0] ?? '';
  return found === '' ? 'flink-job' : found;
}

export const NAME_MESSAGES = {
  required: fieldMessage`is required; give the FlinkDeployment a name`,
  notDns1035: fieldMessage`must start with a lower-case letter and contain only lower-case letters, digits and '-' (not ending with '-'), got "${'name'}"; rename it, e.g. "${'suggestion'}"`,
  tooLong: fieldMessage`is ${'length'} characters; at most ${'max'} fit, because derived names such as "${'longest'}" (${'longestLength'}) must fit ${'limit'}; use a shorter name`,
};
/** The fixed values of {@link NAME_MESSAGES}.tooLong. */
export const NAME_LIMITS = { max: String(MAX_DEPLOYMENT_NAME_LENGTH), limit: String(MAX_DERIVED_NAME_LENGTH) };

const oldestText = OLDEST_SUPPORTED_FLINK_VERSION.slice(1).replace('_', '.');
export const VERSION_MESSAGES = {
  required: fieldMessage`is required; set it to the Flink version of the image, e.g. v1_20 or v2_2`,
  unsupported: fieldMessage`${'version'} is not supported (the oldest supported is ${'oldest'}); move the job to a Flink ${'oldestText'} or newer image and set flinkVersion accordingly`,
};
export const VERSION_FACTS = { oldest: OLDEST_SUPPORTED_FLINK_VERSION, oldestText };

/** Schemes Flink can fetch a job jar from (artifact fetching, Flink >= 1.19), besides `local`. */
export const REMOTE_JAR_SCHEMES = ['http', 'https', 's3', 's3a', 's3p', 'gs', 'hdfs', 'abfs', 'abfss', 'wasb', 'wasbs', 'oss', 'file'] as const;
export const OLDEST_REMOTE_JAR_VERSION: FlinkVersion = 'v1_19';

export const JAR_URI_MESSAGES = {
  noScheme: fieldMessage`must be an absolute URI with a scheme, got "${'uri'}"${'hint'}`,
  absolutePathHint: fieldMessage`; for a jar inside the image write local://${'uri'}`,
  exampleHint: '; write e.g. local:///opt/flink/usrlib/job.jar',
  localNotAbsolute: fieldMessage`local:// needs an absolute path, got "${'uri'}"; write local:///${'rest'}`,
  unsupportedScheme: fieldMessage`scheme "${'scheme'}" is not supported, got "${'uri'}"; use local:// for a jar in the image, or one of ${'schemes'}`,
  remoteOnOldFlink: fieldMessage`fetching a jar from ${'scheme'}:// needs Flink 1.19 or newer (flinkVersion is ${'version'}); put the jar in the image and use local://, or upgrade Flink`,
};

export const COUNT_MESSAGES = {
  parallelismTooLow: fieldMessage`must be at least 1, got ${'value'}; set it to 1 or more`,
  replicasTooLow: {
    jobManager: fieldMessage`must be at least 1, got ${'value'}; set it to 1 or more`,
    taskManager: fieldMessage`must be at least 1, got ${'value'}; set it to 1 or more, or suspend the job with job.state: suspended`,
  },
};

/** The nonces that ask for an action, with the action (spec field relative to `spec`). */
export const NONCE_RULES = [
  { field: 'restartNonce', what: 'a restart' },
  { field: 'job.savepointTriggerNonce', what: 'a manual savepoint' },
  { field: 'job.checkpointTriggerNonce', what: 'a manual checkpoint' },
  { field: 'job.savepointRedeployNonce', what: 'a redeploy from savepoint' },
] as const;

export const CHANGE_MESSAGES = {
  redeployWithoutPath: fieldMessage`redeploys from job.initialSavepointPath, which is not set; set initialSavepointPath to the savepoint to start from`,
  whileSuspending: fieldMessage`asks for ${'what'} in the same change that suspends the job (job.state: suspended); make them separate changes: revert ${'field'} now and change it after the job is running again, or keep the job running`,
  whileSuspended: fieldMessage`asks for ${'what'} while the job is suspended; set job.state: running in the same change, or revert ${'field'}`,
  jobRemoved: fieldMessage`was removed, which would turn an application cluster into a session cluster; that is not supported: restore spec.job, or delete and recreate the FlinkDeployment`,
  jobAdded: fieldMessage`was added, which would turn a session cluster into an application cluster; that is not supported: create a new FlinkDeployment for the job`,
  modeChanged: fieldMessage`cannot change from ${'from'} to ${'to'} on an existing deployment; set it back to ${'from'}, or delete and recreate the FlinkDeployment`,
  checkpointOnOldFlink: fieldMessage`a manual checkpoint needs Flink 1.19 or newer, which takes checkpoints on request (flinkVersion is ${'version'}); undo the change, or upgrade Flink`,
};
