/**
 * The names of Flink's configuration options (Flink 1.15 … 2.x), for telling a typo in
 * `spec.flinkConfiguration` from a real key (src/api/flink-configuration-typos.ts).
 *
 * Source: the configuration reference of Flink's documentation ("Configuration" page, built from
 * the tables in apache/flink docs/layouts/shortcodes/generated/*.html: core, checkpointing,
 * execution_checkpointing, pipeline, deployment, execution, high_availability, kubernetes_config,
 * all_jobmanager/all_taskmanager sections, rest, metric, restart strategies, security, table
 * config and optimizer), for the releases 1.15–1.20 and 2.0–2.x. The names only, written down by
 * hand; no descriptions. Deprecated and fallback keys that some supported release still reads are
 * included (e.g. `state.checkpoints.dir`, `state.backend`, `high-availability`,
 * `restart-strategy`, `execution.savepoint.path`, `akka.*` before the Pekko rename).
 *
 * Three kinds of names:
 * - {@link FLINK_OPTION_KEYS}: exact keys;
 * - {@link FLINK_MAP_OPTION_KEYS}: keys whose value is a map; written as nested YAML
 *   (`kubernetes.jobmanager.annotations: {team: a}`) they flatten to `<key>.<entry>`, so any key
 *   under them is theirs;
 * - {@link USER_SEGMENT_PATTERNS}: families whose names carry a segment the user chooses
 *   (`metrics.reporter.<name>.*`, `containerized.master.env.<VAR>`, file system and S3 settings,
 *   …) or that are too many and too open to list (`env.*`, RocksDB/ForSt tuning, the autoscaler).
 *
 * Caveats: the list covers the sections a FlinkDeployment commonly sets; sections it leaves out
 * (YARN, connectors, SQL gateway, the History Server's finer keys) are far from every listed key,
 * so their keys are not taken for typos (the edit-distance threshold of the typo check, not this
 * list, decides that). The operator's own keys (`kubernetes.operator.*`) are in
 * src/runtime/apache-option-catalog.ts, not here.
 */

/** The keys of a whitespace-separated list (one section of the reference). */
function keys(list: string): string[] {
  return list.split(/\s+/).filter((key) => key !== '');
}

/** Core, class loading, file systems, parallelism (core_configuration, expert_class_loading). */
const CORE = keys(`
  classloader.check-leaked-classloader classloader.fail-on-metaspace-oom-error classloader.parent-first-patterns.additional
  classloader.parent-first-patterns.default classloader.resolve-order fs.allowed-fallback-filesystems fs.default-scheme
  fs.output.always-create-directory fs.overwrite-files io.tmp.dirs parallelism.default
  plugin.classloader.parent-first-patterns.additional plugin.classloader.parent-first-patterns.default
  cluster.intercept-user-system-exit cluster.processes.halt-on-fatal-error cluster.registration.initial-timeout
  cluster.registration.max-timeout cluster.registration.error-delay cluster.registration.refused-registration-delay
  cluster.services.shutdown-timeout cluster.io-pool.size cluster.thread-dump.stacktrace-max-depth
  cluster.uncaught-exception-handling cluster.evenly-spread-out-slots cluster.fine-grained-resource-management.enabled
  cluster.declarative-resource-management.enabled cluster.resource-blocklist.enabled cluster.resource-blocklist.item.timeout
  cluster.resource-blocklist.item.timeout-check-interval heartbeat.interval heartbeat.timeout heartbeat.rpc-failure-threshold
  blob.server.port blob.service.ssl.enabled blob.client.socket.timeout blob.client.connect.timeout blob.fetch.backlog
  blob.fetch.num-concurrent blob.fetch.retries blob.offload.minsize blob.service.cleanup.interval blob.storage.directory
  local.number-taskmanager local.start-webserver execution.attached execution.job-listeners execution.job-status-changed-listeners
  execution.program-config.enabled execution.program-config.wildcards execution.shutdown-on-application-finish
  execution.shutdown-on-attached-exit execution.submit-failed-job-on-application-error execution.target execution.batch-shuffle-mode
  execution.buffer-timeout execution.buffer-timeout.enabled execution.buffer-timeout.interval execution.runtime-mode
  execution.sort.keyed.partition.memory execution.sort.partition.memory execution.allow-client-job-configurations
  execution.interval-during-backlog
`);

