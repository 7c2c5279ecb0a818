// The webhooks module's workflows (shared/webhooks/module.ts declares them).
export { deliverWebhook } from './deliver-webhook.ts';
export { webhookOutbox } from './webhook-outbox.ts';
