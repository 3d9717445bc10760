/**
 * The HTTP face of the emulated API server: routing of Kubernetes REST paths to
 * {@link ApiOperations}, discovery, OpenAPI, watches, tables, the service proxy hook, fault
 * injection, the request log, and the optional admin endpoint.
 *
 * Guarantees: every error is a `Status` body with the real code/reason/message; every request
 * (including failed and fault-injected ones) lands in the request log with its audit verb;
 * protobuf request bodies are decoded for the kinds `kubectl create` sends them for
 * (protobuf-bodies.ts) and refused with 415 otherwise, with a message pointing at the JSON workaround.
 * Lists and watches: collection-reads.ts (query options in query-parameters.ts).
 * Authentication and RBAC authorization: access-control.ts (hooks at the entry, once the resource
 * path is parsed, and before writes of RBAC objects); HTTPS when `tls` is given.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { Logger } from 'pino';
import type { AccessControl } from './access-control.js';
import { answerAdminRequest } from './admin-endpoint.js';
import { admitThroughWebhooks, type AdmissionOperation } from './admission-webhooks.js';
import { ADMIN_USER } from './authentication.js';
import { admitRequestThroughPolicies } from './validating-admission-policy.js';
import { acceptsAggregatedV2, aggregatedDiscovery, AGGREGATED_DISCOVERY_V2 } from './aggregated-discovery.js';
import { ApiOperations, scopeFor, type FieldValidation, type Scope, type WriteOptions, type WriteResult } from './api-operations.js';
import {
  ApiError,
  badRequest,
  conflict,
  internalError,
  methodNotAllowed,
  pathNotFound,
  serviceUnavailable,
  tooManyRequests,
  unsupportedMediaType,
} from './errors.js';
import { FaultInjector, type FaultFailure, type WatchExpiry } from './faults.js';
import { GarbageCollector, isDryRun, type DeleteOptions } from './garbage-collector.js';
import { isJsonObject, parseJsonText, type JsonObject, type JsonValue } from './json-clone.js';
import { isKubeObject } from './object-meta-validation.js';
import { OpenApiDocuments, openApiV2Response } from './openapi.js';
import { patchTypeOf } from './patches.js';
import type { PodLogSource } from './pod-logs.js';
import { POD_SUBRESOURCES, servePodSubresource } from './pod-subresources.js';
import { decodeProtobufBody, PROTOBUF_UNSUPPORTED_MESSAGE } from './protobuf-bodies.js';
import type { ResourceRegistry } from './resource-registry.js';
import type { ResourceType } from './resource-types.js';
import { MAX_REQUEST_BODY_BYTES, readRequestBody } from './request-body.js';
import { RequestLog, type RequestLogEntry } from './request-log.js';
import { parseFieldSelector, parseLabelSelector } from './selectors.js';
import { tableOf, tableRowObjectOf, wantsTable } from './tables.js';
import { serveCollectionRead } from './collection-reads.js';
import { queryBool, queryOptionalBool, validateDryRun, writeOptionsKindOf } from './query-parameters.js';

export interface ServiceProxyTarget {
  namespace: string;
  service: string;
  port: string;
  path: string;
}
export type ServiceProxyHandler = (req: IncomingMessage, res: ServerResponse, target: ServiceProxyTarget) => void;

export interface HttpApiServerOptions {
  ops: ApiOperations;
  gc: GarbageCollector;
  registry: ResourceRegistry;
  faults: FaultInjector;
  requestLog: RequestLog;
  adminEndpoint: boolean;
  bookmarkIntervalMs: number;
  logger?: Logger;
  serviceProxy?: ServiceProxyHandler;
  /** serve HTTPS with this key and certificate (PEM) instead of HTTP (kubectl sends bearer tokens only over TLS) */
  tls?: { key: string; cert: string };
  /** authentication + authorization (access-control.ts); without it every request is allowed */
  access?: AccessControl;
}

const VERSION_INFO = {
  major: '1',
  minor: '32',
  gitVersion: 'v1.32.0',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2024-12-11T00:00:00Z',
  goVersion: 'go1.23.4',
  compiler: 'gc',
  platform: 'linux/amd64',
};

interface ParsedResourcePath {
  type: ResourceType;
  namespace: string;
  /** path had /namespaces/NS/ (or the type is cluster-scoped) */
  namespaced: boolean;
  name: string;
  subresource: string;
  rest: string;
}