/** Pipeline (pipeline_configuration, execution_config). */
const PIPELINE = keys(`
  pipeline.auto-generate-uids pipeline.auto-type-registration pipeline.auto-watermark-interval pipeline.cached-files
  pipeline.classpaths pipeline.closure-cleaner-level pipeline.default-kryo-serializers pipeline.force-avro pipeline.force-kryo
  pipeline.force-kryo-avro pipeline.generic-types pipeline.jars pipeline.max-parallelism pipeline.name pipeline.description
  pipeline.object-reuse pipeline.operator-chaining pipeline.operator-chaining.enabled
  pipeline.operator-chaining.chain-operators-with-different-max-parallelism pipeline.registered-kryo-types
  pipeline.registered-pojo-types pipeline.serialization-config pipeline.time-characteristic pipeline.vertex-description-mode
  pipeline.vertex-name-include-index-prefix pipeline.watermark-alignment.allow-unaligned-source-splits
  pipeline.watermark-alignment.update-interval
`);

/** Checkpointing, state backends, savepoints, recovery (checkpointing, execution_checkpointing, state backends): the 1.x names (fallback keys of the 1.20/2.x ones) and the new ones; the common RocksDB keys (the finer ones are a pattern below). */
const STATE = keys(`
  state.backend state.backend.type state.backend.incremental state.backend.local-recovery state.backend.async
  state.backend.fs.memory-threshold state.backend.fs.write-buffer-size state.backend.fs.checkpointdir state.checkpoint-storage
  state.checkpoints.dir state.checkpoints.num-retained state.checkpoints.create-subdir state.checkpoint.cleaner.parallel-mode
  state.savepoints.dir state.storage.fs.memory-threshold state.storage.fs.write-buffer-size taskmanager.state.local.root-dirs
  state.backend.latency-track.keyed-state-enabled state.backend.latency-track.sample-interval
  state.backend.latency-track.history-size state.backend.latency-track.state-name-as-variable
  state.latency-track.keyed-state-enabled state.latency-track.sample-interval state.latency-track.history-size
  state.latency-track.state-name-as-variable state.backend.changelog.enabled state.backend.changelog.storage
  state.backend.changelog.periodic-materialize.interval state.backend.changelog.max-failures-allowed state.changelog.enabled
  state.changelog.storage state.changelog.periodic-materialize.interval state.changelog.max-failures-allowed
  state.changelog.periodic-materialize.enabled dstl.dfs.base-path dstl.dfs.batch.persist-delay dstl.dfs.batch.persist-size-threshold
  dstl.dfs.compression.enabled dstl.dfs.discard.num-threads dstl.dfs.download.local-cache.idle-timeout-ms
  dstl.dfs.preemptive-persist-threshold dstl.dfs.upload.buffer-size dstl.dfs.upload.max-attempts dstl.dfs.upload.max-in-flight
  dstl.dfs.upload.next-attempt-delay dstl.dfs.upload.num-threads dstl.dfs.upload.retry-policy dstl.dfs.upload.timeout
  execution.checkpointing.aligned-checkpoint-timeout execution.checkpointing.alignment-timeout
  execution.checkpointing.checkpoints-after-tasks-finish.enabled execution.checkpointing.checkpoints-after-tasks-finish
  execution.checkpointing.cleaner.parallel-mode execution.checkpointing.create-subdir execution.checkpointing.data-inline-threshold
  execution.checkpointing.dir execution.checkpointing.externalized-checkpoint-retention
  execution.checkpointing.file-merging.across-checkpoint-boundary execution.checkpointing.file-merging.enabled
  execution.checkpointing.file-merging.max-file-size execution.checkpointing.file-merging.max-space-amplification
  execution.checkpointing.file-merging.pool-blocking execution.checkpointing.incremental execution.checkpointing.interval
  execution.checkpointing.interval-during-backlog execution.checkpointing.local-backup.dirs
  execution.checkpointing.local-backup.enabled execution.checkpointing.max-concurrent-checkpoints execution.checkpointing.min-pause
  execution.checkpointing.mode execution.checkpointing.num-retained
  execution.checkpointing.recover-without-channel-state.checkpoint-id execution.checkpointing.savepoint-dir
  execution.checkpointing.snapshot-compression execution.checkpointing.storage execution.checkpointing.timeout
  execution.checkpointing.tolerable-failed-checkpoints execution.checkpointing.unaligned execution.checkpointing.unaligned.enabled
  execution.checkpointing.unaligned.forced execution.checkpointing.unaligned.interruptible-timers.enabled
  execution.checkpointing.unaligned.max-subtasks-per-channel-state-file execution.checkpointing.unaligned.during-recovery.enabled
  execution.checkpointing.write-buffer-size execution.checkpointing.approximate-local-recovery execution.savepoint.path
  execution.savepoint.ignore-unclaimed-state execution.savepoint-restore-mode execution.state-recovery.path
  execution.state-recovery.claim-mode execution.state-recovery.ignore-unclaimed-state execution.state-recovery.from-local
  execution.state-recovery.without-channel-state.checkpoint-id
  state.backend.rocksdb.localdir state.backend.rocksdb.timer-service.factory state.backend.rocksdb.timer-service.cache-size
  state.backend.rocksdb.checkpoint.transfer.thread.num state.backend.rocksdb.predefined-options
  state.backend.rocksdb.options-factory state.backend.rocksdb.memory.managed state.backend.rocksdb.memory.fixed-per-slot
  state.backend.rocksdb.memory.fixed-per-tm state.backend.rocksdb.memory.high-prio-pool-ratio
  state.backend.rocksdb.memory.write-buffer-ratio state.backend.rocksdb.memory.partitioned-index-filters
  state.backend.rocksdb.write-batch-size state.backend.rocksdb.restore-overlap-fraction-threshold
  state.backend.rocksdb.use-ingest-db-restore-mode state.backend.rocksdb.incremental-restore-async-compact-after-rescale
  state.backend.rocksdb.rescaling.use-delete-files-in-range
`);

