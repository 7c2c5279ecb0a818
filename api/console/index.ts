// The console's page table (README.md): each page is one file in pages/, listed here; its
// navigation entry, if any, is declared on the page itself. api/app.ts mounts the middleware.
import type Koa from 'koa';
import bulkJob from './pages/bulk-job.ts';
import { bulkCancel, bulkReplay } from './pages/bulk-runs.ts';
import home from './pages/home.ts';
import run from './pages/run.ts';
import runCancel from './pages/run-cancel.ts';
import runReplay from './pages/run-replay.ts';
import runs from './pages/runs.ts';
import { signInPage, signInSubmit } from './pages/sign-in.ts';
import signOut from './pages/sign-out.ts';
import space from './pages/space.ts';
import { apiKeyCreate, apiKeysPage } from './pages/api-keys.ts';
import { apiKeyPage, apiKeyRevoke } from './pages/api-key.ts';
import connection from './pages/connection.ts';
import connectionConnect from './pages/connection-connect.ts';
import connectionDelete from './pages/connection-delete.ts';
import connections from './pages/connections.ts';
import { orgMemberAdd, orgMemberRemove, spaceMemberAdd, spaceMemberRemove, spaceMemberRole } from './pages/member-actions.ts';
import members from './pages/members.ts';
import webhook from './pages/webhook.ts';
import { webhookReplay, webhookRetry, webhookRotate, webhookTest } from './pages/webhook-actions.ts';
import webhooks from './pages/webhooks.ts';
import overview from './pages/overview.ts';
import agents from './pages/agents.ts';
import agent from './pages/agent.ts';
import agentLaunch from './pages/agent-launch.ts';
import schedules from './pages/schedules.ts';
import { createSchedulePage, newSchedulePage } from './pages/schedule-new.ts';
import schedule from './pages/schedule.ts';
import { deleteSchedulePage, pauseSchedule, resumeSchedule } from './pages/schedule-actions.ts';
import scheduleEdit from './pages/schedule-edit.ts';
import type { PageDef } from './page.ts';
import { consoleMiddleware } from './router.ts';

export const consolePages: PageDef[] = [
  signInPage,
  signInSubmit,
  signOut,
  home,
  space,
  runs,
  bulkCancel,
  bulkReplay,
  bulkJob,
  run,
  runCancel,
  runReplay,
  // Connections, webhooks, API keys and members.
  connections,
  connectionConnect,
  connection,
  connectionDelete,
  webhooks,
  webhook,
  webhookTest,
  webhookRetry,
  webhookReplay,
  webhookRotate,
  apiKeysPage,
  apiKeyCreate,
  apiKeyPage,
  apiKeyRevoke,
  members,
  orgMemberAdd,
  orgMemberRemove,
  spaceMemberAdd,
  spaceMemberRole,
  spaceMemberRemove,
  // Overview, agents and schedules (`schedules/new` before `schedules/:scheduleId`).
  overview,
  agents,
  agent,
  agentLaunch,
  schedules,
  newSchedulePage,
  createSchedulePage,
  schedule,
  scheduleEdit,
  pauseSchedule,
  resumeSchedule,
  deleteSchedulePage,
];

export function consoleApp(): Koa.Middleware {
  return consoleMiddleware(consolePages);
}
