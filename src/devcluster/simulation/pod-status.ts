/**
 * Pod status documents as a kubelet writes them, for each stage of the simulated pod lifecycle:
 * ContainerCreating → Running (ready or not) → crashed (CrashLoopBackOff, restarts counted), and
 * ErrImagePull / ImagePullBackOff. Field names, reasons and messages follow the kubelet
 * (pkg/kubelet/kubelet_pods.go, images/types.go, container/sync_result.go).
 *
 * Also decides the failure mode of a pod from its pod spec: the image TAG of any container
 * selects it (`crashloop`, `missing`, `notready`; anything else runs normally).
 */
import type { V1ContainerStatus, V1Pod, V1PodCondition, V1PodStatus } from '@kubernetes/client-node';

export type PodFailureMode = 'none' | 'crashloop' | 'missing' | 'notready';

/** The tag of an image reference (`repo:tag`, `registry:5000/repo:tag@sha…`), or '' when none. */
export function imageTag(image: string | undefined): string {
  if (!image) return '';
  const withoutDigest = image.split('@')[0];
  const lastSlash = withoutDigest.lastIndexOf('/');
  const colon = withoutDigest.lastIndexOf(':');
  return colon > lastSlash ? withoutDigest.slice(colon + 1) : '';
}

/** Failure mode chosen through the pod spec: the first container whose image tag names one. */
export function podFailureMode(pod: V1Pod): PodFailureMode {
  for (const c of pod.spec?.containers ?? []) {
    const tag = imageTag(c.image);
    if (tag === 'crashloop' || tag === 'missing' || tag === 'notready') return tag;
  }
  return 'none';
}

export type ContainerStage =
  | { kind: 'creating' }
  | { kind: 'image-pull'; backOff: boolean }
  | { kind: 'running'; ready: boolean; startedAt: Date }
  | { kind: 'crashed'; backOffSeconds: number; lastStartedAt: Date; finishedAt: Date };

export interface PodRuntimeView {
  readonly stage: ContainerStage;
  readonly restartCount: number;
  readonly podIP: string | null;
  readonly hostIP: string;
  readonly startTime: Date;
  /** Stable fake container id per pod (changes per restart via restartCount). */
  readonly containerIdSeed: string;
}

function condition(type: string, ok: boolean, now: Date, reason?: string, message?: string): V1PodCondition {
  const c: V1PodCondition = { type, status: ok ? 'True' : 'False', lastTransitionTime: now };
  if (!ok && reason) c.reason = reason;
  if (!ok && message) c.message = message;
  return c;
}

function containerId(seed: string, name: string, restart: number): string {
  let h = 0;
  const text = `${seed}/${name}/${restart}`;
  for (let i = 0; i < text.length; i++) h = (Math.imul(h, 31) + text.charCodeAt(i)) >>> 0;
  return `containerd://${h.toString(16).padStart(8, '0').repeat(8)}`;
}

/** The full pod status for `view`, with `previous` conditions' transition times kept when unchanged. */
export function buildPodStatus(pod: V1Pod, view: PodRuntimeView, now: Date): V1PodStatus {
  const stage = view.stage;
  const containers = pod.spec?.containers ?? [];
  const names = containers.map((c) => c.name);
  const ready = stage.kind === 'running' && stage.ready;
  const started = stage.kind === 'running';
  const statuses: V1ContainerStatus[] = containers.map((c) => {
    const s: V1ContainerStatus = {
      name: c.name,
      image: c.image ?? '',
      imageID: stage.kind === 'creating' || stage.kind === 'image-pull' ? '' : `${c.image}@sha256:${'0'.repeat(64)}`,
      ready,
      started,
      restartCount: view.restartCount,
      state: {},
      lastState: {},
    };
    if (stage.kind !== 'creating' && stage.kind !== 'image-pull') s.containerID = containerId(view.containerIdSeed, c.name, view.restartCount);
    switch (stage.kind) {
      case 'creating':
        s.state = { waiting: { reason: 'ContainerCreating' } };
        break;
      case 'image-pull':
        s.state = stage.backOff
          ? { waiting: { reason: 'ImagePullBackOff', message: `Back-off pulling image "${c.image}"` } }
          : { waiting: { reason: 'ErrImagePull', message: `rpc error: code = NotFound desc = failed to pull and unpack image "${c.image}": not found` } };
        break;
      case 'running':
        s.state = { running: { startedAt: stage.startedAt } };
        break;
      case 'crashed':
        s.state = {
          waiting: {
            reason: 'CrashLoopBackOff',
            message: `back-off ${stage.backOffSeconds}s restarting failed container=${c.name} pod=${pod.metadata?.name}_${pod.metadata?.namespace}(${pod.metadata?.uid})`,
          },
        };
        break;
    }
    if (view.restartCount > 0 && stage.kind !== 'creating') {
      const finishedAt = stage.kind === 'crashed' ? stage.finishedAt : now;
      const lastStartedAt = stage.kind === 'crashed' ? stage.lastStartedAt : now;
      s.lastState = {
        terminated: {
          exitCode: 1,
          reason: 'Error',
          startedAt: lastStartedAt,
          finishedAt,
          containerID: containerId(view.containerIdSeed, c.name, view.restartCount - 1),
        },
      };
    }
    return s;
  });
  const notReadyMessage = `containers with unready status: [${names.join(' ')}]`;
  const status: V1PodStatus = {
    phase: stage.kind === 'creating' || stage.kind === 'image-pull' ? 'Pending' : 'Running',
    conditions: [
      condition('PodReadyToStartContainers', stage.kind !== 'creating', now),
      condition('Initialized', true, now),
      condition('Ready', ready, now, 'ContainersNotReady', notReadyMessage),
      condition('ContainersReady', ready, now, 'ContainersNotReady', notReadyMessage),
      condition('PodScheduled', true, now),
    ],
    hostIP: view.hostIP,
    hostIPs: [{ ip: view.hostIP }],
    startTime: view.startTime,
    containerStatuses: statuses,
    qosClass: pod.status?.qosClass ?? 'BestEffort',
  };
  if (view.podIP) {
    status.podIP = view.podIP;
    status.podIPs = [{ ip: view.podIP }];
  }
  // keep lastTransitionTime of conditions whose status did not change (as the kubelet does)
  for (const c of status.conditions!) {
    const prev = pod.status?.conditions?.find((p) => p.type === c.type);
    if (prev && prev.status === c.status && prev.lastTransitionTime) c.lastTransitionTime = prev.lastTransitionTime;
  }
  return status;
}
