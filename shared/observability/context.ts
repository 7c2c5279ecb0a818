// The trace context of this process (see tracing.ts): the AsyncLocalStorage context manager and
// the W3C trace-context + baggage propagator, set once and inert without a tracer, and the
// request and run ids that travel as baggage. Kept apart from the SDK so logging stays light.
import {
  type Attributes,
  type Context,
  context,
  isSpanContextValid,
  propagation,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';

/** Baggage keys, and the span attributes and log fields they become. */
export const REQUEST_ID = 'request.id';
export const RUN_ID = 'run.id';

let installed = false;

/** The context manager and propagator (process-wide, inert without a tracer); idempotent. */
export function installTraceContext(): void {
  if (installed) return;
  installed = true;
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }));
}

/** Runs `fn` with `run.id` as baggage (so the workflow start, its workflow and activities carry it) and on the active span. */
export function withRunId<T>(runId: string, fn: () => Promise<T>): Promise<T> {
  trace.getActiveSpan()?.setAttribute(RUN_ID, runId);
  const active = context.active();
  const bag = (propagation.getBaggage(active) ?? propagation.createBaggage()).setEntry(RUN_ID, { value: runId });
  return context.with(propagation.setBaggage(active, bag), fn);
}

/** Log fields of the active context: request and run ids from baggage, trace and span ids when a span records. */
export function logContext(): Record<string, string> {
  if (!installed) return {};
  const active = context.active();
  const fields: Record<string, string> = {};
  const bag = propagation.getBaggage(active);
  const requestId = bag?.getEntry(REQUEST_ID)?.value;
  const runId = bag?.getEntry(RUN_ID)?.value;
  if (requestId) fields.requestId = requestId;
  if (runId) fields.runId = runId;
  const span = trace.getSpan(active)?.spanContext();
  if (span && isSpanContextValid(span)) {
    fields.traceId = span.traceId;
    fields.spanId = span.spanId;
  }
  return fields;
}

/** Runs `fn` in a span of `tracer` under `parent` (default: the active context), ending it with `fn`'s outcome. */
export async function inSpan<T>(
  tracer: Tracer,
  name: string,
  attributes: Attributes,
  fn: (span: Span) => Promise<T>,
  parent: Context = context.active(),
): Promise<T> {
  const span = tracer.startSpan(name, { kind: SpanKind.INTERNAL, attributes }, parent);
  try {
    return await context.with(trace.setSpan(parent, span), () => fn(span));
  } catch (err) {
    span.recordException(err as Error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
    throw err;
  } finally {
    span.end();
  }
}
