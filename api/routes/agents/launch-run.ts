import { problem } from '../../../shared/errors.ts';
import { requireConnections } from '../../../shared/integrations/readiness.ts';
import { resolveInputFiles } from '../../../shared/files/run-inputs.ts';
import { type ResolvedAgent, resolveAgent } from '../../../shared/packages/resolve-agent.ts';
import { admitRun, type LaunchRequest, startRunWorkflow } from '../../../shared/runs/launch.ts';
import { type OwnerColumns, runDto, runSchema } from '../../../shared/runs/model.ts';
import { runInput } from '../../../shared/validation.ts';
import { ACCESS_EPOCH_SQL } from '../../access-cache.ts';
import type { AppContext } from '../../context.ts';
import { defineRoute } from '../../route.ts';
import { connectionOwner } from '../connections/_shared.ts';
import { canReadRun, findVisibleRun, runAudience } from '../runs/_visible.ts';

/** Who a run launched by this request belongs to (SPEC 5.6: an impersonated end-user owns it). */
export function launcherOf(ctx: AppContext): Pick<LaunchRequest, 'actor' | 'userId' | 'endUserId'> {
  const { endUserId } = ctx.state.tenancy!;
  const auth = ctx.state.auth!;
  const actor: LaunchRequest['actor'] = endUserId
    ? { type: 'end_user', id: endUserId }
    : auth.kind === 'api_key'
      ? { type: 'api_key', id: auth.key.id }
      : { type: 'user', id: auth.userId };
  return { actor, userId: auth.userId, endUserId };
}

/**
 * The agent version a launch names, visible from the request space (404 otherwise), and the
 * input validated against its input schema with defaults applied (400 naming the field).
 */
export async function launchable(ctx: AppContext, scope: string, name: string, version: string | undefined, rawInput: Record<string, unknown> | undefined) {
  const { org, space } = ctx.state.tenancy!;
  const { knex } = ctx.services;
  const access = ctx.state.access!;
  // An optimistic request (RouteDef.confirmsAccess) reads the access epoch in the agent's query.
  const confirm = access.optimistic ? { name: 'access-epoch', sql: ACCESS_EPOCH_SQL, read: (epoch: string | number) => access.confirm(epoch) } : undefined;
  const agent = await resolveAgent(knex, org!.id, space!.id, scope, name, version, confirm);
  // No row read the epoch: the router confirms it before the 404 goes out (ranOnStaleAccess).
  if (!agent) throw problem('not_found', version ? `No version ${version} of ${scope}/${name}` : `No agent ${scope}/${name} (or it has no published version)`);
  return { agent, ...(await launchInput(ctx, agent, rawInput)) };
}

/**
 * The launch's input, valid against the schema, and its files: ids the caller may read (as it
 * reads runs) that meet the agent's `file_constraints` (shared/files/run-inputs.ts).
 */
export async function launchInput(ctx: AppContext, agent: Pick<ResolvedAgent, 'inputSchema' | 'manifest'>, rawInput: Record<string, unknown> | undefined) {
  const { org, space } = ctx.state.tenancy!;
  const audience = runAudience(ctx);
  const where = { orgId: org!.id, spaceId: space!.id, canRead: (row: OwnerColumns) => canReadRun(audience, row) };
  return resolveInputFiles(ctx.services.knex, where, agent, runInput(agent.inputSchema, rawInput));
}

/**
 * The connection each integration dependency of the agent will use, for the caller's actor
 * (`chosen`: the body's `connections`); 409 `connection_missing` with fresh connect links, and a
 * `run.connection_missing` event, when one has none usable (DESIGN.md 7).
 */
export async function launchConnections(ctx: AppContext, agent: Pick<LaunchRequest['agent'], 'fullName' | 'manifest'>, chosen?: Record<string, string>) {
  const { org, space, scopes } = ctx.state.tenancy!;
  const { knex, workflows, config } = ctx.services;
  // A connect link lets its holder connect as the actor: only for a caller who may connect.
  const publicUrl = scopes.has('integrations:connect') ? config.publicUrl : null;
  // `run.connection_missing` goes to webhooks: none without the webhooks module.
  return requireConnections(knex, config.modules.has('webhooks') ? workflows : null, { orgId: org!.id, spaceId: space!.id, owner: connectionOwner(ctx), agent, chosen, publicUrl });
}

