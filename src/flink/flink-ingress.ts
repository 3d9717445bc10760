/**
 * The networking.k8s.io/v1 Ingress of a FlinkDeployment's web UI, rendered from `spec.ingress`
 * as the Apache operator's IngressUtils renders it:
 * - name and namespace: the FlinkDeployment's;
 * - `template`: `{{name}}` and `{{namespace}}` (any case) replaced, then read as a URL (an
 *   `http://` is put in front when it names no `http://` or `https://`): its host becomes the
 *   rule's `host` (host-based routing, e.g. `{{name}}.{{namespace}}.flink.k8s.io`), its path the
 *   rule's `path` (path-based routing, e.g. `/{{namespace}}/{{name}}(/|$)(.*)`); either may be
 *   absent. One rule, one path of pathType `ImplementationSpecific`, backend the `<name>-rest`
 *   Service on port number rest.port (8081 by default);
 * - `className` → spec.ingressClassName, `tls` as given, `annotations` as given;
 * - labels: `labels` as given, then the cluster labels (`app`, `type`) and `component: ingress`
 *   (Apache's LABEL_COMPONENT_INGRESS), which a user label cannot override;
 * - owned by the FlinkDeployment (controller), so deleting it garbage-collects the Ingress.
 *
 * Templates Kubernetes (or the URL reading) would not take are refused with a message naming
 * `spec.ingress.template` and the fix (ingressTemplateProblem; spec-validation.ts reports it): no
 * template, a placeholder other than the two, a port, user info, a query or fragment (the Apache
 * operator silently drops them), a host that is not a lower-case DNS name (an IP address is not
 * one: Kubernetes' ValidateIngressSpec).
 *
 * Guarantees: pure and deterministic. Throws IngressTemplateError only for a template
 * ingressTemplateProblem refuses (validation runs before rendering); like every rendering, needs
 * the FlinkDeployment's metadata.uid (ownerReferenceTo).
 */
import type { V1Ingress, V1IngressRule } from '@kubernetes/client-node';
import type { FlinkDeploymentV1 } from '../api/flink-deployment.js';
import type { FlinkDeploymentSpec } from '../api/flink-deployment-spec.js';
import { clusterLabels, clusterModeOf, deploymentKey, FLINK_PORTS, ownerReferenceTo, restServiceName } from './flink-resource-naming.js';

/** `component` label value of the Ingress (Apache's EventSourceUtils.LABEL_COMPONENT_INGRESS). */
export const INGRESS_COMPONENT_LABEL_VALUE = 'ingress';
/** The only pathType Apache renders (the template's path may be a regular expression). */
export const INGRESS_PATH_TYPE = 'ImplementationSpecific';

/** The Ingress name of a FlinkDeployment: `<name>`. */
export function ingressName(name: string): string {
  return name;
}

export class IngressTemplateError extends Error {}

/** What a template resolves to: the rule's host and path (either may be absent). */
export interface IngressUrl {
  host?: string;
  path?: string;
}

const NAME_PLACEHOLDER = /\{\{name\}\}/gi;
const NAMESPACE_PLACEHOLDER = /\{\{namespace\}\}/gi;
const PROTOCOL = /^https?:\/\//i;
const DNS_LABEL = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
/** A DNS-1123 subdomain, optionally a wildcard (`*.example.com`): what Kubernetes takes as an Ingress host. */
const INGRESS_HOST = new RegExp(`^(\\*\\.)?${DNS_LABEL}(\\.${DNS_LABEL})*$`);
const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

const FIX = 'e.g. "{{name}}.{{namespace}}.flink.k8s.io" (host-based) or "/{{namespace}}/{{name}}(/|$)(.*)" (path-based)';

/**
 * `template` with the placeholders replaced, read as Java's URL reads it in the Apache operator:
 * the authority ends at the first `/`, the path at a `?` or `#`. Throws IngressTemplateError (the
 * message starts with what is wrong and says how to fix it) for a template Kubernetes would not take.
 */