/** The body; over the limit, the 413 a client gets to read (request-body.ts). */
function readBody(req: IncomingMessage): Promise<Buffer> {
  return readRequestBody(req, MAX_REQUEST_BODY_BYTES);
}

function auditVerb(method: string, hasName: boolean, watch: boolean): string {
  switch (method) {
    case 'GET':
    case 'HEAD':
      return watch ? 'watch' : hasName ? 'get' : 'list';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return hasName ? 'delete' : 'deletecollection';
    default:
      return method.toLowerCase();
  }
}

export class HttpApiServer {
  readonly server: http.Server | https.Server;
  private readonly openapi: OpenApiDocuments;
  private serviceProxy: ServiceProxyHandler | undefined;
  private podLogSource: PodLogSource | undefined;
  private serverAddress = '127.0.0.1:0';

  constructor(private readonly o: HttpApiServerOptions) {
    this.openapi = new OpenApiDocuments(o.registry);
    this.serviceProxy = o.serviceProxy;
    const handler = (req: IncomingMessage, res: ServerResponse) => this.handle(req, res);
    this.server = o.tls ? https.createServer({ key: o.tls.key, cert: o.tls.cert }, handler) : http.createServer(handler);
    this.server.keepAliveTimeout = 30_000;
  }

  setServiceProxy(h: ServiceProxyHandler | undefined): void {
    this.serviceProxy = h;
  }

  /** The node's container logs (the simulated kubelet); without one, bound pods' logs answer "kubelet unreachable". */
  setPodLogSource(source: PodLogSource | undefined): void {
    this.podLogSource = source;
  }

  setServerAddress(addr: string): void {
    this.serverAddress = addr;
  }