/** Admits a run launched by this request against the organization limits and starts its workflow. */
export async function launchFromRequest(
  ctx: AppContext,
  launch: Pick<LaunchRequest, 'agent' | 'input' | 'files' | 'remote' | 'connections'>,
) {
  const { org, space } = ctx.state.tenancy!;
  const { knex, workflows, config } = ctx.services;
  const { agent } = launch;
  const run = await admitRun(knex, config.platformRunLimits, { orgId: org!.id, spaceId: space!.id, ...launch, ...launcherOf(ctx) });
  await startRunWorkflow(knex, workflows, run, agent);
  return run;
}

/** A replayed launch shows the run as the replaying caller may see it now (404 if it may not). */
export async function shapeRunReplay(ctx: AppContext, stored: string): Promise<string> {
  return JSON.stringify(runDto(await findVisibleRun(ctx, JSON.parse(stored).id)));
}

export const agentPathParams = {
  type: 'object',
  required: ['scope', 'name'],
  properties: {
    scope: { type: 'string', pattern: '^@[a-z0-9][a-z0-9-]*$' },
    name: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]*$' },
  },
} as const;

const VERSION_DESCRIPTION = 'Exact version, dist-tag or semver range; the latest published version by default';

/**
 * `version` of a launch, also accepted in the query: Appstrate's own clients send it there
 * (DESIGN 5). The body wins when both are given.
 */
export const launchVersionQuery = {
  type: 'object',
  properties: { version: { type: 'string', minLength: 1, description: `${VERSION_DESCRIPTION}. The body's \`version\` wins when both are given.` } },
} as const;

export const launchVersionBody = { type: 'string', minLength: 1, description: `${VERSION_DESCRIPTION}. Also accepted as the query parameter \`version\`; this one wins when both are given.` } as const;

/** `input` of a launch body (agent, remote and inline runs). */
export const launchInputBody = {
  type: 'object',
  default: {},
  description:
    "Validated against the agent's input schema (defaults applied). A property with `format: 'file'` (or an array of them) takes the id of a completed upload (`upl_`) or of a file (`file_`) the caller may read as it reads runs; it is checked against the agent's `file_constraints` (`accept`, `max_size`: 400 `validation_failed` with `errors[].code` `file_not_found`, `file_type_not_accepted` or `file_too_large`), becomes a file of the run (the run's `input` then names that file's id) and is mounted read-only in the sandbox at `/workspace/input/<field>/<name>`.",
} as const;

/** `connections` of a launch body (agent and inline). */
export const launchConnectionsBody = {
  type: 'object',
  maxProperties: 100,
  propertyNames: { minLength: 1 },
  additionalProperties: { type: 'string', pattern: '^conn_' },
  description:
    "The connection to use per integration dependency, `{<integration id>: <conn id>}`; each must be one of the actor's connections of that integration (404 `not_found` otherwise). Unnamed integrations use the actor's most recently updated usable connection. An integration without a usable one refuses the launch: 409 `connection_missing` (no run; `errors[]` carries a fresh `connect_url`).",
} as const;

export default defineRoute<{ input?: Record<string, unknown>; version?: string; connections?: Record<string, string> }, { version?: string }, { scope: string; name: string }>({
  method: 'post',
  path: '/api/agents/:scope/:name/run',
  operationId: 'runAgent',
  summary: 'Launch a run of the agent',
  description:
    'The input is validated against the agent\'s input schema (defaults applied). Answers 201 with the run (status `pending`) once it is queued, without waiting for execution. Organization limits: `per_org_global_rate_per_min` (429 `org_run_rate_limited`) and `max_concurrent_per_org` (429 `org_run_concurrency_exceeded`), both with Retry-After. Each integration dependency needs a usable connection of the actor (see `connections` and GET .../connection-readiness): otherwise 409 `connection_missing`, no run, and a `run.connection_missing` event.',
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
