// Workflow interceptors of a traced worker (bundled only when tracing is on, see
// workers/service-workers.ts): Temporal's OpenTelemetry ones, which continue the trace a workflow
// start or activity carries in its headers, and inside them the request and run ids (baggage
// that came with the trace) written onto the workflow's spans. Not a workflow; deterministic.
import { context, propagation, trace } from '@opentelemetry/api';
import {
  OpenTelemetryInboundInterceptor,
  OpenTelemetryInternalsInterceptor,
  OpenTelemetryOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/workflow/index.js';
import type {
  ActivityInput,
  LocalActivityInput,
  Next,
  SignalInput,
  SignalWorkflowInput,
  StartChildWorkflowExecutionInput,
  WorkflowExecuteInput,
  WorkflowInboundCallsInterceptor,
  WorkflowInterceptors,
  WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';

const BAGGAGE_ATTRIBUTES = ['request.id', 'run.id'];

function tagActiveSpan(): void {
  const span = trace.getActiveSpan();
  const bag = propagation.getBaggage(context.active());
  if (!span || !bag) return;
  for (const key of BAGGAGE_ATTRIBUTES) {
    const value = bag.getEntry(key)?.value;
    if (value) span.setAttribute(key, value);
  }
}

class BaggageInbound implements WorkflowInboundCallsInterceptor {
  execute(input: WorkflowExecuteInput, next: Next<WorkflowInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    tagActiveSpan();
    return next(input);
  }
  handleSignal(input: SignalInput, next: Next<WorkflowInboundCallsInterceptor, 'handleSignal'>): Promise<void> {
    tagActiveSpan();
    return next(input);
  }
}

class BaggageOutbound implements WorkflowOutboundCallsInterceptor {
  scheduleActivity(input: ActivityInput, next: Next<WorkflowOutboundCallsInterceptor, 'scheduleActivity'>): Promise<unknown> {
    tagActiveSpan();
    return next(input);
  }
  scheduleLocalActivity(input: LocalActivityInput, next: Next<WorkflowOutboundCallsInterceptor, 'scheduleLocalActivity'>): Promise<unknown> {
    tagActiveSpan();
    return next(input);
  }
  startChildWorkflowExecution(
    input: StartChildWorkflowExecutionInput,
    next: Next<WorkflowOutboundCallsInterceptor, 'startChildWorkflowExecution'>,
  ): Promise<[Promise<string>, Promise<unknown>]> {
    tagActiveSpan();
    return next(input);
  }
  signalWorkflow(input: SignalWorkflowInput, next: Next<WorkflowOutboundCallsInterceptor, 'signalWorkflow'>): Promise<void> {
    tagActiveSpan();
    return next(input);
  }
}

// The first interceptor of a list is the outermost: ours run inside Temporal's spans.
export const interceptors = (): WorkflowInterceptors => ({
  inbound: [new OpenTelemetryInboundInterceptor(), new BaggageInbound()],
  outbound: [new OpenTelemetryOutboundInterceptor(), new BaggageOutbound()],
  internals: [new OpenTelemetryInternalsInterceptor()],
});