/** Restart and cleanup strategies (restart_strategy, fixed_delay, failure_rate, exponential_delay, cleanup). */
const RESTART = keys(`
  restart-strategy restart-strategy.type restart-strategy.fixed-delay.attempts restart-strategy.fixed-delay.delay
  restart-strategy.failure-rate.delay restart-strategy.failure-rate.failure-rate-interval
  restart-strategy.failure-rate.max-failures-per-interval restart-strategy.exponential-delay.attempts-before-reset-backoff
  restart-strategy.exponential-delay.backoff-multiplier restart-strategy.exponential-delay.initial-backoff
  restart-strategy.exponential-delay.jitter-factor restart-strategy.exponential-delay.max-backoff
  restart-strategy.exponential-delay.reset-backoff-threshold cleanup-strategy cleanup-strategy.type
  cleanup-strategy.fixed-delay.attempts cleanup-strategy.fixed-delay.delay cleanup-strategy.exponential-delay.attempts
  cleanup-strategy.exponential-delay.initial-backoff cleanup-strategy.exponential-delay.max-backoff
`);

/** JobManager: RPC, scheduling, failover, memory (all_jobmanager_section, job_manager, expert_scheduling). */
const JOB_MANAGER = keys(`
  jobmanager.rpc.address jobmanager.rpc.port jobmanager.rpc.bind-port jobmanager.bind-host jobmanager.archive.fs.dir
  jobmanager.execution.attempts-history-size jobmanager.execution.failover-strategy jobmanager.execution.num-job-vertex-to-execute
  jobmanager.failure-enrichers jobmanager.future-pool.size jobmanager.io-pool.size jobmanager.resource-id
  jobmanager.retrieve-taskmanager-hostname jobmanager.scheduler jobmanager.scheduler.mode
  jobmanager.partition.release-during-job-execution jobmanager.partition.hybrid.partition-data-consume-constraint
  jobmanager.adaptive-scheduler.min-parallelism-increase jobmanager.adaptive-scheduler.resource-stabilization-timeout
  jobmanager.adaptive-scheduler.resource-wait-timeout jobmanager.adaptive-scheduler.scaling-interval.min
  jobmanager.adaptive-scheduler.scaling-interval.max jobmanager.adaptive-scheduler.submission.resource-stabilization-timeout
  jobmanager.adaptive-scheduler.submission.resource-wait-timeout jobmanager.adaptive-scheduler.executing.cooldown-after-rescaling
  jobmanager.adaptive-scheduler.executing.resource-stabilization-timeout
  jobmanager.adaptive-scheduler.rescale-trigger.max-checkpoint-failures jobmanager.adaptive-scheduler.rescale-trigger.max-delay
  jobmanager.adaptive-scheduler.prefer-minimal-taskmanagers jobmanager.adaptive-batch-scheduler.max-parallelism
  jobmanager.adaptive-batch-scheduler.min-parallelism jobmanager.adaptive-batch-scheduler.avg-data-volume-per-task
  jobmanager.adaptive-batch-scheduler.default-source-parallelism jobmanager.adaptive-batch-scheduler.speculative.enabled
  jobmanager.heap.size jobmanager.heap.mb jobmanager.memory.enable-jvm-direct-memory-limit jobmanager.memory.flink.size
  jobmanager.memory.heap.size jobmanager.memory.jvm-metaspace.size jobmanager.memory.jvm-overhead.fraction
  jobmanager.memory.jvm-overhead.max jobmanager.memory.jvm-overhead.min jobmanager.memory.off-heap.size
  jobmanager.memory.process.size execution.batch.adaptive.auto-parallelism.enabled
  execution.batch.adaptive.auto-parallelism.min-parallelism execution.batch.adaptive.auto-parallelism.max-parallelism
  execution.batch.adaptive.auto-parallelism.avg-data-volume-per-task
  execution.batch.adaptive.auto-parallelism.default-source-parallelism execution.batch.speculative.enabled
  execution.batch.job-recovery.enabled slot.request.timeout slot.request.max-interval slot.idle.timeout
  slotmanager.number-of-slots.max slotmanager.number-of-slots.min slotmanager.max-total-resource.cpu
  slotmanager.max-total-resource.memory slotmanager.min-total-resource.cpu slotmanager.min-total-resource.memory
  slotmanager.redundant-taskmanager-num slotmanager.taskmanager-timeout slotmanager.request-timeout resourcemanager.job.timeout
  resourcemanager.rpc.port resourcemanager.standalone.start-up-time resourcemanager.start-worker-max-failure-rate
  resourcemanager.start-worker-retry-interval resourcemanager.taskmanager-registration.timeout resourcemanager.taskmanager-timeout
  resourcemanager.previous-worker.recovery.timeout job-result-store.delete-on-commit job-result-store.storage-path
`);

