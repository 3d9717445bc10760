/**
 * The pod subresources besides status: `log` (pod-logs.ts), `binding` (what the scheduler posts to
 * set `spec.nodeName`), `eviction` (a delete through the Eviction API), and `exec`, `attach`,
 * `portforward`, which need a container runtime the development cluster does not have.
 *
 * Guarantees:
 * - `POST pods/NAME/binding` (core/v1 Binding, `target.kind: Node`) sets `spec.nodeName` and the
 *   `PodScheduled` condition and answers 201 with a Success Status, as the pod registry's
 *   BindingREST; a pod already bound → 409 `Operation cannot be fulfilled on pods/binding "X": pod X
 *   is already assigned to node "N"`; a pod being deleted → 409 `… pod X is being deleted, cannot
 *   be assigned to a host`;
 * - `POST pods/NAME/eviction` (policy/v1 Eviction) deletes the pod with the eviction's
 *   `deleteOptions` (graceful, see garbage-collector.ts) and answers 201 with a Success Status;
 * - `exec`, `attach`, `portforward` of an existing pod → 400 BadRequest
 *   `<what> is not supported by the development cluster …` (kubectl prints it as
 *   `Error from server (BadRequest): …`); a missing pod → 404 `pods "X" not found` first.
 * Caveats: no PodDisruptionBudgets (an eviction is never refused with 429); the binding's
 * `target` is not checked against Node objects (none are served).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiOperations, Scope, WriteResult } from './api-operations.js';
import { badRequest, conflictWithMessage, methodNotAllowed, successStatus } from './errors.js';
import type { DeleteOptions, GarbageCollector } from './garbage-collector.js';
import { asObject, cloneJson, isJsonObject, valueAt, type JsonObject, type JsonValue } from './json-clone.js';
import { servePodLog, type PodLogSource } from './pod-logs.js';

/** The pod subresources this module answers (status is api-operations'). */
export const POD_SUBRESOURCES: ReadonlySet<string> = new Set(['log', 'binding', 'eviction', 'exec', 'attach', 'portforward']);

const STREAMING_ALTERNATIVES: Record<string, string> = {
  exec: 'kubectl exec needs a container runtime; read what the container does with kubectl logs',
  attach: 'kubectl attach needs a container runtime; read what the container writes with kubectl logs -f',
  portforward:
    'kubectl port-forward needs a container runtime; reach a pod behind a Service through the API server proxy: kubectl get --raw /api/v1/namespaces/NAMESPACE/services/NAME:PORT/proxy/PATH',
};

export interface PodSubresourceContext {
  readonly ops: ApiOperations;
  readonly gc: GarbageCollector;
  readonly logSource: PodLogSource | undefined;
  /** The request body, parsed (POST only). */
  readonly readBody: () => Promise<JsonValue>;
}

/**
 * Answers `METHOD /api/v1/namespaces/NS/pods/NAME/<subresource>`. Returns the write result to send
 * (binding, eviction), or undefined when `res` was answered here (log).
 */
export async function servePodSubresource(
  ctx: PodSubresourceContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  scope: Scope,
  name: string,
  subresource: string,
): Promise<WriteResult | undefined> {
  const method = req.method ?? 'GET';
  const pod = ctx.ops.getStored(scope, name);
  switch (subresource) {
    case 'log':
      if (method !== 'GET') throw methodNotAllowed(method, 'Pod');
      servePodLog(pod, url.searchParams, ctx.logSource, res);
      return undefined;
    case 'binding':
      if (method !== 'POST') throw methodNotAllowed(method, 'Binding');
      return bindPod(ctx.ops, scope, name, await ctx.readBody());
    case 'eviction': {
      if (method !== 'POST') throw methodNotAllowed(method, 'Eviction');
      const body = asObject(await ctx.readBody()) ?? {};
      const deleteOptions: DeleteOptions = asObject(body.deleteOptions) ?? {};
      ctx.gc.deleteObject(scope, name, deleteOptions, false);
      return { code: 201, body: { ...successStatus({}), code: 201 }, warnings: [] };
    }
    default: {
      const what = subresource === 'portforward' ? 'port forwarding' : subresource;
      throw badRequest(`${what} is not supported by the development cluster (pods/${subresource} of pod ${name}): ${STREAMING_ALTERNATIVES[subresource]}`);
    }
  }
}

/** BindingREST.Create: assigns the pod to `target.name`. */
function bindPod(ops: ApiOperations, scope: Scope, name: string, body: JsonValue): WriteResult {
  const nodeName = valueAt(body, ['target', 'name']);
  if (typeof nodeName !== 'string' || nodeName === '') throw badRequest('Binding target.name must be set');
  const pod = ops.getStored(scope, name);
  const current = valueAt(pod, ['spec', 'nodeName']);
  if (pod.metadata.deletionTimestamp) throw conflictWithMessage('', 'pods/binding', name, `pod ${name} is being deleted, cannot be assigned to a host`);
  if (typeof current === 'string' && current !== '') {
    throw conflictWithMessage('', 'pods/binding', name, `pod ${name} is already assigned to node "${current}"`);
  }
  const next = cloneJson(pod);
  const spec: JsonObject = asObject(next.spec) ?? {};
  spec.nodeName = nodeName;
  next.spec = spec;
  const status: JsonObject = asObject(next.status) ?? {};
  const conditions = Array.isArray(status.conditions) ? status.conditions.filter((c) => !(isJsonObject(c) && c.type === 'PodScheduled')) : [];
  conditions.push({ type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z') });
  status.conditions = conditions;
  next.status = status;
  ops.commitPut(scope.groupResource, next, pod);
  return { code: 201, body: { ...successStatus({}), code: 201 }, warnings: [] };
}
