import { runDto, runSchema } from '../../../shared/runs/model.ts';
import { defineRoute } from '../../route.ts';
import {
  agentPathParams,
  launchable,
  launchConnections,
  launchConnectionsBody,
  launchFromRequest,
  launchInputBody,
  launchVersionBody,
  launchVersionQuery,
  shapeRunReplay,
} from '../../resources/launch.ts';

export default defineRoute<
  { input?: Record<string, unknown>; version?: string; connections?: Record<string, string> },
  { version?: string },
  { scope: string; name: string }
>({
  method: 'post',
  path: '/api/agents/:scope/:name/run',
  operationId: 'runAgent',
  summary: 'Launch a run of the agent',
  description:
    "The input is validated against the agent's input schema (defaults applied). Answers 201 with the run (status `pending`) " +
    'once it is queued, without waiting for execution. Organization limits: `per_org_global_rate_per_min` (429 `org_run_rate_limited`) ' +
    'and `max_concurrent_per_org` (429 `org_run_concurrency_exceeded`), both with Retry-After. Each integration dependency needs ' +
    'a usable connection of the actor (see `connections` and GET .../connection-readiness): otherwise 409 `connection_missing`, ' +
    'no run, and a `run.connection_missing` event.',
  tag: 'Runs',
  auth: 'any',
  context: 'space',
  scope: 'agents:run',
  rateLimit: { points: 20, duration: 60, by: 'identity' },
  idempotent: true,
  shapeReplay: shapeRunReplay,
  confirmsAccess: true, // checked in the agent's resolution, before anything is written (launchable)
  params: agentPathParams,
  query: launchVersionQuery,
  body: {
    type: 'object',
    additionalProperties: false,
    properties: {
      input: launchInputBody,
      version: launchVersionBody,
      connections: launchConnectionsBody,
    },
  },
  responses: { 201: { description: 'The queued run', schema: runSchema } },
  async handler(ctx, { body, query, params }) {
    const { agent, input, files } = await launchable(ctx, params.scope, params.name, body.version ?? query.version, body.input);
    const connections = await launchConnections(ctx, agent, body.connections);
    const run = await launchFromRequest(ctx, { agent, input, files, connections });
    ctx.status = 201;
    ctx.body = runDto({ ...run, package_full_name: agent.fullName });
  },
});