/** TaskManager: slots, RPC, memory, network (all_taskmanager_section, task_manager_memory, all_taskmanager_network_section). */
const TASK_MANAGER = keys(`
  task.cancellation.interval task.cancellation.timeout task.cancellation.timers.timeout taskmanager.bind-host
  taskmanager.data.bind-port taskmanager.data.port taskmanager.data.ssl.enabled taskmanager.debug.memory.log
  taskmanager.debug.memory.log-interval taskmanager.host taskmanager.jvm-exit-on-oom taskmanager.memory.min-segment-size
  taskmanager.memory.segment-size taskmanager.network.bind-policy taskmanager.numberOfTaskSlots taskmanager.registration.timeout
  taskmanager.resource-id taskmanager.rpc.bind-port taskmanager.rpc.port taskmanager.slot.timeout taskmanager.load-balance.mode
  taskmanager.heap.size taskmanager.heap.mb taskmanager.memory.size taskmanager.memory.fraction taskmanager.memory.off-heap
  taskmanager.memory.preallocate taskmanager.memory.flink.size taskmanager.memory.framework.heap.size
  taskmanager.memory.framework.off-heap.size taskmanager.memory.framework.off-heap.batch-shuffle.size
  taskmanager.memory.jvm-metaspace.size taskmanager.memory.jvm-overhead.fraction taskmanager.memory.jvm-overhead.max
  taskmanager.memory.jvm-overhead.min taskmanager.memory.managed.consumer-weights taskmanager.memory.managed.fraction
  taskmanager.memory.managed.size taskmanager.memory.network.fraction taskmanager.memory.network.max taskmanager.memory.network.min
  taskmanager.memory.process.size taskmanager.memory.task.heap.size taskmanager.memory.task.off-heap.size
  taskmanager.network.memory.fraction taskmanager.network.memory.max taskmanager.network.memory.min
  taskmanager.network.memory.buffers-per-channel taskmanager.network.memory.floating-buffers-per-gate
  taskmanager.network.memory.max-buffers-per-channel taskmanager.network.memory.max-overdraft-buffers-per-gate
  taskmanager.network.memory.exclusive-buffers-request-timeout-ms taskmanager.network.memory.read-buffer.required-per-gate.max
  taskmanager.network.memory.buffer-debloat.enabled taskmanager.network.memory.buffer-debloat.period
  taskmanager.network.memory.buffer-debloat.samples taskmanager.network.memory.buffer-debloat.target
  taskmanager.network.memory.buffer-debloat.threshold-percentages taskmanager.network.blocking-shuffle.compression.enabled
  taskmanager.network.blocking-shuffle.type taskmanager.network.compression.codec taskmanager.network.detailed-metrics
  taskmanager.network.max-num-tcp-connections taskmanager.network.partition-request-timeout
  taskmanager.network.request-backoff.initial taskmanager.network.request-backoff.max taskmanager.network.retries
  taskmanager.network.sort-shuffle.min-buffers taskmanager.network.sort-shuffle.min-parallelism
  taskmanager.network.tcp-connection.enable-reuse-across-jobs taskmanager.runtime.hashjoin-bloom-filters
  taskmanager.runtime.large-record-handler taskmanager.runtime.max-fan taskmanager.runtime.sort-spilling-threshold
  taskmanager.exit-on-fatal-akka-error
`);

