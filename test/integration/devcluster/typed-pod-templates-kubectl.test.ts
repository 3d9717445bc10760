/**
 * Typed pod templates through the real kubectl against the dev cluster: the FlinkDeployment CRD
 * embeds the Pod schema in spec.podTemplate, spec.jobManager.podTemplate and
 * spec.taskManager.podTemplate (src/api/pod-template-schema.ts), so the API server prunes a typo
 * inside a template, warns about it, or refuses it, as it does for any structural CRD field.
 *
 * Behaviour emulated (apiextensions-apiserver pkg/apiserver/customresource_handler.go: pruning
 * with TrackUnknownFieldPaths, `unknown field "<path>"`, the strict decoding error; PruneNonNullableNullsWithoutDefaults):
 * - kubectl 1.32's default `--validate=strict` sends fieldValidation=Strict: a typo is refused;
 * - `--validate=warn` (fieldValidation=Warn, the server's default for other clients) keeps the
 *   write, prunes the field and prints the server's `Warning: unknown field "..."`;
 * - a null in a template (`creationTimestamp: null`) is dropped without a warning.
 * The CRD is installed with `kubectl apply --server-side`: with three Pod schemas in each of its
 * two versions it is larger than the 262144 bytes that client-side apply's
 * last-applied-configuration annotation may hold (apimachinery pkg/api/validation/objectmeta.go,
 * TotalAnnotationSizeLimitB), which the first test shows.
 */
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { startDevCluster, type DevCluster } from '../../../src/devcluster/dev-cluster.js';
import { KubectlRunner } from './kubectl-runner.js';

const CRD_DIR = fileURLToPath(new URL('../../../crds/', import.meta.url));
const CRD_FILE = fileURLToPath(new URL('../../../crds/flinkdeployments.flink.apache.org.yaml', import.meta.url));

function flinkDeployment(name: string, podTemplates: string): string {
  return `apiVersion: flink.apache.org/v1
kind: FlinkDeployment
metadata:
  name: ${name}
spec:
  image: flink:1.20
  flinkVersion: v1_20
  serviceAccount: flink
  job:
    jarURI: local:///opt/flink/examples/streaming/StateMachineExample.jar
    parallelism: 2
${podTemplates}`;
}

/** Everything users put in Flink pod templates (the Apache operator's examples and docs: pod-template.yaml), as YAML under spec. */
const RICH_TEMPLATES = `  podTemplate:
    apiVersion: v1
    kind: Pod
    metadata:
      labels: {team: payments}
      annotations: {prometheus.io/scrape: "true"}
    spec:
      securityContext:
        runAsUser: 9999
        runAsNonRoot: true
        fsGroup: 9999
        seccompProfile: {type: RuntimeDefault}
      tolerations:
        - {key: dedicated, operator: Equal, value: flink, effect: NoSchedule}
        - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 300}
      nodeSelector: {disktype: ssd}
      affinity:
        podAntiAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
            - weight: 100
              podAffinityTerm:
                topologyKey: kubernetes.io/hostname
                labelSelector:
                  matchExpressions: [{key: app, operator: In, values: [payments]}]
      topologySpreadConstraints:
        - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway}
      imagePullSecrets: [{name: registry-credentials}]
      initContainers:
        - name: fetch-udfs
          image: busybox:1.36
          command: [sh, -c, "cp /udfs/*.jar /opt/flink/usrlib/"]
          volumeMounts: [{name: usrlib, mountPath: /opt/flink/usrlib}]
      containers:
        - name: flink-main-container
          env:
            - {name: ENVIRONMENT, value: production}
            - name: NODE_NAME
              valueFrom: {fieldRef: {fieldPath: spec.nodeName}}
            - name: MEMORY_LIMIT_MI
              valueFrom: {resourceFieldRef: {containerName: flink-main-container, resource: limits.memory, divisor: 1Mi}}
          resources:
            limits: {cpu: 2, memory: 4Gi, ephemeral-storage: "10737418240"}
          securityContext:
            allowPrivilegeEscalation: false
            readOnlyRootFilesystem: false
            capabilities: {drop: [ALL]}
          volumeMounts:
            - {name: usrlib, mountPath: /opt/flink/usrlib}
            - {name: flink-logs, mountPath: /opt/flink/log}
        - name: fluent-bit
          image: fluent/fluent-bit:3.1
          ports: [{name: metrics, containerPort: 2020, protocol: TCP}]
          livenessProbe:
            httpGet: {path: /api/v1/health, port: metrics}
            initialDelaySeconds: 10
          readinessProbe:
            tcpSocket: {port: 2020}
          resources:
            requests: {cpu: 100m, memory: 64Mi}
            limits: {cpu: 500m, memory: 128Mi}
          volumeMounts: [{name: flink-logs, mountPath: /flink-logs, readOnly: true}]
      volumes:
        - name: usrlib
          emptyDir: {sizeLimit: 1Gi}
        - name: flink-logs
          emptyDir: {medium: Memory, sizeLimit: 512Mi}
        - name: fluent-bit-config
          configMap:
            name: fluent-bit-config
            defaultMode: 420
            items: [{key: fluent-bit.conf, path: fluent-bit.conf}]
        - name: scratch
          ephemeral:
            volumeClaimTemplate:
              spec:
                accessModes: [ReadWriteOnce]
                storageClassName: fast
                resources: {requests: {storage: 20Gi}}
  taskManager:
    podTemplate:
      spec:
        priorityClassName: flink-batch
        terminationGracePeriodSeconds: 60
        containers:
          - name: flink-main-container
            resources:
              requests: {memory: 3Gi}
`;

