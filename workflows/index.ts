// Every workflow the worker bundles.
export { runAgent } from './run-agent.ts';
