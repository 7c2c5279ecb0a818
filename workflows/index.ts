// Every workflow the worker bundles.
export { deliverWebhook } from './deliver-webhook.ts';
export { remoteRun } from './remote-run.ts';
export { runAgent } from './run-agent.ts';