export function resolveIngressTemplate(template: string | undefined, name: string, namespace: string): IngressUrl {
  if (template === undefined || template.trim() === '') throw new IngressTemplateError(`is required when spec.ingress is set; set it, ${FIX}`);
  const replaced = template.replace(NAME_PLACEHOLDER, name).replace(NAMESPACE_PLACEHOLDER, namespace);
  const leftover = /\{\{[^}]*\}\}/.exec(replaced);
  if (leftover) {
    throw new IngressTemplateError(`"${template}" has the placeholder ${leftover[0]}; only {{name}} and {{namespace}} are replaced: remove it, ${FIX}`);
  }
  if (/[?#]/.test(replaced)) {
    throw new IngressTemplateError(`"${template}" has a query or fragment ('?' or '#'), which an Ingress rule cannot match; remove it, ${FIX}`);
  }
  const rest = replaced.replace(PROTOCOL, '');
  const slash = rest.indexOf('/');
  const authority = slash < 0 ? rest : rest.slice(0, slash);
  const path = slash < 0 ? '' : rest.slice(slash);
  if (authority.includes('@')) throw new IngressTemplateError(`"${template}" has user info ('@'), which an Ingress host cannot have; remove it, ${FIX}`);
  if (authority.includes(':')) {
    throw new IngressTemplateError(
      `"${template}" names a port ("${authority}"); an Ingress rule matches a host without a port (the ingress controller's own port serves it): remove the port, ${FIX}`,
    );
  }
  if (authority !== '' && (!INGRESS_HOST.test(authority) || IPV4.test(authority) || authority.length > 253)) {
    throw new IngressTemplateError(
      `"${template}" gives the host "${authority}", which is not a lower-case DNS name (letters, digits, '-' and '.', optionally starting with "*."; not an IP address); fix the host, ${FIX}`,
    );
  }
  return { ...(authority !== '' ? { host: authority } : {}), ...(path !== '' ? { path } : {}) };
}

/** What is wrong with `spec.ingress.template` for a deployment `name` in `namespace`, with the fix; undefined when it renders. */
export function ingressTemplateProblem(template: string | undefined, name: string, namespace: string): string | undefined {
  try {
    resolveIngressTemplate(template, name, namespace);
    return undefined;
  } catch (error) {
    if (error instanceof IngressTemplateError) return error.message;
    throw error;
  }
}

/** The rule Apache renders: one ImplementationSpecific path to `<name>-rest` on `restPort`, with the template's host and path. */
function ingressRule(url: IngressUrl, serviceName: string, restPort: number): V1IngressRule {
  return {
    ...(url.host !== undefined ? { host: url.host } : {}),
    http: {
      paths: [
        {
          pathType: INGRESS_PATH_TYPE,
          ...(url.path !== undefined ? { path: url.path } : {}),
          backend: { service: { name: serviceName, port: { number: restPort } } },
        },
      ],
    },
  };
}

/**
 * The Ingress of `deployment` for `spec` (the spec being carried out, which may differ from
 * deployment.spec), or undefined when it has no `ingress`. `restPort` is the spec's rest.port.
 */
export function buildIngress(deployment: FlinkDeploymentV1, spec: FlinkDeploymentSpec, restPort: number = FLINK_PORTS.rest.port): V1Ingress | undefined {
  const ingress = spec.ingress;
  if (!ingress) return undefined;
  const { namespace, name } = deploymentKey(deployment);
  const url = resolveIngressTemplate(ingress.template, name, namespace);
  const labels = { ...ingress.labels, ...clusterLabels(name, clusterModeOf(spec)), component: INGRESS_COMPONENT_LABEL_VALUE };
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: {
      name: ingressName(name),
      namespace,
      labels,
      ...(ingress.annotations && Object.keys(ingress.annotations).length > 0 ? { annotations: { ...ingress.annotations } } : {}),
      ownerReferences: [ownerReferenceTo(deployment)],
    },
    spec: {
      ...(ingress.className ? { ingressClassName: ingress.className } : {}),
      ...(ingress.tls ? { tls: structuredClone(ingress.tls) } : {}),
      rules: [ingressRule(url, restServiceName(name), restPort)],
    },
  };
}