/** High availability (high_availability, common/expert HA sections, ZooKeeper and Kubernetes HA). */
const HIGH_AVAILABILITY = keys(`
  high-availability high-availability.type high-availability.cluster-id high-availability.storageDir
  high-availability.jobmanager.port high-availability.job.delay high-availability.kubernetes.leader-election.lease-duration
  high-availability.kubernetes.leader-election.renew-deadline high-availability.kubernetes.leader-election.retry-period
  kubernetes.leader-election.lease-duration kubernetes.leader-election.renew-deadline kubernetes.leader-election.retry-period
  high-availability.zookeeper.client.acl high-availability.zookeeper.client.connection-timeout
  high-availability.zookeeper.client.ensemble-tracker high-availability.zookeeper.client.max-retry-attempts
  high-availability.zookeeper.client.retry-wait high-availability.zookeeper.client.session-timeout
  high-availability.zookeeper.client.tolerate-suspended-connections high-availability.zookeeper.path.jobgraphs
  high-availability.zookeeper.path.root high-availability.zookeeper.path.running-registry high-availability.zookeeper.path.namespace
  high-availability.zookeeper.quorum high-availability.zookeeper.path.checkpoint-counter
  high-availability.zookeeper.path.checkpoints high-availability.zookeeper.path.mesos-workers zookeeper.sasl.disable
  zookeeper.sasl.login-context-name zookeeper.sasl.service-name
`);

/** Native Kubernetes (kubernetes_config_configuration). */
const KUBERNETES = keys(`
  kubernetes.client.io-pool.size kubernetes.client.user-agent kubernetes.cluster-id kubernetes.config.file
  kubernetes.container.image kubernetes.container.image.ref kubernetes.container.image.pull-policy
  kubernetes.container.image.pull-secrets kubernetes.container-start-command-template kubernetes.context
  kubernetes.decorator.hadoop-conf-mount.enabled kubernetes.decorator.kerberos-mount.enabled kubernetes.entry.path
  kubernetes.env.secretKeyRef kubernetes.flink.conf.dir kubernetes.flink.log.dir kubernetes.hadoop.conf.config-map.name
  kubernetes.hostnetwork.enabled kubernetes.jobmanager.cpu kubernetes.jobmanager.cpu.amount kubernetes.jobmanager.cpu.limit-factor
  kubernetes.jobmanager.entrypoint.args kubernetes.jobmanager.memory.limit-factor kubernetes.jobmanager.owner.reference
  kubernetes.jobmanager.replicas kubernetes.jobmanager.service-account kubernetes.jobmanager.tolerations kubernetes.namespace
  kubernetes.pod-template-file kubernetes.pod-template-file.default kubernetes.pod-template-file.jobmanager
  kubernetes.pod-template-file.taskmanager kubernetes.rest-service.exposed.node-port-address-type
  kubernetes.rest-service.exposed.type kubernetes.service-account kubernetes.taskmanager.cpu kubernetes.taskmanager.cpu.amount
  kubernetes.taskmanager.cpu.limit-factor kubernetes.taskmanager.entrypoint.args kubernetes.taskmanager.memory.limit-factor
  kubernetes.taskmanager.service-account kubernetes.taskmanager.tolerations kubernetes.transactional-operation.max-retries
  kubernetes.kerberos.krb5-conf.config-map.name kubernetes.kerberos.keytab.secret.name kubernetes.kubeconfig
`);

