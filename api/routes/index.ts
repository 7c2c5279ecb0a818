// The route table: each route folder (a slice) registers its routes through its own index.ts,
// and the order here is the order in OpenAPI. Templates are matched by their first two path
// segments (api/router.ts), so the order matters only inside a slice (integrations/index.ts).
import type { RouteDef } from '../route.ts';
import { agentRoutes } from './agents/index.ts';
import { apiKeyRoutes } from './api-keys/index.ts';
import { authRoutes } from './auth/index.ts';
import { chatRoutes } from './chat/index.ts';
import { connectionRoutes } from './connections/index.ts';
import { credentialProxyRoutes } from './credential-proxy/index.ts';
import { endUserRoutes } from './end-users/index.ts';
import { fileRoutes } from './files/index.ts';
import { integrationRoutes } from './integrations/index.ts';
import { llmProxyRoutes } from './llm-proxy/index.ts';
import { mcpRoutes } from './mcp/index.ts';
import { meRoutes } from './me/index.ts';
import { modelCredentialRoutes } from './model-provider-credentials/index.ts';
import { modelRoutes } from './models/index.ts';
import { notificationRoutes } from './notifications/index.ts';
import { oidcRoutes } from './oidc/index.ts';
import { orgRoutes } from './orgs/index.ts';
import { packageRoutes } from './packages/index.ts';
import { proxyRoutes } from './proxies/index.ts';
import { realtimeRoutes } from './realtime/index.ts';
import { runRoutes } from './runs/index.ts';
import { scheduleRoutes } from './schedules/index.ts';
import { spaceRoutes } from './spaces/index.ts';
import { uploadRoutes } from './uploads/index.ts';
import { webhookRoutes } from './webhooks/index.ts';

export { discoveryRoutes } from './discovery/index.ts';

export const resourceRoutes: RouteDef[] = [
  ...authRoutes,
  ...orgRoutes,
  ...spaceRoutes,
  ...apiKeyRoutes,
  ...meRoutes,
  ...packageRoutes,
  ...agentRoutes,
  ...runRoutes,
  ...modelRoutes,
  ...modelCredentialRoutes,
  ...proxyRoutes,
  ...llmProxyRoutes,
  ...credentialProxyRoutes,
  ...scheduleRoutes,
  ...webhookRoutes,
  ...chatRoutes,
  ...oidcRoutes,
  ...mcpRoutes,
  ...endUserRoutes,
  ...notificationRoutes,
  ...uploadRoutes,
  ...fileRoutes,
  ...integrationRoutes,
  ...connectionRoutes,
  ...realtimeRoutes,
];
