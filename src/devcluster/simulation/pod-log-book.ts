/**
 * The simulated node's container logs: what `kubectl logs` reads. The kubelet opens a log per
 * container instance when it starts a container and closes it when the container stops; the
 * simulated processes (the Flink JobManager, flink-log-lines.ts) append lines to the running
 * instance. The book is the API server's PodLogSource (apiserver/pod-logs.ts) for this node.
 *
 * Guarantees:
 * - the container's state is checked as the kubelet's validateContainerLogStatus checks it, from
 *   the status the kubelet wrote: no status → 400 `container "c" in pod "X" is not available`;
 *   `previous` without `lastState.terminated` → 400 `previous terminated container "c" in pod "X"
 *   not found`; waiting without a previous instance → 400 `container "c" in pod "X" is waiting to
 *   start: ContainerCreating` (`image can't be pulled` for ErrImagePull, `trying and failing to
 *   pull image` for ImagePullBackOff);
 * - `previous` reads the instance before the last restart (one is kept, as the kubelet keeps the
 *   last terminated container); otherwise the current (or, while it waits to restart, the last)
 *   instance;
 * - tailLines, then sinceSeconds/sinceTime, then limitBytes are applied as the kubelet's log reader
 *   applies them; `timestamps` prefixes each line with its RFC3339 time with 9 fraction digits
 *   (the kubelet's RFC3339NanoFixed); `follow` keeps the answer open and streams new lines until
 *   the container instance stops (or the pod is gone, or the client leaves);
 * - memory is bounded: at most `maxLinesPerInstance` lines (default 2,000) per container instance,
 *   two instances per container; a pod's logs are dropped when the kubelet forgets the pod.
 * Caveats: stdout and stderr are one stream; lines longer than 16 KiB are not split as CRI does;
 * a rotated-away log (beyond the line bound) is simply gone.
 */
import type { ServerResponse } from 'node:http';
import type { PodLogRequest, PodLogSource } from '../apiserver/pod-logs.js';
import { ApiError } from '../apiserver/errors.js';
import { asObject, type JsonObject } from '../apiserver/json-clone.js';

interface LogLine {
  readonly at: number;
  readonly text: string;
}

type Follower = (line: LogLine | null) => void;

class ContainerInstance {
  readonly lines: LogLine[] = [];
  ended = false;
  readonly followers = new Set<Follower>();

  constructor(private readonly maxLines: number) {}

  append(line: LogLine): void {
    if (this.ended) return;
    this.lines.push(line);
    if (this.lines.length > this.maxLines) this.lines.splice(0, this.lines.length - this.maxLines);
    for (const f of this.followers) f(line);
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    for (const f of [...this.followers]) f(null);
    this.followers.clear();
  }
}

interface ContainerLog {
  current: ContainerInstance | undefined;
  previous: ContainerInstance | undefined;
}

export interface PodLogBookOptions {
  readonly maxLinesPerInstance?: number;
  readonly now?: () => number;
}

/** The kubelet's RFC3339NanoFixed: `2006-01-02T15:04:05.000000000Z07:00`. */
export function rfc3339NanoFixed(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000000Z');
}

function kubeletRefusal(message: string): ApiError {
  // the kubelet answers 400 with the error text; the API server's response checker turns that into BadRequest
  return new ApiError(400, 'BadRequest', message);
}

/** kubelet validateContainerLogStatus: undefined when logs can be read, else the refusal's text. */
export function containerLogStatusError(podName: string, container: string, status: JsonObject | undefined, previous: boolean): string | undefined {
  if (!status) return `container "${container}" in pod "${podName}" is not available`;
  const state = asObject(status.state) ?? {};
  const lastTerminated = asObject(asObject(status.lastState)?.terminated);
  const hasLast = !!lastTerminated && typeof lastTerminated.containerID === 'string' && lastTerminated.containerID !== '';
  if (previous) return hasLast ? undefined : `previous terminated container "${container}" in pod "${podName}" not found`;
  if (state.running) return undefined;
  if (state.terminated || lastTerminated) {
    const terminated = asObject(state.terminated);
    const id = terminated?.containerID;
    if ((typeof id === 'string' && id !== '') || hasLast) return undefined;
    return `container "${container}" in pod "${podName}" is terminated`;
  }
  const waiting = asObject(state.waiting);
  if (waiting) {
    if (waiting.reason === 'ErrImagePull') return `container "${container}" in pod "${podName}" is waiting to start: image can't be pulled`;
    if (waiting.reason === 'ImagePullBackOff') return `container "${container}" in pod "${podName}" is waiting to start: trying and failing to pull image`;
    return `container "${container}" in pod "${podName}" is waiting to start: ${typeof waiting.reason === 'string' ? waiting.reason : ''}`;
  }
  return `container "${container}" in pod "${podName}" is waiting to start - no logs yet`;
}

