// Every workflow the worker bundles.
export { deliverWebhook } from './deliver-webhook.ts';
export { runAgent } from './run-agent.ts';