/** REST endpoint and web UI (rest, web, expert_rest). */
const REST_AND_WEB = keys(`
  rest.address rest.port rest.bind-address rest.bind-port rest.async.store-duration rest.await-leader-timeout
  rest.cache.checkpoint-statistics.size rest.cache.checkpoint-statistics.timeout rest.client.max-content-length
  rest.connection-timeout rest.flamegraph.cleanup-interval rest.flamegraph.delay-between-samples rest.flamegraph.enabled
  rest.flamegraph.num-samples rest.flamegraph.refresh-interval rest.flamegraph.stack-depth rest.idleness-timeout rest.profiling.dir
  rest.profiling.duration-max rest.profiling.enabled rest.profiling.history-size rest.retry.delay rest.retry.max-attempts
  rest.server.max-content-length rest.server.numThreads rest.server.thread-priority rest.url-prefix rest.path
  web.access-control-allow-origin web.address web.cancel.enable web.checkpoints.history web.exception-history-size web.history
  web.log.path web.port web.refresh-interval web.rescale.enable web.submit.enable web.timeout web.tmpdir web.upload.dir
  web.ssl.enabled web.backpressure.cleanup-interval web.backpressure.delay-between-samples web.backpressure.num-samples
  web.backpressure.refresh-interval historyserver.archive.clean-expired-jobs historyserver.archive.fs.dir
  historyserver.archive.fs.refresh-interval historyserver.archive.retained-jobs historyserver.log.jobmanager.url-pattern
  historyserver.log.taskmanager.url-pattern historyserver.web.address historyserver.web.port historyserver.web.refresh-interval
  historyserver.web.ssl.enabled historyserver.web.tmpdir
`);

/** Metrics, traces, events (metric_configuration; the per-reporter keys are a pattern). */
const METRICS = keys(`
  metrics.reporters metrics.reporter.class metrics.fetcher.update-interval metrics.internal.query-service.port
  metrics.internal.query-service.thread-priority metrics.job.status.enable metrics.latency.granularity metrics.latency.history-size
  metrics.latency.interval metrics.scope.delimiter metrics.scope.jm metrics.scope.jm.job metrics.scope.jm-job
  metrics.scope.jm-operator metrics.scope.operator metrics.scope.task metrics.scope.tm metrics.scope.tm.job metrics.scope.tm-job
  metrics.system-resource metrics.system-resource-probing-interval traces.reporters events.reporters jmx.server.port
`);

