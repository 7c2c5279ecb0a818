// Starts the API: connects Postgres and Temporal, listens, and closes everything on stop.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import type { Config } from '../shared/config.ts';
import { createKnex } from '../shared/db/knex.ts';
import { fileStorage } from '../shared/files/configured-storage.ts';
import { createLogger, type Logger } from '../shared/log.ts';
import { MailSender } from '../shared/mail/sender.ts';
import { observeHub } from '../shared/observability/metrics.ts';
import { createTracing, installTraceContext, type Tracing } from '../shared/observability/tracing.ts';
import { temporalConnectionOptions } from '../shared/temporal-connection.ts';
import { createApp } from './app.ts';
import { RateLimiters } from './rate-limiters.ts';
import { RunEventsHub } from './run-events-hub.ts';
import type { RouteDef } from './route.ts';

export interface ApiServer {
  url: string;
  port: number;
  /** Server-Sent Events streams open on this process. */
  realtimeStreams(): number;
  close(): Promise<void>;
}

export async function startApiServer(
  config: Config,
  deps: {
    databaseUrl: string;
    temporalAddress: string;
    log?: Logger;
    extraRoutes?: RouteDef[];
    /** Tracing to use (tests inject an in-memory exporter); otherwise OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set. */
    tracing?: Tracing;
  },
): Promise<ApiServer> {
  const log = deps.log ?? createLogger(config.logLevel, 'api');
  const knex = createKnex(deps.databaseUrl);
  const temporal = Connection.lazy(temporalConnectionOptions(config, deps.temporalAddress));
  // Request ids (and, traced, trace ids) follow each request into its log lines.
  installTraceContext();
  const tracing = deps.tracing ?? createTracing({ serviceName: 'api', otlpEndpoint: config.otlpEndpoint });
  // Traced, a workflow start carries the request's trace (and its request and run ids) in its
  // headers. Temporal's OpenTelemetry interceptors load only then.
  const interceptors = tracing.enabled
    ? { workflow: [new (await import('@temporalio/interceptors-opentelemetry')).OpenTelemetryWorkflowClientInterceptor({ tracer: tracing.tracer })] }
    : undefined;
  const workflows = new Client({ connection: temporal, namespace: config.temporalNamespace, interceptors });
  const files = await fileStorage(config);
  const rateLimiters = new RateLimiters(config.redisUrl);
  const runEvents = new RunEventsHub(deps.databaseUrl, log, knex);
  await runEvents.start();
  const unobserve = observeHub(runEvents);
  const mail = new MailSender(knex, config, log);
  mail.kick(); // mail queued before a restart, or left by a lost replica
  const app = createApp({ config, knex, log, temporal, workflows, rateLimiters, runEvents, files, mail, tracing }, deps.extraRoutes);
  // 64 KiB of request line and headers, not Node's 16: the largest query a route publishes (the
  // OAuth callback's, about 12,000 characters, each up to 3 once percent-encoded) must fit.
  const server = http.createServer({ maxHeaderSize: 64 * 1024 }, app.callback());
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, resolve);
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://localhost:${port}`,
    port,
    realtimeStreams: () => runEvents.streamCount(),
    async close() {
      runEvents.endStreams(); // open Server-Sent Events streams would hold server.close() forever
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      unobserve();
      await mail.close();
      await Promise.allSettled([runEvents.close(), knex.destroy(), temporal.close(), rateLimiters.close(), deps.tracing ? undefined : tracing.shutdown()]);
    },
  };
}
