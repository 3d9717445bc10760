/**
 * `GET /api/v1/namespaces/NS/pods/NAME/log`: the API server's half of `kubectl logs`. It parses and
 * validates the PodLogOptions query, picks the container as the pod registry does
 * (`pkg/registry/core/pod/strategy.go` LogLocation/validateContainer) and hands the request to the
 * node's log source (the simulated kubelet, attached with `setPodLogSource`), which checks the
 * container's state (kubelet `validateContainerLogStatus`) and streams the lines.
 *
 * Guarantees:
 * - errors are worded as the real server words them: 404 `pods "X" not found`; 400
 *   `a container name must be specified for pod X, choose one of: [a b]`; 400
 *   `container c is not valid for pod X`; 422 `PodLogOptions "X" is invalid: …` for a negative
 *   tailLines, a limitBytes/sinceSeconds below 1, or both sinceSeconds and sinceTime;
 * - a pod not bound to a node (`spec.nodeName` empty) answers 200 with an empty body, as
 *   LogLocation returns no location for it;
 * - without a log source (api-only mode: no kubelet) a bound pod answers what the real server
 *   answers when the kubelet cannot be reached: 500 `Get "https://<hostIP>:10250/containerLogs/…":
 *   dial tcp <hostIP>:10250: connect: connection refused`.
 * Caveats: `stream` (PodLogsQuerySplitStreams, alpha) and `insecureSkipTLSVerifyBackend` are ignored;
 * the API server never depends on the simulation: it only knows the PodLogSource interface.
 */
import type { ServerResponse } from 'node:http';
import { ApiError, badRequest, forbiddenValue, invalid, invalidValue, type FieldError } from './errors.js';
import { asObject, valueAt, type JsonObject } from './json-clone.js';
import type { KubeObject } from './resource-types.js';

/** The PodLogOptions of a log request (the query parameters, parsed). */
export interface PodLogOptions {
  readonly container: string;
  readonly follow: boolean;
  readonly previous: boolean;
  readonly timestamps: boolean;
  readonly tailLines?: number;
  readonly sinceSeconds?: number;
  /** epoch milliseconds */
  readonly sinceTime?: number;
  readonly limitBytes?: number;
}

/** One log request as the node receives it (what the API server's proxy to the kubelet carries). */
export interface PodLogRequest {
  readonly namespace: string;
  readonly pod: string;
  readonly uid: string;
  /** The container, resolved (never empty). */
  readonly container: string;
  /** `status.containerStatuses[]` (or init container status) entry of that container, if any. */
  readonly containerStatus: JsonObject | undefined;
  readonly options: PodLogOptions;
}

/**
 * Where a node's container logs come from. `serveLog` either throws an ApiError (the kubelet's
 * refusal, e.g. a container still waiting to start) before writing anything, or answers `res`
 * with 200 text/plain and streams the lines (kept open while `follow` and the container runs).
 */
export interface PodLogSource {
  serveLog(request: PodLogRequest, res: ServerResponse): void;
}

/** The kubelet's port, as the API server dials it. */
const KUBELET_PORT = 10250;

function integerParam(q: URLSearchParams, name: string): number | undefined {
  const raw = q.get(name);
  if (raw === null || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n)) throw badRequest(`strconv.ParseInt: parsing ${JSON.stringify(raw)}: invalid syntax`);
  return n;
}

function booleanParam(q: URLSearchParams, name: string): boolean {
  const raw = q.get(name);
  if (raw === null || raw === '') return false;
  if (['true', '1', 't', 'T', 'TRUE', 'True'].includes(raw)) return true;
  if (['false', '0', 'f', 'F', 'FALSE', 'False'].includes(raw)) return false;
  throw badRequest(`strconv.ParseBool: parsing ${JSON.stringify(raw)}: invalid syntax`);
}