export class PodLogBook implements PodLogSource {
  private readonly pods = new Map<string, Map<string, ContainerLog>>();
  private readonly maxLines: number;
  private readonly now: () => number;

  constructor(options: PodLogBookOptions = {}) {
    this.maxLines = options.maxLinesPerInstance ?? 2_000;
    this.now = options.now ?? Date.now;
  }

  private logOf(podUid: string, container: string): ContainerLog {
    let containers = this.pods.get(podUid);
    if (!containers) this.pods.set(podUid, (containers = new Map<string, ContainerLog>()));
    let log = containers.get(container);
    if (!log) containers.set(container, (log = { current: undefined, previous: undefined }));
    return log;
  }

  /** A new instance of `container` starts (the previous one, if any, becomes `previous`). */
  containerStarted(podUid: string, container: string): void {
    const log = this.logOf(podUid, container);
    if (log.current) {
      log.current.end();
      log.previous = log.current;
    }
    log.current = new ContainerInstance(this.maxLines);
  }

  /** The running instances of the pod's containers stop (followers' streams end). */
  containersStopped(podUid: string): void {
    for (const log of this.pods.get(podUid)?.values() ?? []) log.current?.end();
  }

  /** Appends one line (without its newline) to the running instance of `container`; ignored when none runs. */
  append(podUid: string, container: string, text: string): void {
    const current = this.pods.get(podUid)?.get(container)?.current;
    current?.append({ at: this.now(), text });
  }

  /** The pod is gone: its logs are dropped. */
  forget(podUid: string): void {
    this.containersStopped(podUid);
    this.pods.delete(podUid);
  }

  /** The lines of the instance a request would read (tests and tools). */
  lines(podUid: string, container: string, previous = false): string[] {
    const log = this.pods.get(podUid)?.get(container);
    return ((previous ? log?.previous : log?.current)?.lines ?? []).map((l) => l.text);
  }

  serveLog(request: PodLogRequest, res: ServerResponse): void {
    const { options } = request;
    const refusal = containerLogStatusError(request.pod, request.container, request.containerStatus, options.previous);
    if (refusal) throw kubeletRefusal(refusal);
    const log = this.pods.get(request.uid)?.get(request.container);
    const instance = options.previous ? log?.previous : log?.current;
    res.writeHead(200, { 'Content-Type': 'text/plain', 'Cache-Control': 'no-cache, private' });
    let lines = instance?.lines ?? [];
    if (options.tailLines !== undefined) lines = options.tailLines === 0 ? [] : lines.slice(-options.tailLines);
    const since = options.sinceTime ?? (options.sinceSeconds !== undefined ? this.now() - options.sinceSeconds * 1000 : undefined);
    let budget = options.limitBytes ?? Infinity;
    const render = (line: LogLine) => `${options.timestamps ? `${rfc3339NanoFixed(line.at)} ` : ''}${line.text}\n`;
    /** Writes one line within the byte budget; false once the budget is spent. */
    const write = (line: LogLine): boolean => {
      if (since !== undefined && line.at < since) return true;
      const text = render(line);
      const bytes = Buffer.byteLength(text);
      if (bytes >= budget) {
        res.write(Buffer.from(text).subarray(0, budget));
        budget = 0;
        return false;
      }
      budget -= bytes;
      res.write(text);
      return true;
    };
    for (const line of lines) {
      if (!write(line)) {
        res.end();
        return;
      }
    }
    if (!options.follow || options.previous || !instance || instance.ended) {
      res.end();
      return;
    }
    const follower: Follower = (line) => {
      if (line && write(line)) return;
      instance.followers.delete(follower);
      res.end();
    };
    instance.followers.add(follower);
    res.on('close', () => instance.followers.delete(follower));
  }
}
