// The service's workers: `agent-sandboxes` (executeAgent, one slot per sandbox), `agent-runs`
// (runAgent, remoteRun, scheduledRun ticks, chat turns and the run activities) and `platform`
// (webhook deliveries, inline-package purges, connect logins, the file expiry sweep, bulk run
// jobs), sharing one connection, one bundle and injected resources.
import { HEARTBEAT_THROTTLE } from '../shared/runs/attempts.ts';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker, type WorkflowBundle } from '@temporalio/worker';
import type { Knex } from 'knex';
import { createChatActivities } from '../activities/chat/turn.ts';
import { createBulkRunsActivities } from '../activities/bulk-runs.ts';
import { createConnectLoginActivity } from '../activities/connect-login.ts';
import { createOAuth2Activities } from '../activities/oauth2.ts';
import { createExecuteAgentActivity } from '../activities/execute-agent.ts';
import { createPublishRunEventActivity } from '../activities/publish-run-event.ts';
import { createPurgeInlinePackageActivity } from '../activities/purge-inline-package.ts';
import { createRunStateActivities } from '../activities/run-state.ts';
import { createScheduledTickActivities } from '../activities/scheduled-tick.ts';
import { createSweepExpiredFilesActivities } from '../activities/sweep-expired-files.ts';
import { createWebhookDeliveryActivity } from '../activities/webhooks/delivery.ts';
import { workerSandboxPool } from '../activities/sandbox/pool.ts';
import type { Config } from '../shared/config.ts';
import { ensureFileSweepSchedule } from '../shared/files/sweep-schedule.ts';
import type { Logger } from '../shared/log.ts';
import { type MetricsServer, startMetricsServer } from '../shared/observability/metrics.ts';
import { installTraceContext, NO_TRACING, type Tracing } from '../shared/observability/tracing.ts';
import { fileStorage } from '../shared/files/configured-storage.ts';
import { temporalConnectionOptions } from '../shared/temporal-connection.ts';
import { AGENT_RUNS_TASK_QUEUE, AGENT_SANDBOX_TASK_QUEUE, PLATFORM_TASK_QUEUE } from '../temporal/contract/queues.ts';
import { startSandboxes } from './sandbox-startup.ts';
import { cachedWorkflowBundle } from './workflow-bundle.ts';

export { WORKFLOWS_PATH } from './workflow-entry.ts';

export interface ServiceWorkers {
  workers: Worker[];
  /** Runs every worker until shutdown(). */
  run(): Promise<void>;
  /** Stops polling, hands running agents over to other workers, lets short activities finish (10 s grace). */
  shutdown(): void;
  close(): Promise<void>;
  /** `GET /metrics` of this worker when WORKER_METRICS_PORT is set. */
  metricsUrl?: string;
}