/** The query of a log request, validated as `ValidatePodLogOptions` (pkg/apis/core/validation) does. */
export function parsePodLogOptions(q: URLSearchParams, podName: string): PodLogOptions {
  const tailLines = integerParam(q, 'tailLines');
  const sinceSeconds = integerParam(q, 'sinceSeconds');
  const limitBytes = integerParam(q, 'limitBytes');
  const sinceTimeText = q.get('sinceTime');
  let sinceTime: number | undefined;
  if (sinceTimeText) {
    sinceTime = Date.parse(sinceTimeText);
    if (Number.isNaN(sinceTime)) throw badRequest(`parsing time ${JSON.stringify(sinceTimeText)} as "2006-01-02T15:04:05Z07:00": cannot parse`);
  }
  const errors: FieldError[] = [];
  if (tailLines !== undefined && tailLines < 0) errors.push(invalidValue('tailLines', tailLines, 'must be greater than or equal to 0'));
  if (limitBytes !== undefined && limitBytes < 1) errors.push(invalidValue('limitBytes', limitBytes, 'must be greater than 0'));
  if (sinceSeconds !== undefined && sinceTime !== undefined) errors.push(forbiddenValue('', 'at most one of `sinceTime` or `sinceSeconds` may be specified'));
  if (sinceSeconds !== undefined && sinceSeconds < 1) errors.push(invalidValue('sinceSeconds', sinceSeconds, 'must be greater than 0'));
  if (errors.length) throw invalid('', 'PodLogOptions', podName, errors);
  return {
    container: q.get('container') ?? '',
    follow: booleanParam(q, 'follow'),
    previous: booleanParam(q, 'previous'),
    timestamps: booleanParam(q, 'timestamps'),
    ...(tailLines !== undefined ? { tailLines } : {}),
    ...(sinceSeconds !== undefined ? { sinceSeconds } : {}),
    ...(sinceTime !== undefined ? { sinceTime } : {}),
    ...(limitBytes !== undefined ? { limitBytes } : {}),
  };
}

function containerNames(pod: KubeObject, field: 'initContainers' | 'containers' | 'ephemeralContainers'): string[] {
  const list = valueAt(pod, ['spec', field]);
  if (!Array.isArray(list)) return [];
  return list.map((c) => asObject(c)?.name).filter((n): n is string => typeof n === 'string');
}

/**
 * The container a log/exec/attach request is for, as the pod registry's validateContainer picks
 * it: the only container when none is named; otherwise a name the pod has (init, regular or
 * ephemeral container).
 */
export function resolvePodContainer(pod: KubeObject, requested: string): string {
  const name = pod.metadata.name;
  const all = [...containerNames(pod, 'initContainers'), ...containerNames(pod, 'containers'), ...containerNames(pod, 'ephemeralContainers')];
  if (!requested) {
    const regular = containerNames(pod, 'containers');
    if (regular.length === 1) return regular[0];
    if (regular.length === 0) throw badRequest(`a container name must be specified for pod ${name}`);
    throw badRequest(`a container name must be specified for pod ${name}, choose one of: [${all.join(' ')}]`);
  }
  if (!all.includes(requested)) throw badRequest(`container ${requested} is not valid for pod ${name}`);
  return requested;
}

function containerStatusOf(pod: KubeObject, container: string): JsonObject | undefined {
  for (const field of ['containerStatuses', 'initContainerStatuses', 'ephemeralContainerStatuses']) {
    const list = valueAt(pod, ['status', field]);
    if (!Array.isArray(list)) continue;
    for (const entry of list) {
      const status = asObject(entry);
      if (status?.name === container) return status;
    }
  }
  return undefined;
}

/** Answers a log request for the stored `pod` (already looked up: a missing pod is the caller's 404). */
export function servePodLog(pod: KubeObject, query: URLSearchParams, source: PodLogSource | undefined, res: ServerResponse): void {
  const options = parsePodLogOptions(query, pod.metadata.name);
  const container = resolvePodContainer(pod, options.container);
  const nodeName = valueAt(pod, ['spec', 'nodeName']);
  if (typeof nodeName !== 'string' || nodeName === '') {
    // LogLocation: "If pod has not been assigned a host, return an empty location" → an empty answer
    res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': '0' });
    res.end();
    return;
  }
  const namespace = pod.metadata.namespace ?? '';
  if (!source) {
    const hostIP = valueAt(pod, ['status', 'hostIP']);
    const host = typeof hostIP === 'string' && hostIP ? hostIP : nodeName;
    const url = `https://${host}:${KUBELET_PORT}/containerLogs/${namespace}/${pod.metadata.name}/${container}`;
    throw new ApiError(500, '', `Get "${url}": dial tcp ${host}:${KUBELET_PORT}: connect: connection refused`);
  }
  source.serveLog(
    { namespace, pod: pod.metadata.name, uid: pod.metadata.uid ?? '', container, containerStatus: containerStatusOf(pod, container), options },
    res,
  );
}
