// OpenTelemetry traces (DESIGN.md 8): API request -> workflow start -> workflow -> activities ->
// sidecar -> model call, one trace, exported over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is
// set (the standard OTEL_* variables apply: OTEL_SERVICE_NAME, OTEL_EXPORTER_OTLP_HEADERS...).
//
// The tracer is injected (a `Tracing` handed to the API server and the workers), never the global
// tracer provider, so tests can run a traced API and worker beside untraced ones in one process.
// Two process-wide settings are set once, and do nothing on their own: an AsyncLocalStorage
// context manager (the active span and baggage follow async calls) and the W3C trace-context +
// baggage propagator (Temporal's interceptors carry both in workflow and activity headers).
// `request.id` and `run.id` travel as baggage: every span started under them gets them as
// attributes, and every log line written under them gets them as fields (shared/log.ts).
import { createRequire } from 'node:module';
import { type Attributes, type Context, propagation, type Span, type Tracer, trace } from '@opentelemetry/api';
import type * as OtlpHttp from '@opentelemetry/exporter-trace-otlp-http';
import type * as Resources from '@opentelemetry/resources';
import type { IResource } from '@opentelemetry/resources';
import type * as TraceBase from '@opentelemetry/sdk-trace-base';
import type { ReadableSpan, SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type * as TraceNode from '@opentelemetry/sdk-trace-node';
import { installTraceContext, REQUEST_ID, RUN_ID } from './context.ts';

// The SDK and the OTLP exporter load only when tracing is on (issue 18: an untraced process does
// not hold them); they are CommonJS, so createTracing stays synchronous.
const require = createRequire(import.meta.url);

export { inSpan, installTraceContext, logContext, REQUEST_ID, RUN_ID, withRunId } from './context.ts';

export interface Tracing {
  /** False: the no-op tracer, no Temporal interceptors, no workflow span sink. */
  readonly enabled: boolean;
  readonly tracer: Tracer;
  /** Where the worker's workflow spans (made in the workflow sandbox, passed out by a sink) go. */
  readonly workflowSpans?: SpanProcessor;
  readonly resource?: IResource;
  /** Flushes what is buffered and stops exporting. */
  shutdown(): Promise<void>;
}

export const NO_TRACING: Tracing = {
  enabled: false,
  tracer: trace.getTracer('noop'), // the API's no-op until a global provider is set, which we never do
  shutdown: async () => {},
};

/** Copies `request.id` and `run.id` baggage onto every span as it starts (and onto workflow spans as they end). */
class BaggageAttributes implements SpanProcessor {
  onStart(span: Span, parent: Context): void {
    const bag = propagation.getBaggage(parent);
    if (!bag) return;
    for (const key of [REQUEST_ID, RUN_ID]) {
      const value = bag.getEntry(key)?.value;
      if (value) span.setAttribute(key, value);
    }
  }
  onEnd(): void {}
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * Workflow spans come out of the sandbox finished, with the workflow's info as attributes: a
 * run's workflow id is its run id. Passed on to `next` with `run.id` set.
 */
class WorkflowSpans implements SpanProcessor {
  private readonly next: SpanProcessor;
  constructor(next: SpanProcessor) {
    this.next = next;
  }
  onStart(): void {}
  onEnd(span: ReadableSpan): void {
    const attributes = span.attributes as Attributes;
    const id = attributes.workflowId;
    if (typeof id === 'string' && id.startsWith('run_') && attributes[RUN_ID] === undefined) attributes[RUN_ID] = id;
    this.next.onEnd(span);
  }
  forceFlush(): Promise<void> {
    return this.next.forceFlush();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * Tracing for one service (`api` or `worker`): to `exporter` when given (tests pass an in-memory
 * one, spans exported as they end), else over OTLP/HTTP when `otlpEndpoint` is set (batched),
 * else off.
 */
export function createTracing(opts: { serviceName: string; exporter?: SpanExporter; otlpEndpoint?: string }): Tracing {
  if (!opts.exporter && !opts.otlpEndpoint) return NO_TRACING;
  installTraceContext();
  // OTLPTraceExporter reads OTEL_EXPORTER_OTLP_ENDPOINT (adding /v1/traces) and the other OTEL_* variables itself.
  const { BatchSpanProcessor, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-base') as typeof TraceBase;
  const { NodeTracerProvider } = require('@opentelemetry/sdk-trace-node') as typeof TraceNode;
  const { Resource } = require('@opentelemetry/resources') as typeof Resources;
  const exporting = opts.exporter
    ? new SimpleSpanProcessor(opts.exporter)
    : new BatchSpanProcessor(new (require('@opentelemetry/exporter-trace-otlp-http') as typeof OtlpHttp).OTLPTraceExporter());
  const resource = Resource.default().merge(new Resource({ 'service.name': process.env.OTEL_SERVICE_NAME || `agent-execution-service-${opts.serviceName}` }));
  const provider = new NodeTracerProvider({ resource, spanProcessors: [new BaggageAttributes(), exporting] });
  return {
    enabled: true,
    tracer: provider.getTracer('agent-execution-service'),
    workflowSpans: new WorkflowSpans(exporting),
    resource,
    shutdown: () => provider.shutdown(),
  };
}