/** Security: SSL, Kerberos, delegation tokens (security_configuration, security SSL and auth sections). */
const SECURITY = keys(`
  security.ssl.enabled security.ssl.algorithms security.ssl.protocol security.ssl.provider security.ssl.verify-hostname
  security.ssl.keystore security.ssl.keystore-password security.ssl.key-password security.ssl.truststore
  security.ssl.truststore-password security.ssl.internal.enabled security.ssl.internal.keystore
  security.ssl.internal.keystore-password security.ssl.internal.keystore-type security.ssl.internal.key-password
  security.ssl.internal.truststore security.ssl.internal.truststore-password security.ssl.internal.truststore-type
  security.ssl.internal.cert.fingerprint security.ssl.internal.close-notify-flush-timeout security.ssl.internal.handshake-timeout
  security.ssl.internal.session-cache-size security.ssl.internal.session-timeout security.ssl.rest.enabled
  security.ssl.rest.authentication-enabled security.ssl.rest.cert.fingerprint security.ssl.rest.keystore
  security.ssl.rest.keystore-password security.ssl.rest.keystore-type security.ssl.rest.key-password security.ssl.rest.truststore
  security.ssl.rest.truststore-password security.ssl.rest.truststore-type security.context.factory.classes
  security.module.factory.classes security.kerberos.access.hadoopFileSystems security.kerberos.fetch.delegation-token
  security.kerberos.krb5-conf.path security.kerberos.login.contexts security.kerberos.login.keytab security.kerberos.login.principal
  security.kerberos.login.use-ticket-cache security.kerberos.relogin.period security.kerberos.tokens.renewal.retry.backoff
  security.kerberos.tokens.renewal.time-ratio security.delegation.tokens.enabled security.delegation.tokens.renewal.retry.backoff
  security.delegation.tokens.renewal.time-ratio
`);

/** The RPC system (Akka in Flink ≤ 1.17, Pekko from 1.18): the common keys; pools and transport are a pattern. */
const RPC = [
  'ask.timeout',
  'framesize',
  'lookup.timeout',
  'tcp.timeout',
  'startup-timeout',
  'throughput',
  'jvm-exit-on-fatal-error',
  'log.lifecycle.events',
  'retry-gate-closed-for',
  'ssl.enabled',
].flatMap((key) => [`akka.${key}`, `pekko.${key}`]);

/** Table API / SQL: the basics a FlinkDeployment sets (table_config, execution_config and optimizer_config). */
const TABLE = keys(`
  table.builtin-catalog-name table.builtin-database-name table.catalog-modification.listeners table.column-expansion-strategy
  table.display.max-column-width table.dml-sync table.dynamic-table-options.enabled table.generated-code.max-length
  table.local-time-zone table.plan.compile.catalog-objects table.plan.force-recompile table.plan.restore.catalog-objects
  table.resources.download-dir table.rtas-ctas.atomicity-enabled table.sql-dialect table.exec.async-lookup.buffer-capacity
  table.exec.async-lookup.output-mode table.exec.async-lookup.timeout table.exec.disabled-operators table.exec.legacy-cast-behaviour
  table.exec.mini-batch.allow-latency table.exec.mini-batch.enabled table.exec.mini-batch.size
  table.exec.resource.default-parallelism table.exec.simplify-operator-name-enabled table.exec.sink.keyed-shuffle
  table.exec.sink.not-null-enforcer table.exec.sink.type-length-enforcer table.exec.sink.upsert-materialize
  table.exec.source.cdc-events-duplicate table.exec.source.idle-timeout table.exec.state.ttl table.exec.uid.format
  table.exec.uid.generation table.exec.window-agg.buffer-size-limit table.optimizer.agg-phase-strategy
  table.optimizer.distinct-agg.split.bucket-num table.optimizer.distinct-agg.split.enabled table.optimizer.dynamic-filtering.enabled
  table.optimizer.join-reorder-enabled table.optimizer.multiple-input-enabled table.optimizer.non-deterministic-update.strategy
  table.optimizer.reuse-source-enabled table.optimizer.reuse-sub-plan-enabled table.optimizer.runtime-filter.enabled
  table.optimizer.source.report-statistics-enabled
`);

/** Every exact Flink option key this file knows, once. */
export const FLINK_OPTION_KEYS: readonly string[] = [
  ...new Set<string>([
    ...CORE,
    ...PIPELINE,
    ...STATE,
    ...RESTART,
    ...JOB_MANAGER,
    ...TASK_MANAGER,
    ...HIGH_AVAILABILITY,
    ...KUBERNETES,
    ...REST_AND_WEB,
    ...METRICS,
    ...SECURITY,
    ...RPC,
    ...TABLE,
  ]),
];

/**
 * Map-typed options: nested YAML under them (`pipeline.global-job-parameters: {env: prod}`) flattens
 * to `<key>.<entry>`, and every such key belongs to the option.
 */