export async function createServiceWorkers(opts: {
  config: Config;
  knex: Knex;
  log: Logger;
  temporalAddress: string;
  /** A prebuilt bundle (tests build one and share it); otherwise the cached one (workers/workflow-bundle.ts). */
  workflowBundle?: WorkflowBundle;
  /** Traces (workers/tracing.ts); off by default. A prebuilt bundle must then include WORKFLOW_TRACING_MODULE. */
  tracing?: Tracing;
  /** The Temporal SDK's own Prometheus endpoint, appended to this worker's `GET /metrics` (workers/main.ts). */
  temporalMetricsUrl?: string;
}): Promise<ServiceWorkers> {
  const { config, knex, log } = opts;
  const options = temporalConnectionOptions(config, opts.temporalAddress);
  const tracing = opts.tracing ?? NO_TRACING;
  // Traced, the plugin reaches every worker made with this connection. Its module (Temporal's
  // OpenTelemetry interceptors) loads only then.
  const traced = tracing.enabled ? await import('./tracing.ts') : undefined;
  const connection = await NativeConnection.connect({ ...options, plugins: traced ? [new traced.TracingPlugin(tracing)] : [] } as never);
  const clientConnection = await Connection.connect(options);
  const workflows = new Client({ connection: clientConnection, namespace: config.temporalNamespace, interceptors: traced?.tracingClientInterceptors(tracing) });
  // Shutting down drains: agents running here hand their runs over before the workers stop.
  const drain = new AbortController();
  // Log lines of a run's activities carry its id (shared/observability/context.ts), traced or not.
  installTraceContext();
  const sandboxes = startSandboxes(config, log);
  const deps = {
    config,
    knex,
    log,
    workflows,
    files: await fileStorage(config),
    draining: drain.signal,
    tracer: tracing.enabled ? tracing.tracer : undefined,
    sandboxPool: sandboxes ? workerSandboxPool(config, log, drain.signal) : undefined,
  };
  // One bundle for both workflow task queues, read from disk: no webpack in this process.
  const workflowBundle = opts.workflowBundle ?? (await cachedWorkflowBundle({ modules: config.modules, tracing: tracing.enabled, log }));
  const common = { connection, namespace: config.temporalNamespace, workflowBundle, shutdownGraceTime: '10 seconds' } as const;
  const execute = createExecuteAgentActivity(deps);
  const chat = config.modules.has('chat') ? createChatActivities(deps) : undefined;
  const workers = [
    // Sandboxes (runs and chat turns): WORKER_MAX_CONCURRENT_RUNS slots. Runs beyond wait
    // `pending` in the queue, where Temporal's fairness (the organization as fairness key) orders
    // them across tenants.
    await Worker.create({
      connection,
      namespace: config.temporalNamespace,
      shutdownGraceTime: '10 seconds',
      taskQueue: AGENT_SANDBOX_TASK_QUEUE,
      maxConcurrentActivityTaskExecutions: config.workerMaxConcurrentRuns,
      maxHeartbeatThrottleInterval: HEARTBEAT_THROTTLE,
      activities: { ...execute, ...(chat ? { chatTurn: chat.chatTurn } : {}) },
    }),
    await Worker.create({
      ...common,
      taskQueue: AGENT_RUNS_TASK_QUEUE,
      maxHeartbeatThrottleInterval: HEARTBEAT_THROTTLE,
      activities: {
        ...createRunStateActivities(deps),
        ...createPublishRunEventActivity(deps),
        // Runs begun before worker run slots still schedule executeAgent here (workflows/run-agent.ts).
        ...execute,
        ...createScheduledTickActivities(deps),
        ...(chat ? { failChatTurn: chat.failChatTurn } : {}),
      },
    }),
    await Worker.create({
      ...common,
      taskQueue: PLATFORM_TASK_QUEUE,
      activities: {
        ...(config.modules.has('webhooks') ? createWebhookDeliveryActivity(deps) : {}),
        ...createPurgeInlinePackageActivity(deps),
        ...createConnectLoginActivity(deps),
        ...createOAuth2Activities(deps),
        ...createSweepExpiredFilesActivities(deps),
        ...createBulkRunsActivities(deps),
      },
    }),
  ];
  // File expiry (DESIGN.md 7): the hourly sweep's Temporal Schedule, created or brought up to date.
  await ensureFileSweepSchedule(workflows, config);
  let metrics: MetricsServer | undefined;
  if (config.workerMetricsPort !== undefined) {
    metrics = await startMetricsServer({
      port: config.workerMetricsPort,
      host: config.host,
      token: config.metricsToken,
      temporalMetricsUrl: opts.temporalMetricsUrl,
      publicUrl: config.publicUrl,
    });
  }
  return {
    workers,
    run: async () => {
      await Promise.all(workers.map((w) => w.run()));
    },
    shutdown: () => {
      drain.abort();
      for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
    },
    metricsUrl: metrics?.url,
    close: async () => {
      await metrics?.close();
      await connection.close();
      await clientConnection.close();
    },
  };
}
