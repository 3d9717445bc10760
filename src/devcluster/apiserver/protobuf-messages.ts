/**
 * Message schemas (field numbers, JSON names, pointer-ness) of the kinds `kubectl create` sends as
 * protobuf, taken from k8s.io/api v0.32 `core/v1`, `apps/v1`, `batch/v1`, `networking/v1`,
 * `policy/v1`, `rbac/v1` generated.proto and k8s.io/apimachinery `meta/v1` generated.proto; `keep` marks
 * the fields that are Go pointers in types.go (kept at zero values, see protobuf-wire.ts).
 *
 * Guarantees: every field the kubectl 1.32 commands `create configmap|secret|namespace|
 * serviceaccount|deployment|service (clusterip|nodeport|loadbalancer|externalname)|job (also
 * --from=cronjob)|cronjob|ingress|poddisruptionbudget|role|clusterrole|rolebinding|clusterrolebinding` can set is declared (verified against the
 * bytes in test/devcluster/fixtures/protobuf/), plus the commonly used PodSpec/Container fields a
 * cronjob's job template may carry into `create job --from`.
 * Caveats: volumes, probes, security contexts, affinity, tolerations, pod failure and success
 * policies, session affinity config are not declared: a body carrying any of them is refused
 * with 415 (never silently dropped). Status messages are skipped (every create resets status).
 */
import { message, type FieldSpec, type MessageSchema } from './protobuf-wire.js';

const s = (name: string, keep = false): FieldSpec => ({ name, type: 'string', keep });
const b = (name: string, keep = false): FieldSpec => ({ name, type: 'bool', keep });
const n = (name: string, keep = false): FieldSpec => ({ name, type: 'int', keep });
const strings = (name: string): FieldSpec => ({ name, type: 'string', repeated: true });
const stringMap = (name: string): FieldSpec => ({ name, type: { map: 'string' } });
const msg = (name: string, type: MessageSchema, keep = false): FieldSpec => ({ name, type, keep });
const list = (name: string, type: MessageSchema): FieldSpec => ({ name, type, repeated: true });
const ignored = (name: string): FieldSpec => ({ name, type: 'ignore' });

// ---- k8s.io/apimachinery/pkg/apis/meta/v1

const OWNER_REFERENCE = message('OwnerReference', [
  [1, s('kind')],
  [3, s('name')],
  [4, s('uid')],
  [5, s('apiVersion')],
  [6, b('controller', true)],
  [7, b('blockOwnerDeletion', true)],
]);

export const OBJECT_META = message('ObjectMeta', [
  [1, s('name')],
  [2, s('generateName')],
  [3, s('namespace')],
  [4, ignored('selfLink')],
  [5, ignored('uid')],
  [6, ignored('resourceVersion')],
  [7, ignored('generation')],
  [8, ignored('creationTimestamp')],
  [9, ignored('deletionTimestamp')],
  [10, ignored('deletionGracePeriodSeconds')],
  [11, stringMap('labels')],
  [12, stringMap('annotations')],
  [13, list('ownerReferences', OWNER_REFERENCE)],
  [14, strings('finalizers')],
  [17, ignored('managedFields')],
]);

const LABEL_SELECTOR_REQUIREMENT = message('LabelSelectorRequirement', [
  [1, s('key')],
  [2, s('operator')],
  [3, strings('values')],
]);

const LABEL_SELECTOR = message('LabelSelector', [
  [1, stringMap('matchLabels')],
  [2, list('matchExpressions', LABEL_SELECTOR_REQUIREMENT)],
]);

// ---- k8s.io/api/core/v1

const LOCAL_OBJECT_REFERENCE = message('LocalObjectReference', [[1, s('name')]]);
const inlineReference: FieldSpec = { name: '', type: LOCAL_OBJECT_REFERENCE, inline: true };

const KEY_SELECTOR = message('KeySelector', [
  [1, inlineReference],
  [2, s('key')],
  [3, b('optional', true)],
]);

const ENV_VAR_SOURCE = message('EnvVarSource', [
  [
    1,
    msg(
      'fieldRef',
      message('ObjectFieldSelector', [
        [1, s('apiVersion')],
        [2, s('fieldPath')],
      ]),
      true,
    ),
  ],
  [
    2,
    msg(
      'resourceFieldRef',
      message('ResourceFieldSelector', [
        [1, s('containerName')],
        [2, s('resource')],
        [3, { name: 'divisor', type: 'quantity' }],
      ]),
      true,
    ),
  ],
  [3, msg('configMapKeyRef', KEY_SELECTOR, true)],
  [4, msg('secretKeyRef', KEY_SELECTOR, true)],
]);

