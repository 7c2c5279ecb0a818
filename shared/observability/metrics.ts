// Prometheus metrics (DESIGN.md 8): one registry per process, served as `GET /metrics` by the API
// and by the worker's own small server (WORKER_METRICS_PORT). Labels are route templates,
// statuses and outcomes only: never an organization, run or key id (cardinality, tenancy).
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { timingSafeEqual } from 'node:crypto';
import client from 'prom-client';
import { kebab } from '../errors.ts';

export const registry = new client.Registry();
client.collectDefaultMetrics({ register: registry });

/** Seconds: a fast route answers in milliseconds, a long-poll in up to 55 s. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export const httpRequests = new client.Counter({
  name: 'http_requests_total',
  help: 'API requests answered, by method, route template (`unmatched` for no route) and status',
  labelNames: ['method', 'route', 'status'] as const,
  registers: [registry],
});

export const httpDuration = new client.Histogram({
  name: 'http_request_duration_seconds',
  help: 'API request latency until the answer starts (a Server-Sent Events stream: until it opens), by method, route template and status',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

export const runsLaunched = new client.Counter({
  name: 'agent_runs_launched_total',
  help: 'Runs handed to Temporal, by executor (sandbox or remote) and outcome (started, or queue_failed when Temporal refused)',
  labelNames: ['executor', 'outcome'] as const,
  registers: [registry],
});

export const runsEnded = new client.Counter({
  name: 'agent_runs_ended_total',
  help: 'Runs that reached a terminal status in a worker, by status (success, failed, timeout, cancelled)',
  labelNames: ['status'] as const,
  registers: [registry],
});

export const runDuration = new client.Histogram({
  name: 'agent_run_duration_seconds',
  help: 'From a run starting (running) to its terminal status, by status',
  labelNames: ['status'] as const,
  buckets: [0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600],
  registers: [registry],
});

export const sandboxStart = new client.Histogram({
  name: 'agent_sandbox_start_seconds',
  help: "From the sandbox's spawn (its sidecar listening) to the runtime's first sidecar request",
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
  registers: [registry],
});

export const webhookAttempts = new client.Counter({
  name: 'webhook_delivery_attempts_total',
  help: 'Webhook delivery attempts, by outcome: success, retry, permanent, unresolvable, gone (webhook or event deleted), error (the attempt itself failed)',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

/** Sources of the live gauges: every run-events hub of this process (tests run several APIs). */
interface LiveCounts {
  streamCount(): number;
  waitCount(): number;
}
const hubs = new Set<LiveCounts>();

/** Counts `hub`'s open streams and long-polls in the gauges until the returned function is called. */
export function observeHub(hub: LiveCounts): () => void {
  hubs.add(hub);
  return () => hubs.delete(hub);
}

new client.Gauge({
  name: 'sse_subscribers',
  help: 'Server-Sent Events streams open on this API process',
  registers: [registry],
  collect() {
    this.set([...hubs].reduce((n, h) => n + h.streamCount(), 0));
  },
});

new client.Gauge({
  name: 'long_poll_waiters',
  help: 'Requests waiting for a run to end (GET /api/runs/{id}?wait=) on this API process',
  registers: [registry],
  collect() {
    this.set([...hubs].reduce((n, h) => n + h.waitCount(), 0));
  },
});

/** Whether `authorization` carries `Bearer <token>`. */
function bearerMatches(token: string, authorization: string | undefined): boolean {
  const given = Buffer.from(/^Bearer (.+)$/i.exec(authorization ?? '')?.[1] ?? '');
  const want = Buffer.from(token);
  return given.length === want.length && timingSafeEqual(given, want);
}

/** 127.0.0.0/8 and ::1, also as IPv4-mapped IPv6 (a dual-stack socket's view of 127.0.0.1). */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return v4.startsWith('127.') || address === '::1';
}

/** Headers a proxy adds when it relays someone else's request. */
const RELAY_HEADERS = ['x-forwarded-for', 'forwarded', 'x-real-ip'];

