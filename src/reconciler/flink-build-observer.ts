/**
 * The Flink build (version, revision) a FlinkDeployment's JobManager runs, for status.clusterInfo:
 * asked with GET /config once per JobManager start, then remembered.
 *
 * The Apache operator asks on every observe of a READY JobManager (AbstractFlinkDeploymentObserver
 * .observeClusterInfo → AbstractFlinkService.getClusterInfo). The build cannot change while the
 * same JobManager runs, so here it is asked again only when the JobManager Deployment became
 * available at another time than the one remembered (a restart, an upgrade, a new image: the
 * Recreate strategy makes it unavailable in between), keeping the periodic reconcile of an
 * unchanged deployment free of extra requests (design/performance.md).
 *
 * Guarantees: at most one GET /config per JobManager start and operator process while it answers;
 * a failed call is not remembered (the next pass asks again) and never fails the pass (Apache logs
 * "Exception while fetching cluster info" and goes on), except the fencing and precondition errors
 * that must stop it.
 * Caveats: in memory: after an operator restart each READY JobManager is asked once more. Builds
 * are shared between resources (one object per distinct version and revision, not one per resource).
 */
import type { FlinkDeploymentV1 } from '../api/flink-deployment.js';
import { type FlinkBuild, flinkBuildOf } from '../flink/flink-cluster-info.js';
import { FlinkRestError } from '../flink/flink-rest-error.js';
import { isFencingOrPrecondition } from './fenced-pass.js';
import type { Observation } from './observation.js';
import type { FlinkJobApi, ReconcilerLog } from './reconciler-dependencies.js';

interface KnownBuild {
  /** The JobManager start it belongs to: when its Deployment became available (epoch ms), or -1 when unknown. */
  readonly startedAt: number;
  readonly build: FlinkBuild;
}

export class FlinkBuildObserver {
  private readonly known = new Map<string, KnownBuild>();
  /** one FlinkBuild per distinct (version, revision): thousands of JobManagers run a handful of builds */
  private readonly builds = new Map<string, FlinkBuild>();

  constructor(private readonly log: ReconcilerLog) {}

  /**
   * `observed` with `flinkBuild` when its JobManager is READY: the remembered build of this
   * JobManager start, else GET /config. Unchanged otherwise.
   */
  async observe(deployment: FlinkDeploymentV1, observed: Observation, api: Pick<FlinkJobApi, 'getConfig'>): Promise<Observation> {
    if (observed.jobManager !== 'READY') return observed;
    const uid = deployment.metadata.uid ?? `${deployment.metadata.namespace}/${deployment.metadata.name}`;
    const startedAt = observed.jobManagerAvailableSince ?? -1;
    const known = this.known.get(uid);
    if (known && known.startedAt === startedAt) return { ...observed, flinkBuild: known.build };
    try {
      const build = this.shared(flinkBuildOf(await api.getConfig()));
      this.known.set(uid, { startedAt, build });
      return { ...observed, flinkBuild: build };
    } catch (error) {
      if (isFencingOrPrecondition(error)) throw error;
      const fields = { namespace: deployment.metadata.namespace, name: deployment.metadata.name, err: (error as Error)?.message ?? String(error) };
      if (error instanceof FlinkRestError) this.log.debug(fields, 'Flink REST GET /config failed; clusterInfo keeps its version');
      else this.log.warn(fields, 'Exception while fetching cluster info');
      return observed;
    }
  }

  private shared(build: FlinkBuild): FlinkBuild {
    const key = `${build.version}\u0000${build.revision ?? ''}`;
    const known = this.builds.get(key);
    if (known && known.revision === build.revision) return known;
    // a bound on distinct builds, against a flood of odd answers
    if (this.builds.size >= 64) this.builds.clear();
    this.builds.set(key, build);
    return build;
  }

  /** Drops what is remembered of a deleted resource. */
  forget(uid: string): void {
    this.known.delete(uid);
  }
}