export const FLINK_MAP_OPTION_KEYS: readonly string[] = [
  'pipeline.global-job-parameters',
  'pipeline.jobvertex-parallelism-overrides',
  'kubernetes.jobmanager.annotations',
  'kubernetes.jobmanager.labels',
  'kubernetes.jobmanager.node-selector',
  'kubernetes.taskmanager.annotations',
  'kubernetes.taskmanager.labels',
  'kubernetes.taskmanager.node-selector',
  'kubernetes.rest-service.annotations',
  'kubernetes.secrets',
  'taskmanager.memory.managed.consumer-weights',
];

/** A family of keys with a user-chosen (or open-ended) part, and why it is one. */
export interface UserSegmentPattern {
  readonly pattern: RegExp;
  /** The family as the documentation writes it, e.g. `metrics.reporter.<name>.*`. */
  readonly family: string;
}

const family = (name: string, pattern: RegExp): UserSegmentPattern => ({ family: name, pattern });

/** Key families never taken for typos: their names carry a segment the user chooses, or they are open-ended. */
export const USER_SEGMENT_PATTERNS: readonly UserSegmentPattern[] = [
  family('metrics.reporter.<name>.*', /^metrics\.reporter\.[^.]+\./),
  family('traces.reporter.<name>.*', /^traces\.reporter\.[^.]+\./),
  family('events.reporter.<name>.*', /^events\.reporter\.[^.]+\./),
  family('containerized.master.env.<VAR>', /^containerized\.master\.env\./),
  family('containerized.jobmanager.env.<VAR>', /^containerized\.jobmanager\.env\./),
  family('containerized.taskmanager.env.<VAR>', /^containerized\.taskmanager\.env\./),
  family('kubernetes.<component>.annotations', /^kubernetes\.[^.]+\.annotations(\.|$)/),
  family('kubernetes.<component>.labels', /^kubernetes\.[^.]+\.labels(\.|$)/),
  family('external-resource.<name>.*', /^external-resources?\./),
  family('env.*', /^env\./),
  family('s3.* (S3 file systems)', /^s3[an]?\./),
  family('fs.* (file system settings, e.g. fs.s3a.*, fs.azure.*)', /^fs\./),
  family('gs.* (Google Cloud Storage)', /^gs\./),
  family('presto.s3.*, hive.s3.*', /^(presto|hive)\.s3\./),
  family('security.delegation.token.provider.<service>.*', /^security\.delegation\.token\.provider\./),
  family('state.backend.rocksdb.* (RocksDB tuning)', /^state\.backend\.rocksdb\./),
  family('state.backend.forst.* (ForSt, Flink 2.x)', /^state\.backend\.forst\./),
  family(
    'akka.* / pekko.* pools and transport',
    /^(akka|pekko)\.(client-socket-worker-pool|server-socket-worker-pool|fork-join-executor|remote-fork-join-executor|transport|watch)\./,
  ),
  family('taskmanager.network.netty.*, hybrid-shuffle.*', /^taskmanager\.network\.(netty|hybrid-shuffle)\./),
  family('python.* (PyFlink)', /^python\./),
  family('sql-client.*, sql-gateway.*', /^sql-(client|gateway)\./),
  family('yarn.*', /^yarn\./),
  family('job.autoscaler.* (the Apache operator autoscaler)', /^job\.autoscaler\./),
  family('$internal.* (set by Flink and the operator)', /^\$internal\./),
  family('internal.*', /^internal\./),
];

let exactKeys: ReadonlySet<string> | undefined;

/** Whether `key` is one of {@link FLINK_OPTION_KEYS} or {@link FLINK_MAP_OPTION_KEYS}. */
export function isFlinkOptionKey(key: string): boolean {
  exactKeys ??= new Set([...FLINK_OPTION_KEYS, ...FLINK_MAP_OPTION_KEYS]);
  return exactKeys.has(key);
}

/** Whether `key` is an entry of a map-typed option or in a family of {@link USER_SEGMENT_PATTERNS}. */
export function isInOpenKeyFamily(key: string): boolean {
  if (FLINK_MAP_OPTION_KEYS.some((mapKey) => key.startsWith(`${mapKey}.`))) return true;
  return USER_SEGMENT_PATTERNS.some((p) => p.pattern.test(key));
}