describe('dev cluster: typed pod templates with the real kubectl', () => {
  let cluster: DevCluster;
  let k: KubectlRunner;
  before(async () => {
    cluster = await startDevCluster();
    k = new KubectlRunner(cluster.kubeconfigYaml());
  });
  after(async () => {
    k.cleanup();
    await cluster.stop();
  });

  it('installs the CRDs with kubectl apply --server-side; client-side apply exceeds the annotation size limit', async () => {
    // Client-side apply stores the whole CRD as JSON in kubectl.kubernetes.io/last-applied-configuration,
    // and all annotations together may hold 262144 bytes (apimachinery ValidateAnnotations, field.TooLong).
    const clientSide = await k.run(['apply', '-f', CRD_FILE]);
    assert.notEqual(clientSide.code, 0);
    assert.match(
      clientSide.stderr,
      /The CustomResourceDefinition "flinkdeployments.flink.apache.org" is invalid: .*metadata.annotations: Too long: .*262144 bytes/s,
    );
    const serverSide = await k.ok(['apply', '--server-side', '-f', CRD_DIR]);
    assert.match(serverSide, /customresourcedefinition.apiextensions.k8s.io\/flinkdeployments.flink.apache.org serverside-applied/);
    // Applying again (an upgrade) is accepted the same way.
    assert.match(await k.ok(['apply', '--server-side', '-f', CRD_DIR]), /flinkdeployments.flink.apache.org serverside-applied/);
    const stored = JSON.parse(await k.ok(['get', 'crd', 'flinkdeployments.flink.apache.org', '-o', 'json'])) as {
      metadata: { annotations?: Record<string, string> };
    };
    assert.equal(stored.metadata.annotations?.['kubectl.kubernetes.io/last-applied-configuration'], undefined);
  });

  it('refuses a typo inside spec.podTemplate under kubectl apply (its default --validate=strict), naming the field', async () => {
    const typo = flinkDeployment('typo-strict', '  podTemplate:\n    spec:\n      contaners:\n        - name: flink-main-container\n');
    const r = await k.run(['apply', '-f', '-'], typo);
    assert.notEqual(r.code, 0);
    assert.match(
      r.stderr,
      /FlinkDeployment in version "v1" cannot be handled as a FlinkDeployment: strict decoding error: unknown field "spec.podTemplate.spec.contaners"/,
    );
    const explicit = await k.run(['apply', '--validate=strict', '-f', '-'], typo);
    assert.notEqual(explicit.code, 0);
    assert.match(explicit.stderr, /unknown field "spec.podTemplate.spec.contaners"/);
    assert.notEqual((await k.run(['get', 'flinkdeployment', 'typo-strict'])).code, 0, 'nothing was created');
  });

  it('with --validate=warn prints the server warning for typos at any depth and prunes them', async () => {
    const typos = flinkDeployment(
      'typo-warn',
      `  podTemplate:
    spec:
      contaners:
        - name: flink-main-container
  jobManager:
    podTemplate:
      metadata:
        labells: {team: payments}
      spec:
        containers:
          - name: flink-main-container
            imagePulPolicy: Always
            resources:
              limits: {memory: 4Gi}
`,
    );
    const r = await k.run(['apply', '--validate=warn', '-f', '-'], typos);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /Warning: unknown field "spec.podTemplate.spec.contaners"/);
    assert.match(r.stderr, /Warning: unknown field "spec.jobManager.podTemplate.metadata.labells"/);
    assert.match(r.stderr, /Warning: unknown field "spec.jobManager.podTemplate.spec.containers\[0\].imagePulPolicy"/);
    const spec = JSON.parse(await k.ok(['get', 'flinkdeployment', 'typo-warn', '-o', 'jsonpath={.spec}'])) as Record<string, unknown>;
    assert.deepEqual(spec.podTemplate, { spec: {} });
    assert.deepEqual((spec.jobManager as Record<string, unknown>).podTemplate, {
      metadata: {},
      spec: { containers: [{ name: 'flink-main-container', resources: { limits: { memory: '4Gi' } } }] },
    });
  });

  it('keeps a full pod template (sidecars, volumes, securityContext, quantities as numbers and strings, tolerations) exactly as written', async () => {
    const manifest = flinkDeployment('rich-templates', RICH_TEMPLATES);
    const r = await k.run(['apply', '-f', '-'], manifest);
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /unknown field/);
    const written = (parseYaml(manifest) as { spec: Record<string, unknown> }).spec;
    const stored = JSON.parse(await k.ok(['get', 'flinkdeployment', 'rich-templates', '-o', 'jsonpath={.spec}'])) as Record<string, unknown>;
    assert.deepEqual(stored.podTemplate, written.podTemplate);
    assert.deepEqual(stored.taskManager, written.taskManager);
    // Same as the Apache operator's CRD: int-or-string keeps `cpu: 2` a number and `cpu: 100m` a string.
    const limits = (await k.ok(['get', 'flinkdeployment', 'rich-templates', '-o', 'jsonpath={.spec.podTemplate.spec.containers[0].resources.limits}'])).trim();
    assert.deepEqual(JSON.parse(limits), { cpu: 2, memory: '4Gi', 'ephemeral-storage': '10737418240' });
    assert.match(await k.ok(['apply', '-f', '-'], manifest), /flinkdeployment.flink.apache.org\/rich-templates unchanged/);
  });

  it('rejects a wrongly typed template field with its path, a fractional cpu number included', async () => {
    // A quantity is x-kubernetes-int-or-string, validated as type [integer, string]
    // (apiextensions-apiserver pkg/apiserver/validation/validation.go): `cpu: 0.5` is refused as in
    // the Apache operator's CRD, where a built-in Pod would accept it; write "500m".
    const wrongType = flinkDeployment(
      'wrong-type',
      '  podTemplate:\n    spec:\n      securityContext: {runAsUser: "9999"}\n      containers:\n        - name: flink-main-container\n          resources: {limits: {cpu: 0.5}}\n',
    );
    const r = await k.run(['apply', '-f', '-'], wrongType);
    assert.notEqual(r.code, 0);
    assert.match(
      r.stderr,
      /spec.podTemplate.spec.containers\[0\].resources.limits.cpu: Invalid value: "number": spec.podTemplate.spec.containers\[0\].resources.limits.cpu in body must be of type integer,string: "number"/,
    );
    assert.match(
      r.stderr,
      /spec.podTemplate.spec.securityContext.runAsUser: Invalid value: "string": spec.podTemplate.spec.securityContext.runAsUser in body must be of type integer: "string"/,
    );
    // An object where the schema has a list: the pruner finds no property for its keys
    // (apiextensions-apiserver pkg/apiserver/schema/pruning/algorithm.go), so strict decoding names them.
    const objectForList = flinkDeployment('object-for-list', '  podTemplate:\n    spec:\n      tolerations: {key: dedicated}\n');
    const strict = await k.run(['apply', '-f', '-'], objectForList);
    assert.notEqual(strict.code, 0);
    assert.match(strict.stderr, /strict decoding error: unknown field "spec.podTemplate.spec.tolerations.key"/);
  });

  it('drops a null in a template without a warning, as kube-apiserver drops non-nullable nulls', async () => {
    // `kubectl create deployment --dry-run=client -o yaml` writes creationTimestamp: null
    // (apiextensions-apiserver pkg/apiserver/schema/defaulting/prunenulls.go, PruneNonNullableNullsWithoutDefaults).
    const withNull = flinkDeployment('with-null', '  podTemplate:\n    metadata:\n      creationTimestamp: null\n      labels: {team: payments}\n');
    const applied = await k.run(['apply', '-f', '-'], withNull);
    assert.equal(applied.code, 0, applied.stderr);
    assert.doesNotMatch(applied.stderr, /Warning/);
    const metadata = await k.ok(['get', 'flinkdeployment', 'with-null', '-o', 'jsonpath={.spec.podTemplate.metadata}']);
    assert.deepEqual(JSON.parse(metadata), { labels: { team: 'payments' } });
  });

  it('explains pod template fields from the published schema', async () => {
    // kubectl explain reads the OpenAPI v3 the server publishes from the CRD schema (k8s.io/kubectl pkg/explain/v2).
    const containers = await k.ok(['explain', 'flinkdeployments.spec.taskManager.podTemplate.spec.containers']);
    assert.match(containers, /FIELD: containers <\[\]Object>/);
    assert.match(containers, /volumeMounts\s+<\[\]Object>/);
    const tolerations = await k.ok(['explain', 'flinkdeployments.spec.podTemplate.spec.tolerations']);
    assert.match(tolerations, /tolerationSeconds\s+<integer>/);
  });
});
