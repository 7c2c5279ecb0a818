// A traced worker (shared/observability/tracing.ts): a plugin on the worker's connection, so every
// worker made with it gets it. Activities continue the trace their workflow put in their headers
// (each runs under its span, `run.id` and `request.id` from baggage on it); workflows bundled by
// the worker get the interceptors of workflows/tracing-interceptors.ts, their spans passed out of
// the sandbox by the `exporter` sink. A prebuilt bundle (tests) must be built with
// `bundlerPlugins` (or `workflowInterceptorModules: [WORKFLOW_TRACING_MODULE]`).
import path from 'node:path';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  OpenTelemetryWorkflowClientInterceptor,
} from '@temporalio/interceptors-opentelemetry';
import { SimplePlugin } from '@temporalio/plugin';
import type { WorkerOptions } from '@temporalio/worker';
import type { Tracing } from '../shared/observability/tracing.ts';
import { PROJECT_ROOT } from '../shared/project-root.ts';

export const WORKFLOW_TRACING_MODULE = path.join(PROJECT_ROOT, 'workflows', 'tracing-interceptors.ts');

export class TracingPlugin extends SimplePlugin {
  private readonly tracing: Tracing;

  constructor(tracing: Tracing) {
    const tracer = tracing.tracer;
    super({
      name: 'agent-execution-service.tracing',
      workerInterceptors: {
        client: { workflow: [new OpenTelemetryWorkflowClientInterceptor({ tracer })] },
        workflowModules: [WORKFLOW_TRACING_MODULE],
        activity: [
          (ctx) => ({
            inbound: new OpenTelemetryActivityInboundInterceptor(ctx, { tracer }),
            outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
          }),
        ],
      },
    });
    this.tracing = tracing;
  }

  override configureWorker(options: WorkerOptions): WorkerOptions {
    const configured = super.configureWorker(options);
    if (!this.tracing.workflowSpans || !this.tracing.resource) return configured;
    return { ...configured, sinks: { ...configured.sinks, exporter: makeWorkflowExporter(this.tracing.workflowSpans, this.tracing.resource) } };
  }
}

/** The Temporal client interceptors of a traced process (its workflow starts carry the trace). */
export function tracingClientInterceptors(tracing: Tracing) {
  return tracing.enabled ? { workflow: [new OpenTelemetryWorkflowClientInterceptor({ tracer: tracing.tracer })] } : undefined;
}