const ENV_VAR = message('EnvVar', [
  [1, s('name')],
  [2, s('value')],
  [3, msg('valueFrom', ENV_VAR_SOURCE, true)],
]);

const ENV_SOURCE_REFERENCE = message('EnvSourceReference', [
  [1, inlineReference],
  [2, b('optional', true)],
]);

const ENV_FROM_SOURCE = message('EnvFromSource', [
  [1, s('prefix')],
  [2, msg('configMapRef', ENV_SOURCE_REFERENCE, true)],
  [3, msg('secretRef', ENV_SOURCE_REFERENCE, true)],
]);

const CONTAINER_PORT = message('ContainerPort', [
  [1, s('name')],
  [2, n('hostPort')],
  [3, n('containerPort')],
  [4, s('protocol')],
  [5, s('hostIP')],
]);

const RESOURCE_REQUIREMENTS = message('ResourceRequirements', [
  [1, { name: 'limits', type: { map: 'quantity' } }],
  [2, { name: 'requests', type: { map: 'quantity' } }],
]);

const VOLUME_MOUNT = message('VolumeMount', [
  [1, s('name')],
  [2, b('readOnly')],
  [3, s('mountPath')],
  [4, s('subPath')],
  [5, s('mountPropagation', true)],
  [6, s('subPathExpr')],
  [7, s('recursiveReadOnly', true)],
]);

const CONTAINER = message('Container', [
  [1, s('name')],
  [2, s('image')],
  [3, strings('command')],
  [4, strings('args')],
  [5, s('workingDir')],
  [6, list('ports', CONTAINER_PORT)],
  [7, list('env', ENV_VAR)],
  [8, msg('resources', RESOURCE_REQUIREMENTS)],
  [9, list('volumeMounts', VOLUME_MOUNT)],
  [13, s('terminationMessagePath')],
  [14, s('imagePullPolicy')],
  [16, b('stdin')],
  [17, b('stdinOnce')],
  [18, b('tty')],
  [19, list('envFrom', ENV_FROM_SOURCE)],
  [20, s('terminationMessagePolicy')],
  [24, s('restartPolicy', true)],
]);

const POD_SPEC = message('PodSpec', [
  [2, list('containers', CONTAINER)],
  [3, s('restartPolicy')],
  [4, n('terminationGracePeriodSeconds', true)],
  [5, n('activeDeadlineSeconds', true)],
  [6, s('dnsPolicy')],
  [7, stringMap('nodeSelector')],
  [8, s('serviceAccountName')],
  [9, s('serviceAccount')],
  [10, s('nodeName')],
  [11, b('hostNetwork')],
  [12, b('hostPID')],
  [13, b('hostIPC')],
  [15, list('imagePullSecrets', LOCAL_OBJECT_REFERENCE)],
  [16, s('hostname')],
  [17, s('subdomain')],
  [19, s('schedulerName')],
  [20, list('initContainers', CONTAINER)],
  [21, b('automountServiceAccountToken', true)],
  [24, s('priorityClassName')],
  [25, n('priority', true)],
  [27, b('shareProcessNamespace', true)],
  [29, s('runtimeClassName', true)],
  [30, b('enableServiceLinks', true)],
  [31, s('preemptionPolicy', true)],
  [35, b('setHostnameAsFQDN', true)],
  [37, b('hostUsers', true)],
]);

export const POD_TEMPLATE_SPEC = message('PodTemplateSpec', [
  [1, msg('metadata', OBJECT_META)],
  [2, msg('spec', POD_SPEC)],
]);

const SERVICE_PORT = message('ServicePort', [
  [1, s('name')],
  [2, s('protocol')],
  [3, n('port')],
  [4, { name: 'targetPort', type: 'intOrString' }],
  [5, n('nodePort')],
  [6, s('appProtocol', true)],
]);

const SERVICE_SPEC = message('ServiceSpec', [
  [1, list('ports', SERVICE_PORT)],
  [2, stringMap('selector')],
  [3, s('clusterIP')],
  [4, s('type')],
  [5, strings('externalIPs')],
  [7, s('sessionAffinity')],
  [8, s('loadBalancerIP')],
  [9, strings('loadBalancerSourceRanges')],
  [10, s('externalName')],
  [11, s('externalTrafficPolicy')],
  [12, n('healthCheckNodePort')],
  [13, b('publishNotReadyAddresses')],
  [17, s('ipFamilyPolicy', true)],
  [18, strings('clusterIPs')],
  [19, strings('ipFamilies')],
  [20, b('allocateLoadBalancerNodePorts', true)],
  [21, s('loadBalancerClass', true)],
  [22, s('internalTrafficPolicy', true)],
  [23, s('trafficDistribution', true)],
]);

