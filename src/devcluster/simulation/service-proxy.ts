/**
 * The handler behind the dev cluster's service proxy,
 * `/api/v1/namespaces/NS/services/NAME[:PORT]/proxy/PATH`, resolving as the real API server does:
 * Service → port (by name or number) → selector → a ready Pod with an IP → the process listening
 * on the target port "in" that pod, which here is the simulated Flink JobManager's REST endpoint.
 *
 * Errors are the real server's Status bodies:
 * - no such Service → 404 `services "NAME" not found`;
 * - no such port on the Service → 503 `no service port "P" found for service "NAME"`;
 * - no ready endpoint → 503 `no endpoints available for service "NAME"`;
 * - a ready pod where nothing listens on the target port (no JobManager there, a JobManager whose
 *   REST endpoint is down through `simulator.rest.unavailable`, or another port) → 503
 *   `error trying to reach service: dial tcp IP:PORT: connect: connection refused`.
 * A reached JobManager answers with Flink's status code and JSON body (flink-rest-api.ts); a
 * `multipart/form-data` request body (jar upload) is handed over decoded (flink-jar-uploads.ts).
 *
 * Guarantees: reads only the informer caches (no API request per proxied call); never throws into
 * the API server (every failure is answered).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { V1Pod, V1Service, V1ServicePort } from '@kubernetes/client-node';
import type { ServiceProxyTarget } from '../dev-cluster.js';
import { handleFlinkRequest } from './flink-rest-api.js';
import type { FlinkProcessRuntime } from './flink-process-runtime.js';
import type { LineageRecorder } from './lineage-recorder.js';
import { podIsReady } from './replicaset-controller.js';
import type { SimulationInformer } from './simulation-informer.js';
import type { RandomSource } from './simulation-random.js';
import { PodLabelIndex } from './pod-label-index.js';
import { multipartBoundary, parseMultipartFormData } from './flink-jar-uploads.js';

export interface ServiceProxyDeps {
  readonly services: SimulationInformer<V1Service>;
  readonly pods: SimulationInformer<V1Pod>;
  readonly runtime: FlinkProcessRuntime;
  readonly lineage: LineageRecorder;
  readonly random: RandomSource;
}

function sendStatus(res: ServerResponse, code: number, reason: string, message: string, details?: Record<string, unknown>): void {
  const body: Record<string, unknown> = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
  if (details) body['details'] = details;
  const text = JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

function servicePort(svc: V1Service, port: string): V1ServicePort | undefined {
  const ports = svc.spec?.ports ?? [];
  if (port === '') return ports.length === 1 ? ports[0] : undefined;
  return ports.find((p) => p.name === port || String(p.port) === port);
}

/** The container port number a Service targetPort refers to in `pod` (named ports resolved). */
function targetPortNumber(sp: V1ServicePort, pod: V1Pod): number | undefined {
  const target = sp.targetPort ?? sp.port;
  if (typeof target === 'number') return target;
  if (/^\d+$/.test(String(target))) return Number(target);
  for (const c of pod.spec?.containers ?? []) {
    const named = c.ports?.find((p) => p.name === target);
    if (named) return named.containerPort;
  }
  return undefined;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export class SimulatedServiceProxy {
  private readonly index: PodLabelIndex;

  constructor(private readonly deps: ServiceProxyDeps) {
    this.index = new PodLabelIndex((namespace, name) => deps.pods.get(namespace, name));
    deps.pods.on((type, pod) => this.index.observe(type, pod));
  }

  /** The dev cluster's ServiceProxyHandler. */
  readonly handle = (req: IncomingMessage, res: ServerResponse, target: ServiceProxyTarget): void => {
    this.serve(req, res, target).catch((error: unknown) => {
      if (!res.headersSent)
        sendStatus(res, 503, 'ServiceUnavailable', `error trying to reach service: ${error instanceof Error ? error.message : String(error)}`);
      else res.destroy();
    });
  };

  private async serve(req: IncomingMessage, res: ServerResponse, target: ServiceProxyTarget): Promise<void> {
    const svc = this.deps.services.get(target.namespace, target.service);
    if (!svc) {
      sendStatus(res, 404, 'NotFound', `services "${target.service}" not found`, { name: target.service, kind: 'services' });
      return;
    }
    const sp = servicePort(svc, target.port);
    if (!sp) {
      sendStatus(res, 503, 'ServiceUnavailable', `no service port "${target.port}" found for service "${target.service}"`);
      return;
    }
    const selector = svc.spec?.selector ?? {};
    const ready = this.index.select(target.namespace, selector).filter((p) => !p.metadata?.deletionTimestamp && p.status?.podIP && podIsReady(p));
    if (ready.length === 0) {
      sendStatus(res, 503, 'ServiceUnavailable', `no endpoints available for service "${target.service}"`);
      return;
    }
    const pod = ready[Math.floor(this.deps.random() * ready.length)];
    const portNumber = targetPortNumber(sp, pod);
    const jm = this.deps.runtime.jobManagerOf(pod.metadata!.uid!);
    if (!jm || !jm.restAvailable() || portNumber !== jm.launch.settings.restPort) {
      sendStatus(
        res,
        503,
        'ServiceUnavailable',
        `error trying to reach service: dial tcp ${pod.status!.podIP}:${portNumber ?? sp.port}: connect: connection refused`,
      );
      return;
    }
    const raw = await readBody(req);
    const url = new URL(target.path, 'http://jobmanager');
    const boundary = multipartBoundary(req.headers['content-type']);
    // multipart/form-data (jar uploads): the files, and the JSON body in the `request` attribute (FileUploadHandler)
    const multipart = boundary === null ? undefined : parseMultipartFormData(raw, boundary);
    const text = boundary === null ? raw.toString('utf8') : (multipart?.attributes.get('request') ?? '');
    let body: unknown;
    if (text.trim() !== '') {
      try {
        body = JSON.parse(text);
      } catch {
        const bad = JSON.stringify({ errors: ['Request did not match expected format.'] });
        res.writeHead(400, { 'Content-Type': 'application/json; charset=UTF-8', 'Content-Length': Buffer.byteLength(bad) });
        res.end(bad);
        return;
      }
    }
    const answer = handleFlinkRequest(jm, { method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, body, multipart }, this.deps.lineage);
    const out = JSON.stringify(answer.body);
    res.writeHead(answer.status, { 'Content-Type': 'application/json; charset=UTF-8', 'Content-Length': Buffer.byteLength(out) });
    res.end(out);
  }
}
