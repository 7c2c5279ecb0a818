// A webhook delivery's ladder (SPEC 6.3, DESIGN.md 2): deliverWebhook on `platform` under
// `delivery:<evt id>:<wh id>`. Three callers start it, and they differ in what an earlier
// workflow under that id means, hence `DeliveryStart`.
import { type Client, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { PLATFORM_TASK_QUEUE } from '../contract/queues.ts';
import type { DeliverWebhookInput, DeliverWebhookWorkflow } from '../contract/workflows.ts';

export function deliveryWorkflowId(eventId: string, webhookId: string): string {
  return `delivery:${eventId}:${webhookId}`;
}

/**
 * How a start treats another workflow under the delivery's id:
 * - `first`: the event's own delivery (`test.ping`, shared/webhooks/test-ping.ts). REJECT_DUPLICATE:
 *   one per id, ever, so a retried publish starts nothing, even once the first has closed.
 * - `again`: a replay (shared/webhooks/replay.ts), or the ladder going on after the outbox's
 *   failed first attempt (activities/webhooks/delivery.ts). The id may have run before (the
 *   ladder a replay follows, an earlier replay), so ALLOW_DUPLICATE; and FAIL while one runs, so a
 *   ladder is never doubled.
 */
export type DeliveryStart = 'first' | 'again';

/** 'running' when a workflow under the id is running (or, for `first`, ever ran): nothing started. */
export async function startDeliverWebhookWorkflow(workflows: Client, input: DeliverWebhookInput, start: DeliveryStart): Promise<'started' | 'running'> {
  try {
    await workflows.workflow.start<DeliverWebhookWorkflow>('deliverWebhook', {
      taskQueue: PLATFORM_TASK_QUEUE,
      workflowId: deliveryWorkflowId(input.eventId, input.webhookId),
      args: [input],
      ...(start === 'first' ? { workflowIdReusePolicy: 'REJECT_DUPLICATE' } : { workflowIdReusePolicy: 'ALLOW_DUPLICATE', workflowIdConflictPolicy: 'FAIL' }),
    });
    return 'started';
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return 'running';
    throw err;
  }
}
