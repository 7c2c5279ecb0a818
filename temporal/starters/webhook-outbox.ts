// A webhook's outbox (SPEC 6.3, workflows/webhooks/webhook-outbox.ts): one per webhook,
// `webhook-outbox:<wh id>` on `platform`, reached by signal-with-start only: a closed or missing
// outbox starts again with the events of the signal.
import type { Client } from '@temporalio/client';
import { PLATFORM_TASK_QUEUE } from '../contract/queues.ts';
import { type OutboxDeliverSignal, outboxDeliver } from '../contract/webhooks.ts';
import type { WebhookOutboxWorkflow } from '../contract/workflows.ts';

export function outboxWorkflowId(webhookId: string): string {
  return `webhook-outbox:${webhookId}`;
}

/**
 * Hands `eventIds` (at most OUTBOX_SIGNAL_MAX_EVENTS) to the webhook's outbox, starting it if it
 * is not running; those in `notBefore` wait until then (epoch ms).
 */
export async function signalWebhookOutbox(workflows: Client, webhookId: string, eventIds: string[], notBefore?: Record<string, number>): Promise<void> {
  await workflows.workflow.signalWithStart<WebhookOutboxWorkflow, [OutboxDeliverSignal]>('webhookOutbox', {
    taskQueue: PLATFORM_TASK_QUEUE,
    workflowId: outboxWorkflowId(webhookId),
    args: [{ webhookId }],
    signal: outboxDeliver,
    signalArgs: [notBefore ? { eventIds, notBefore } : { eventIds }],
  });
}
