// Every workflow, the optional modules' included: what tests bundle. A worker bundles the core
// and the modules MODULES names (workers/workflow-entry.ts).
export * from './core.ts';
export * from './webhooks/index.ts';
export * from './chat/index.ts';