/** `kind` → the fields of its top-level message after `metadata` (1), for core/v1. */
export const CORE_V1_KINDS: Record<string, MessageSchema> = {
  ConfigMap: message('ConfigMap', [
    [1, msg('metadata', OBJECT_META)],
    [2, stringMap('data')],
    [3, { name: 'binaryData', type: { map: 'bytes' } }],
    [4, b('immutable', true)],
  ]),
  Secret: message('Secret', [
    [1, msg('metadata', OBJECT_META)],
    [2, { name: 'data', type: { map: 'bytes' } }],
    [3, s('type')],
    [4, stringMap('stringData')],
    [5, b('immutable', true)],
  ]),
  Namespace: message('Namespace', [
    [1, msg('metadata', OBJECT_META)],
    [2, msg('spec', message('NamespaceSpec', [[1, strings('finalizers')]]))],
    [3, ignored('status')],
  ]),
  ServiceAccount: message('ServiceAccount', [
    [1, msg('metadata', OBJECT_META)],
    [
      2,
      list(
        'secrets',
        message('ObjectReference', [
          [1, s('kind')],
          [2, s('namespace')],
          [3, s('name')],
          [4, s('uid')],
          [5, s('apiVersion')],
          [6, s('resourceVersion')],
          [7, s('fieldPath')],
        ]),
      ),
    ],
    [3, list('imagePullSecrets', LOCAL_OBJECT_REFERENCE)],
    [4, b('automountServiceAccountToken', true)],
  ]),
  Service: message('Service', [
    [1, msg('metadata', OBJECT_META)],
    [2, msg('spec', SERVICE_SPEC)],
    [3, ignored('status')],
  ]),
};

// ---- k8s.io/api/apps/v1, batch/v1, networking/v1, policy/v1

const INT_OR_STRING_POINTER = (name: string): FieldSpec => ({ name, type: 'intOrString', keep: true });

const DEPLOYMENT_SPEC = message('DeploymentSpec', [
  [1, n('replicas', true)],
  [2, msg('selector', LABEL_SELECTOR, true)],
  [3, msg('template', POD_TEMPLATE_SPEC)],
  [
    4,
    msg(
      'strategy',
      message('DeploymentStrategy', [
        [1, s('type')],
        [
          2,
          msg(
            'rollingUpdate',
            message('RollingUpdateDeployment', [
              [1, INT_OR_STRING_POINTER('maxUnavailable')],
              [2, INT_OR_STRING_POINTER('maxSurge')],
            ]),
            true,
          ),
        ],
      ]),
    ),
  ],
  [5, n('minReadySeconds')],
  [6, n('revisionHistoryLimit', true)],
  [7, b('paused')],
  [9, n('progressDeadlineSeconds', true)],
]);

const JOB_SPEC = message('JobSpec', [
  [1, n('parallelism', true)],
  [2, n('completions', true)],
  [3, n('activeDeadlineSeconds', true)],
  [4, msg('selector', LABEL_SELECTOR, true)],
  [5, b('manualSelector', true)],
  [6, msg('template', POD_TEMPLATE_SPEC)],
  [7, n('backoffLimit', true)],
  [8, n('ttlSecondsAfterFinished', true)],
  [9, s('completionMode', true)],
  [10, b('suspend', true)],
  [12, n('backoffLimitPerIndex', true)],
  [13, n('maxFailedIndexes', true)],
  [14, s('podReplacementPolicy', true)],
  [15, s('managedBy', true)],
]);

const SERVICE_BACKEND_PORT = message('ServiceBackendPort', [
  [1, s('name')],
  [2, n('number')],
]);

const INGRESS_BACKEND = message('IngressBackend', [
  [
    3,
    msg(
      'resource',
      message('TypedLocalObjectReference', [
        [1, s('apiGroup', true)],
        [2, s('kind')],
        [3, s('name')],
      ]),
      true,
    ),
  ],
  [
    4,
    msg(
      'service',
      message('IngressServiceBackend', [
        [1, s('name')],
        [2, msg('port', SERVICE_BACKEND_PORT)],
      ]),
      true,
    ),
  ],
]);

