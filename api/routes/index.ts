// The route table. Each route is one file; the order here is the order in OpenAPI.
import type { Discovery } from '../discovery.ts';
import type { RouteDef } from '../route.ts';
import apiKeyScopes from './api-keys/available-scopes.ts';
import apiKeyCreate from './api-keys/create.ts';
import apiKeyList from './api-keys/list.ts';
import apiKeyRevoke from './api-keys/revoke.ts';
import bootstrapRedeem from './auth/bootstrap-redeem.ts';
import changePassword from './auth/change-password.ts';
import requestPasswordReset from './auth/request-password-reset.ts';
import resetPassword from './auth/reset-password.ts';
import session from './auth/session.ts';
import signIn from './auth/sign-in.ts';
import signOut from './auth/sign-out.ts';
import signUp from './auth/sign-up.ts';
import { docsAsset, docsPage } from './discovery/docs.ts';
import errorDocs from './discovery/error-docs.ts';
import health from './discovery/health.ts';
import llmsTxt from './discovery/llms-txt.ts';
import me from './me/permissions.ts';
import { packageRoutes } from './packages/index.ts';
import { realtimeRoutes } from './realtime/index.ts';
import { scheduleRoutes } from './schedules/index.ts';
import { webhookRoutes } from './webhooks/index.ts';
import { chatRoutes } from './chat/index.ts';
import { oidcRoutes } from './oidc/index.ts';
import { mcpRoutes } from './mcp/index.ts';
import { endUserRoutes } from './end-users/index.ts';
import { notificationRoutes } from './notifications/index.ts';
import { uploadRoutes } from './uploads/index.ts';
import { fileRoutes } from './files/index.ts';
import launchRun from './agents/launch-run.ts';
import agentRuns from './agents/runs-list.ts';
import connectionReadiness from './agents/connection-readiness.ts';
import { modelRoutes } from './models/index.ts';
import { modelCredentialRoutes } from './model-provider-credentials/index.ts';
import { proxyRoutes } from './proxies/index.ts';
import llmProxyChat from './llm-proxy/chat-completions.ts';
import llmProxyMessages from './llm-proxy/messages.ts';
import { credentialProxyRoutes } from './credential-proxy/index.ts';
import runCancel from './runs/cancel.ts';
import bulkRunCancel from './runs/bulk-cancel.ts';
import bulkRunGet from './runs/bulk-get.ts';
import bulkRunReplay from './runs/bulk-replay.ts';
import runDelete from './runs/delete.ts';
import runGet from './runs/get.ts';
import runList from './runs/list.ts';
import runLogs from './runs/logs.ts';
import inlineRun from './runs/inline.ts';
import inlineRunValidate from './runs/inline-validate.ts';
import remoteRun from './runs/remote.ts';
import sinkReport from './runs/sink.ts';
import sinkExtend from './runs/sink-extend.ts';
import agentBundle from './agents/bundle.ts';
import openapi from './discovery/openapi.ts';
import orgCreate from './orgs/create.ts';
import orgList from './orgs/list.ts';
import orgMemberAdd from './orgs/members-add.ts';
import orgMemberList from './orgs/members-list.ts';
import orgMemberRemove from './orgs/members-remove.ts';
import impersonationAudit from './orgs/impersonation-audit.ts';
import roleCreate from './orgs/roles-create.ts';
import roleList from './orgs/roles-list.ts';
import spaceCreate from './spaces/create.ts';
import spaceList from './spaces/list.ts';
import spaceMemberAdd from './spaces/members-add.ts';
import spaceMemberList from './spaces/members-list.ts';
import spaceMemberRemove from './spaces/members-remove.ts';
import { connectionRoutes } from './connections/index.ts';
import connectWithFields from './integrations/connect-fields.ts';
import createConnectSession from './integrations/connect-session.ts';
import connectCallback from './integrations/connect-callback.ts';
import putOAuthClient from './integrations/oauth-client.ts';
import startConnect from './integrations/connect-start.ts';
import submitConnect from './integrations/connect-submit.ts';
import integrationGet from './integrations/get.ts';
import integrationList from './integrations/list.ts';
import spaceMemberUpdate from './spaces/members-update.ts';

export const resourceRoutes: RouteDef[] = [
  bootstrapRedeem,
  signUp,
  signIn,
  signOut,
  session,
  changePassword,
  requestPasswordReset,
  resetPassword,
  orgCreate,
  orgList,
  orgMemberList,
  orgMemberAdd,
  orgMemberRemove,
  roleCreate,
  roleList,
  impersonationAudit,
  spaceList,
  spaceCreate,
  spaceMemberList,
  spaceMemberAdd,
  spaceMemberUpdate,
  spaceMemberRemove,
  apiKeyCreate,
  apiKeyList,
  apiKeyScopes,
  apiKeyRevoke,
  me,
  ...packageRoutes,
  launchRun,
  agentRuns,
  connectionReadiness,
  runList,
  runGet,
  runLogs,
  runCancel,
  bulkRunCancel,
  bulkRunReplay,
  bulkRunGet,
  runDelete,
  inlineRun,
  inlineRunValidate,
  agentBundle,
  remoteRun,
  sinkReport,
  sinkExtend,
  ...modelRoutes,
  ...modelCredentialRoutes,
  ...proxyRoutes,
  llmProxyChat,
  llmProxyMessages,
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
  integrationList,
  connectWithFields,
  createConnectSession,
  startConnect,
  submitConnect,
  connectCallback,
  putOAuthClient,
  ...connectionRoutes,
  ...realtimeRoutes,
  integrationGet, // last: `/api/integrations/:scope/:name` must not shadow fixed paths such as `/api/integrations/connect/start`
];

export function discoveryRoutes(docs: () => Discovery): RouteDef[] {
  return [openapi(docs), docsPage, docsAsset, errorDocs, llmsTxt(docs), health];
}
