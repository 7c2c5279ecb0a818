// The LLM proxy a run's model calls go through (DESIGN.md 4); mounted by api/routes/index.ts in this order, which is the order in OpenAPI.
import type { RouteDef } from '../../route.ts';
import chatCompletions from './chat-completions.ts';
import messages from './messages.ts';

export const llmProxyRoutes: RouteDef[] = [chatCompletions, messages];