const HTTP_INGRESS_PATH = message('HTTPIngressPath', [
  [1, s('path')],
  [2, msg('backend', INGRESS_BACKEND)],
  [3, s('pathType', true)],
]);

const INGRESS_RULE = message('IngressRule', [
  [1, s('host')],
  // IngressRuleValue is embedded (`json:",inline"`): its `http` is a member of the rule
  [
    2,
    {
      name: '',
      inline: true,
      type: message('IngressRuleValue', [[1, msg('http', message('HTTPIngressRuleValue', [[1, list('paths', HTTP_INGRESS_PATH)]]), true)]]),
    },
  ],
]);

const INGRESS_SPEC = message('IngressSpec', [
  [1, msg('defaultBackend', INGRESS_BACKEND, true)],
  [
    2,
    list(
      'tls',
      message('IngressTLS', [
        [1, strings('hosts')],
        [2, s('secretName')],
      ]),
    ),
  ],
  [3, list('rules', INGRESS_RULE)],
  [4, s('ingressClassName', true)],
]);

const PDB_SPEC = message('PodDisruptionBudgetSpec', [
  [1, INT_OR_STRING_POINTER('minAvailable')],
  [2, msg('selector', LABEL_SELECTOR, true)],
  [3, INT_OR_STRING_POINTER('maxUnavailable')],
  [4, s('unhealthyPodEvictionPolicy', true)],
]);

const withSpec = (kind: string, spec: MessageSchema): MessageSchema =>
  message(kind, [
    [1, msg('metadata', OBJECT_META)],
    [2, msg('spec', spec)],
    [3, ignored('status')],
  ]);

// ---- k8s.io/api/rbac/v1

const POLICY_RULE = message('PolicyRule', [
  [1, strings('verbs')],
  [2, strings('apiGroups')],
  [3, strings('resources')],
  [4, strings('resourceNames')],
  [5, strings('nonResourceURLs')],
]);

const RBAC_SUBJECT = message('Subject', [
  [1, s('kind')],
  [2, s('apiGroup')],
  [3, s('name')],
  [4, s('namespace')],
]);

const ROLE_REF = message('RoleRef', [
  [1, s('apiGroup')],
  [2, s('kind')],
  [3, s('name')],
]);

const roleBinding = (kind: string): MessageSchema =>
  message(kind, [
    [1, msg('metadata', OBJECT_META)],
    [2, list('subjects', RBAC_SUBJECT)],
    [3, msg('roleRef', ROLE_REF)],
  ]);

const RBAC_V1_KINDS: Record<string, MessageSchema> = {
  Role: message('Role', [
    [1, msg('metadata', OBJECT_META)],
    [2, list('rules', POLICY_RULE)],
  ]),
  ClusterRole: message('ClusterRole', [
    [1, msg('metadata', OBJECT_META)],
    [2, list('rules', POLICY_RULE)],
    [3, msg('aggregationRule', message('AggregationRule', [[1, list('clusterRoleSelectors', LABEL_SELECTOR)]]), true)],
  ]),
  RoleBinding: roleBinding('RoleBinding'),
  ClusterRoleBinding: roleBinding('ClusterRoleBinding'),
};

/** `apiVersion` → `kind` → top-level message, for every kind decoded from protobuf. */
export const PROTOBUF_KINDS: Record<string, Record<string, MessageSchema>> = {
  v1: CORE_V1_KINDS,
  'apps/v1': { Deployment: withSpec('Deployment', DEPLOYMENT_SPEC) },
  'batch/v1': {
    Job: withSpec('Job', JOB_SPEC),
    CronJob: withSpec(
      'CronJob',
      message('CronJobSpec', [
        [1, s('schedule')],
        [2, n('startingDeadlineSeconds', true)],
        [3, s('concurrencyPolicy')],
        [4, b('suspend', true)],
        [
          5,
          msg(
            'jobTemplate',
            message('JobTemplateSpec', [
              [1, msg('metadata', OBJECT_META)],
              [2, msg('spec', JOB_SPEC)],
            ]),
          ),
        ],
        [6, n('successfulJobsHistoryLimit', true)],
        [7, n('failedJobsHistoryLimit', true)],
        [8, s('timeZone', true)],
      ]),
    ),
  },
  'networking.k8s.io/v1': { Ingress: withSpec('Ingress', INGRESS_SPEC) },
  'policy/v1': { PodDisruptionBudget: withSpec('PodDisruptionBudget', PDB_SPEC) },
  'rbac.authorization.k8s.io/v1': RBAC_V1_KINDS,
};