  // ---------------------------------------------------------------- entry

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const started = Date.now();
    const url = new URL(req.url ?? '/', 'http://localhost');
    const entry: RequestLogEntry = {
      time: started,
      method: req.method ?? 'GET',
      path: url.pathname,
      verb: (req.method ?? 'GET').toLowerCase(),
      apiGroup: '',
      version: '',
      resource: '',
      subresource: '',
      namespace: '',
      name: '',
      code: 0,
      requestBytes: Number(req.headers['content-length'] ?? 0) || 0,
      responseBytes: 0,
      userAgent: String(req.headers['user-agent'] ?? ''),
      durationMs: 0,
    };
    let logged = false;
    /** streaming watches are logged when they start (see route) */
    const recordedEarly = { value: false };
    const origWrite = res.write.bind(res);
    const origEnd = res.end.bind(res);
    const count = (chunk: unknown) => {
      if (typeof chunk === 'string') entry.responseBytes += Buffer.byteLength(chunk);
      else if (chunk instanceof Uint8Array) entry.responseBytes += chunk.length;
    };
    // the response's writes (including a service proxy's) pass through these, with the same overloads
    type WriteCallback = (error: Error | null | undefined) => void;
    res.write = (chunk: unknown, encodingOrCallback?: BufferEncoding | WriteCallback, callback?: WriteCallback): boolean => {
      count(chunk);
      return typeof encodingOrCallback === 'string' ? origWrite(chunk, encodingOrCallback, callback) : origWrite(chunk, encodingOrCallback ?? callback);
    };
    res.end = (chunk?: unknown, encodingOrCallback?: BufferEncoding | (() => void), callback?: () => void): ServerResponse => {
      if (chunk !== undefined && typeof chunk !== 'function') count(chunk);
      return typeof encodingOrCallback === 'string' ? origEnd(chunk, encodingOrCallback, callback) : origEnd(chunk, encodingOrCallback ?? callback);
    };
    const log = () => {
      if (logged) return;
      logged = true;
      // no status line sent (an injected reset, a client gone before the answer): code 0, "no answer"
      entry.code = entry.code || (res.headersSent ? res.statusCode : 0);
      entry.durationMs = Date.now() - started;
      if (!recordedEarly.value) this.o.requestLog.record(entry);
    };
    res.on('finish', log);
    res.on('close', () => {
      if (entry.verb === 'watch') entry.durationMs = Date.now() - started;
      log();
    });
    this.route(req, res, url, entry, recordedEarly).catch((e) => this.sendError(res, e));
  }

  private sendJson(res: ServerResponse, code: number, body: string | object, headers: Record<string, string> = {}): void {
    if (res.headersSent) {
      res.end();
      return;
    }
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    res.writeHead(code, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', ...headers });
    res.end(text);
  }

  private sendError(res: ServerResponse, e: unknown): void {
    const err = e instanceof ApiError ? e : internalError(e instanceof Error ? e.message : String(e));
    if (!(e instanceof ApiError)) this.o.logger?.error({ err: e }, 'dev-cluster internal error');
    this.sendJson(res, err.code, err.toStatus(), err.headers);
  }

  // ---------------------------------------------------------------- routing

  private async route(req: IncomingMessage, res: ServerResponse, url: URL, entry: RequestLogEntry, recordedEarly: { value: boolean }): Promise<void> {
    const path = url.pathname.replace(/\/+$/, '') || '/';
    const segs = path
      .split('/')
      .filter((s) => s.length > 0)
      .map((s) => decodeURIComponent(s));
    const method = req.method ?? 'GET';

    if (segs[0] === '__devcluster') {
      if (!this.o.adminEndpoint) throw pathNotFound();
      return this.admin(req, res, url, segs.slice(1));
    }
    this.o.access?.admitRequest(req, url.pathname, segs);
    if (segs[0] === 'version') return this.sendJson(res, 200, VERSION_INFO);
    if (['healthz', 'livez', 'readyz'].includes(segs[0] ?? '')) {
      res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end('ok');
      return;
    }
    if (segs[0] === 'openapi') return this.openapiRoute(req, res, segs);

    let group: string;
    let version: string | undefined;
    let rest: string[];
    if (segs[0] === 'api') {
      if (segs.length === 1) {
        if (acceptsAggregatedV2(req.headers.accept))
          return this.sendJson(res, 200, aggregatedDiscovery(this.o.registry, true), { 'Content-Type': AGGREGATED_DISCOVERY_V2 });
        return this.sendJson(res, 200, this.o.registry.apiVersionsDoc(this.serverAddress));
      }
      group = '';
      version = segs[1];
      rest = segs.slice(2);
    } else if (segs[0] === 'apis') {
      if (segs.length === 1) {
        if (acceptsAggregatedV2(req.headers.accept))
          return this.sendJson(res, 200, aggregatedDiscovery(this.o.registry, false), { 'Content-Type': AGGREGATED_DISCOVERY_V2 });
        return this.sendJson(res, 200, this.o.registry.apiGroupListDoc());
      }
      group = segs[1];
      if (segs.length === 2) {
        const g = this.o.registry.groups().find((x) => x.name === group);
        if (!g) throw pathNotFound();
        return this.sendJson(res, 200, this.o.registry.apiGroupDoc(g));
      }
      version = segs[2];
      rest = segs.slice(3);
    } else throw pathNotFound();

    if (rest.length === 0) {
      const doc = this.o.registry.apiResourceListDoc(group, version);
      if (!doc) throw pathNotFound();
      return this.sendJson(res, 200, doc);
    }
    const parsed = this.parseResourcePath(group, version, rest);
    if (!parsed) throw pathNotFound();
    const watch = queryBool(url.searchParams, 'watch');
    entry.apiGroup = group;
    entry.version = version;
    entry.resource = parsed.type.plural;
    entry.subresource = parsed.subresource;
    entry.namespace = parsed.namespace;
    entry.name = parsed.name;
    entry.verb = parsed.subresource === 'proxy' ? method.toLowerCase() : auditVerb(method, parsed.name !== '', watch);
    this.o.access?.authorizeResource(req, entry, url.searchParams);

    const fault = this.o.faults.take({
      verb: entry.verb,
      path,
      query: url.search.replace(/^\?/, ''),
      resource: entry.resource,
      subresource: entry.subresource,
      namespace: entry.namespace,
      name: entry.name,
    });
    if (fault.delayMs > 0) await new Promise((r) => setTimeout(r, fault.delayMs));
    if (fault.failure) return this.fail(req, res, fault.failure, parsed);
    if (this.o.access?.answers(parsed.type, parsed.subresource)) {
      const parseText = (text: string) => this.parseBody(text, String(req.headers['content-type'] ?? ''));
      return this.sendJson(res, 201, await this.o.access.answer(req, parsed, () => readBody(req), parseText));
    }
    if (parsed.subresource === 'proxy') return this.proxy(req, res, parsed);
    if (parsed.type.plural === 'pods' && POD_SUBRESOURCES.has(parsed.subresource)) return this.podSubresource(req, res, url, parsed);
    return this.resourceRequest(req, res, url, parsed, entry, fault.expireWatch, () => {
      // a streaming watch is logged when it starts; its bytes are added as events flow
      entry.code = 200;
      recordedEarly.value = true;
      this.o.requestLog.record(entry);
    });
  }

  private fail(req: IncomingMessage, res: ServerResponse, failure: FaultFailure, p: ParsedResourcePath): void {
    if (failure === 'reset') {
      // the request never reaches ApiOperations: nothing is written; logged with code 0 (no answer)
      req.socket.destroy();
      return;
    }
    let err: ApiError;
    if (failure.code === 409) err = conflict(p.type.group, p.type.plural, p.name || 'unknown');
    else if (failure.code === 429) err = tooManyRequests(failure.retryAfterSeconds ?? 1);
    else if (failure.code === 500) err = internalError(failure.message ?? 'injected fault');
    else if (failure.code === 503) err = serviceUnavailable(failure.message ?? 'injected fault');
    else err = new ApiError(failure.code, 'Unknown', failure.message ?? 'injected fault', {});
    if (failure.message && failure.code !== 500) (err as { message: string }).message = failure.message;
    this.sendError(res, err);
  }

  private parseResourcePath(group: string, version: string, rest: string[]): ParsedResourcePath | undefined {
    const reg = this.o.registry;
    let namespace = '';
    let r = rest;
    let namespacedPath = false;
    if (rest[0] === 'namespaces' && rest.length >= 3 && reg.resolve(group, version, rest[2])?.namespaced) {
      namespace = rest[1];
      r = rest.slice(2);
      namespacedPath = true;
    }
    const type = reg.resolve(group, version, r[0]);
    if (!type) return undefined;
    if (namespacedPath && !type.namespaced) return undefined;
    const name = r[1] ?? '';
    const subresource = r[2] ?? '';
    if (subresource) {
      const ok =
        (subresource === 'status' && type.statusSubresource) ||
        (subresource === 'scale' && type.scale) ||
        (subresource === 'proxy' && type.proxy) ||
        (subresource === 'token' && type.tokenRequest) ||
        (type.group === '' && type.plural === 'pods' && POD_SUBRESOURCES.has(subresource));
      if (!ok) return undefined;
      if (subresource !== 'proxy' && r.length > 3) return undefined;
    }
    if (!subresource && r.length > 2) return undefined;
    return { type, namespace, namespaced: namespacedPath || !type.namespaced, name, subresource, rest: r.slice(3).join('/') };
  }

  // ---------------------------------------------------------------- resources

  private async resourceRequest(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    p: ParsedResourcePath,
    entry: RequestLogEntry,
    expireWatch: WatchExpiry | undefined,
    watchStarted: () => void,
  ): Promise<void> {
    const method = req.method ?? 'GET';
    const q = url.searchParams;
    const type = p.type;
    const scope: Scope = scopeFor(type, p.namespace);
    const allNamespaces = type.namespaced && !p.namespaced;
    const optionsKind = writeOptionsKindOf(method);
    const opts: WriteOptions = {
      dryRun: optionsKind !== undefined && validateDryRun(optionsKind, q.getAll('dryRun')),
      fieldValidation: (q.get('fieldValidation') as FieldValidation | null) ?? undefined,
      fieldManager: q.get('fieldManager') ?? undefined,
      force: queryOptionalBool(q, 'force'),
      userAgent: req.headers['user-agent'] ?? '',
    };
    if (opts.fieldValidation && !['Strict', 'Warn', 'Ignore'].includes(opts.fieldValidation)) {
      throw badRequest(`fieldValidation parameter unsupported: ${opts.fieldValidation}, valid values: Ignore, Warn, Strict`);
    }
    const accept = String(req.headers.accept ?? '');
    const table = wantsTable(accept);
    const sub = p.subresource as '' | 'status' | 'scale';
    const deprecation = type.crd?.deprecationWarning;
    if (deprecation) res.setHeader('Warning', `299 - ${JSON.stringify(deprecation)}`);

    if (method === 'GET' || method === 'HEAD') {
      if (p.name && !queryBool(q, 'watch')) {
        const stored = this.o.ops.getStored(scope, p.name);
        if (sub === 'scale') return this.sendJson(res, 200, this.o.ops.scaleOf(scope, stored));
        if (table)
          return this.sendJson(
            res,
            200,
            tableOf(
              type,
              scope.groupResource,
              [this.o.ops.encode(type, stored)],
              stored.metadata.resourceVersion,
              true,
              tableRowObjectOf(q.get('includeObject')),
            ),
          );
        return this.sendJson(res, 200, this.o.ops.encodeJson(type, stored));
      }
      return serveCollectionRead(
        req,
        res,
        url,
        { scope, allNamespaces, name: p.name, table },
        {
          ops: this.o.ops,
          bookmarkIntervalMs: this.o.bookmarkIntervalMs,
          expireWatch,
          watchStarted,
          sendJson: (code, body) => this.sendJson(res, code, body),
        },
      );
    }

    const ct = String(req.headers['content-type'] ?? '');
    const bodyBytes = await readBody(req);
    entry.requestBytes = bodyBytes.length;
    let protobufBody: JsonObject | undefined;
    if (ct.includes('protobuf')) {
      if (method !== 'POST' && method !== 'PUT') throw unsupportedMediaType(PROTOBUF_UNSUPPORTED_MESSAGE);
      protobufBody = decodeProtobufBody(bodyBytes);
    }
    const raw = protobufBody ? '' : bodyBytes.toString('utf8');
    this.admit(method, p, scope, ct);
    const user = this.o.access?.userOf(req) ?? ADMIN_USER;
    const policyWarnings = admitRequestThroughPolicies(this.o.ops, { method, scope, name: p.name, subresource: p.subresource, user, query: q }, opts);
    this.o.access?.confirmRbacWrite(req, scope, p.name, protobufBody ? { json: protobufBody } : { raw, contentType: ct, patchType: patchTypeOf(ct) });
    let result: WriteResult;
    switch (method) {
      case 'POST': {
        if (p.name) throw methodNotAllowed('create', type.kind);
        if (!p.namespaced) throw methodNotAllowed('create', type.kind);
        result = this.o.ops.create(scope, protobufBody ?? this.parseBody(raw, ct), opts);
        break;
      }
      case 'PUT': {
        if (!p.name) throw methodNotAllowed('update', type.kind);
        const body = protobufBody ?? this.parseBody(raw, ct);
        result = sub === 'scale' ? this.o.ops.updateScale(scope, p.name, body, opts) : this.o.ops.update(scope, p.name, body, opts, sub);
        break;
      }
      case 'PATCH': {
        if (!p.name) throw methodNotAllowed('patch', type.kind);
        const pt = patchTypeOf(ct);
        if (!pt) {
          throw unsupportedMediaType(
            `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml${type.crd ? '' : ', application/strategic-merge-patch+json'}`,
          );
        }
        result = this.o.ops.patch(scope, p.name, pt, raw, opts, sub);
        break;
      }
      case 'DELETE': {
        const body = raw.trim() ? this.parseBody(raw, ct) : {};
        const options: DeleteOptions = isJsonObject(body) ? body : {};
        if (q.get('propagationPolicy')) options.propagationPolicy = q.get('propagationPolicy')!;
        const orphanDependents = queryOptionalBool(q, 'orphanDependents');
        if (orphanDependents !== undefined) options.orphanDependents = orphanDependents;
        if (q.get('gracePeriodSeconds')) options.gracePeriodSeconds = Number(q.get('gracePeriodSeconds'));
        if (Array.isArray(options.dryRun)) validateDryRun('DeleteOptions', options.dryRun.map(String));
        if (isDryRun(options)) opts.dryRun = true;
        if (p.name) result = this.o.gc.deleteObject(scope, p.name, options, !!opts.dryRun);
        else {
          if (!p.namespaced && type.namespaced) throw methodNotAllowed('deletecollection', type.kind);
          result = this.o.gc.deleteCollection(
            scope,
            parseLabelSelector(q.get('labelSelector')),
            parseFieldSelector(q.get('fieldSelector'), scope.groupResource),
            options,
            !!opts.dryRun,
          );
        }
        break;
      }
      default:
        throw methodNotAllowed(method, type.kind);
    }
    const headers: Record<string, string> = {};
    const warnings = [...(deprecation ? [deprecation] : []), ...result.warnings, ...policyWarnings];
    if (warnings.length) headers['Warning'] = warnings.map((w) => `299 - ${JSON.stringify(w)}`).join(', ');
    if (table && method !== 'DELETE' && isKubeObject(result.body) && result.body.kind === type.kind) {
      return this.sendJson(res, result.code, tableOf(type, scope.groupResource, [result.body], result.body.metadata.resourceVersion ?? ''), headers);
    }
    this.sendJson(res, result.code, result.body, headers);
  }

  /**
   * The admission webhooks of the write (admission-webhooks.ts), once the checks that precede them
   * on the real server are known to pass: the namespace of a create exists, the object of an
   * update/patch/delete exists (else the registry's 404 comes first).
   */
  private admit(method: string, p: ParsedResourcePath, scope: Scope, contentType: string): void {
    const { store } = this.o.ops;
    let operation: AdmissionOperation | undefined;
    if (method === 'POST') {
      if (!p.name && (!p.type.namespaced || store.get('/namespaces', '', scope.namespace))) operation = 'CREATE';
    } else if (method === 'PUT' || method === 'PATCH') {
      if (p.name && store.get(scope.groupResource, scope.namespace, p.name)) operation = 'UPDATE';
      else if (p.name && method === 'PATCH' && p.subresource === '' && patchTypeOf(contentType) === 'apply') operation = 'CREATE';
    } else if (method === 'DELETE') {
      const exists = p.name
        ? store.get(scope.groupResource, scope.namespace, p.name) !== undefined
        : [...store.list(scope.groupResource, scope.namespace || undefined)].length > 0;
      if (exists) operation = 'DELETE';
    }
    if (!operation) return;
    const { type } = p;
    const equivalentVersions = this.o.registry
      .allTypes()
      .filter((t) => t.group === type.group && t.plural === type.plural)
      .map((t) => t.version);
    admitThroughWebhooks(
      store,
      { operation, group: type.group, version: type.version, resource: type.plural, subresource: p.subresource, namespace: scope.namespace },
      equivalentVersions,
    );
  }

  private parseBody(raw: string, contentType: string): JsonValue {
    if (!raw.trim()) throw badRequest("Object 'Kind' is missing in ''");
    try {
      return parseJsonText(raw, contentType.includes('yaml'));
    } catch (e) {
      throw badRequest(`json: ${(e as Error).message}`);
    }
  }

  /** pods/NAME/{log,binding,eviction,exec,attach,portforward} (pod-subresources.ts). */
  private async podSubresource(req: IncomingMessage, res: ServerResponse, url: URL, p: ParsedResourcePath): Promise<void> {
    const body = async () => this.parseBody((await readBody(req)).toString('utf8'), String(req.headers['content-type'] ?? ''));
    const ctx = { ops: this.o.ops, gc: this.o.gc, logSource: this.podLogSource, readBody: body };
    const result = await servePodSubresource(ctx, req, res, url, scopeFor(p.type, p.namespace), p.name, p.subresource);
    if (result) this.sendJson(res, result.code, result.body);
  }

  // ---------------------------------------------------------------- service proxy

  private proxy(req: IncomingMessage, res: ServerResponse, p: ParsedResourcePath): void {
    const [service, port = ''] = p.name.split(':');
    if (!this.o.ops.store.get('/services', p.namespace, service))
      throw new ApiError(404, 'NotFound', `services "${service}" not found`, { name: service, kind: 'services' });
    const query = (req.url ?? '').includes('?') ? (req.url ?? '').slice((req.url ?? '').indexOf('?')) : '';
    const target = { namespace: p.namespace, service, port, path: `/${p.rest}${query}` };
    if (!this.serviceProxy) throw serviceUnavailable(`no endpoints available for service "${service}"`);
    this.serviceProxy(req, res, target);
  }

  // ---------------------------------------------------------------- openapi

  private openapiRoute(req: IncomingMessage, res: ServerResponse, segs: string[]): void {
    if (segs[1] === 'v2' && segs.length === 2) {
      const v2 = openApiV2Response(req.headers.accept);
      res.writeHead(v2.code, v2.headers);
      res.end(v2.body);
      return;
    }
    if (segs[1] === 'v3') {
      if (segs.length === 2) return this.sendJson(res, 200, this.openapi.root());
      const doc = this.openapi.groupVersion(segs.slice(2).join('/'));
      if (doc) return this.sendJson(res, 200, doc);
    }
    throw pathNotFound();
  }

  // ---------------------------------------------------------------- admin (admin-endpoint.ts)

  private async admin(req: IncomingMessage, res: ServerResponse, url: URL, segs: string[]): Promise<void> {
    const readJsonBody = async () => this.parseBody((await readBody(req)).toString('utf8'), 'application/json');
    const body = await answerAdminRequest(req.method ?? 'GET', url, segs, { faults: this.o.faults, requestLog: this.o.requestLog, readJsonBody });
    this.sendJson(res, 200, body);
  }
}