export type MetricsAccess = 'allowed' | 'unauthorized' | 'not_loopback';

/**
 * Who may scrape (DESIGN.md 8): with METRICS_TOKEN, its bearer from anywhere; without, only a
 * connection from a loopback address that no proxy relayed. The socket's address decides, never
 * a forwarding header (TRUST_PROXY included): a header is the client's word, and a proxy on this
 * machine makes every client look local.
 */
export function metricsAccess(
  token: string | undefined,
  req: { remoteAddress: string | undefined; headers: Record<string, string | string[] | undefined> },
): MetricsAccess {
  if (token) return bearerMatches(token, req.headers.authorization as string | undefined) ? 'allowed' : 'unauthorized';
  if (!isLoopbackAddress(req.remoteAddress)) return 'not_loopback';
  return RELAY_HEADERS.some((h) => req.headers[h] !== undefined) ? 'not_loopback' : 'allowed';
}

export const METRICS_REFUSALS = {
  unauthorized: { status: 401, code: 'unauthorized', title: 'Unauthorized', detail: 'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>' },
  not_loopback: {
    status: 403,
    code: 'forbidden',
    title: 'Forbidden',
    detail:
      'Without METRICS_TOKEN, GET /metrics answers only requests from this machine (a loopback address, not relayed by a proxy); ' +
      'set METRICS_TOKEN to scrape it from elsewhere',
  },
} as const;

/**
 * The text to serve: this process's registry, then `extra` (the Temporal SDK's own Prometheus
 * endpoint in a worker, read over loopback; left out with a comment when it does not answer).
 */
export async function metricsText(extraUrl?: string): Promise<string> {
  let text = await registry.metrics();
  if (extraUrl) {
    try {
      const res = await fetch(extraUrl, { signal: AbortSignal.timeout(2000) });
      text += `\n${await res.text()}`;
    } catch (err) {
      text += `\n# Temporal SDK metrics unavailable: ${(err as Error).message}\n`;
    }
  }
  return text;
}

/** A port free on 127.0.0.1 now (for the Temporal SDK's exporter, which needs a fixed address). */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

export const METRICS_CONTENT_TYPE = registry.contentType;

export interface MetricsServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

/**
 * The worker's metrics server: `GET /metrics` only, behind `Bearer <token>` when set (401 as a
 * problem document otherwise), else for loopback clients only (403). `temporalMetricsUrl`: the
 * SDK's exporter, appended.
 */
export async function startMetricsServer(opts: {
  port: number;
  host: string;
  token?: string;
  temporalMetricsUrl?: string;
  /** Problem `type` links point at the API's error docs. */
  publicUrl: string;
}): Promise<MetricsServer> {
  const problemReply = (res: http.ServerResponse, status: number, code: string, title: string, detail: string): void => {
    res.writeHead(status, { 'content-type': 'application/problem+json' });
    res.end(JSON.stringify({ type: `${opts.publicUrl}/api/docs/errors/${kebab(code)}`, title, status, detail, code }));
  };
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics') return problemReply(res, 404, 'not_found', 'Not found', 'Only GET /metrics is served here');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      return problemReply(res, 405, 'method_not_allowed', 'Method not allowed', 'GET /metrics only');
    }
    const access = metricsAccess(opts.token, { remoteAddress: req.socket.remoteAddress, headers: req.headers });
    if (access !== 'allowed') {
      const refusal = METRICS_REFUSALS[access];
      if (access === 'unauthorized') res.setHeader('WWW-Authenticate', 'Bearer');
      return problemReply(res, refusal.status, refusal.code, refusal.title, refusal.detail);
    }
    metricsText(opts.temporalMetricsUrl).then(
      (text) => {
        res.writeHead(200, { 'content-type': METRICS_CONTENT_TYPE });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      (err: Error) => problemReply(res, 500, 'internal_error', 'Internal error', err.message),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, resolve);
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/metrics`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
