// Per request: the server span (its trace continues a caller's `traceparent`) with the request id
// as baggage, so spans and log lines under it carry it; then the request counter and latency
// histogram by route template, once the status is final (after the problems middleware).
import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { Next } from 'koa';
import { problem } from '../../shared/errors.ts';
import { httpDuration, httpRequests, METRICS_CONTENT_TYPE, METRICS_REFUSALS, metricsAccess, metricsText } from '../../shared/observability/metrics.ts';
import { REQUEST_ID } from '../../shared/observability/tracing.ts';
import type { AppContext } from '../context.ts';

/** Only the trace context is taken from a caller: baggage (a run id...) is ours to set. */
const callerContext = new W3CTraceContextPropagator();

/** The route's path template (`/api/runs/:id`), `/metrics`, or `unmatched`: never the raw URL. */
export function routeTemplate(ctx: AppContext): string {
  const c = ctx as AppContext & { _matchedRoute?: string | RegExp; state: { metricsRoute?: string } };
  if (c.state.metricsRoute) return c.state.metricsRoute;
  return typeof c._matchedRoute === 'string' ? c._matchedRoute : 'unmatched';
}

export async function observe(ctx: AppContext, next: Next): Promise<void> {
  const t0 = performance.now();
  const tracer = ctx.services.tracing?.tracer;
  const requestId = ctx.state.requestId;
  let parent = context.active();
  if (ctx.services.tracing?.enabled) parent = callerContext.extract(parent, ctx.headers, { get: (h, k) => h[k], keys: (h) => Object.keys(h) });
  parent = propagation.setBaggage(parent, (propagation.getBaggage(parent) ?? propagation.createBaggage()).setEntry(REQUEST_ID, { value: requestId }));
  const span = tracer?.startSpan(ctx.method, { kind: SpanKind.SERVER, attributes: { [REQUEST_ID]: requestId, 'http.request.method': ctx.method } }, parent);
  try {
    await context.with(span ? trace.setSpan(parent, span) : parent, next);
  } finally {
    const route = routeTemplate(ctx);
    const labels = { method: ctx.method, route, status: String(ctx.status) };
    httpRequests.inc(labels);
    httpDuration.observe(labels, (performance.now() - t0) / 1000);
    if (span) {
      span.updateName(`${ctx.method} ${route}`);
      span.setAttributes({ 'http.route': route, 'http.response.status_code': ctx.status });
      if (ctx.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    }
  }
}

/**
 * `GET /metrics` (Prometheus text), outside the route table: an operator's endpoint, not part of
 * the API's contract (absent from OpenAPI), behind `Bearer $METRICS_TOKEN` when that is set and
 * for loopback clients only when it is not (the socket's address: api/client-ip.ts and
 * TRUST_PROXY do not apply here).
 */
export async function metricsEndpoint(ctx: AppContext, next: Next): Promise<void> {
  if (ctx.path !== '/metrics') return next();
  (ctx.state as { metricsRoute?: string }).metricsRoute = '/metrics';
  if (ctx.method !== 'GET' && ctx.method !== 'HEAD') throw problem('method_not_allowed', { headers: { Allow: 'GET, HEAD' } });
  const access = metricsAccess(ctx.services.config.metricsToken, { remoteAddress: ctx.req.socket.remoteAddress, headers: ctx.headers });
  if (access !== 'allowed') throw problem(METRICS_REFUSALS[access].code, METRICS_REFUSALS[access].detail);
  ctx.type = METRICS_CONTENT_TYPE;
  ctx.body = await metricsText();
}
