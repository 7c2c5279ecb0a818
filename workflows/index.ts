// Every workflow the worker bundles.
export { connectLogin } from './connect-login.ts';
export { deliverWebhook } from './deliver-webhook.ts';
export { purgeInlinePackage } from './purge-inline-package.ts';
export { refreshConnection } from './refresh-connection.ts';
export { remoteRun } from './remote-run.ts';
export { runAgent } from './run-agent.ts';
export { scheduledRun } from './scheduled-run.ts';
