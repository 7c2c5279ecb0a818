// The workflows every worker runs, whatever MODULES says (workers/workflow-entry.ts).
export { connectLogin } from './connect-login.ts';
export { purgeInlinePackage } from './purge-inline-package.ts';
export { refreshConnection } from './refresh-connection.ts';
export { remoteRun } from './remote-run.ts';
export { runAgent } from './run-agent.ts';
export { scheduledRun } from './scheduled-run.ts';
export { sweepExpiredFiles } from './sweep-expired-files.ts';
export { bulkRuns } from './bulk-runs.ts';
