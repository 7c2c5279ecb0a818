// A run launched by a request (agent launches, inline and remote runs, bulk replays, the mcp
// module's run_agent): who launches it, the agent version and input it names, the connections it
// uses, its admission; and the path, query and body fields the launching routes publish alike.
import { problem } from '../../shared/errors.ts';
import { requireConnections } from '../../shared/integrations/readiness.ts';
import { resolveInputFiles } from '../../shared/files/run-inputs.ts';
import { type ResolvedAgent, resolveAgent } from '../../shared/packages/resolve-agent.ts';
import { admitRun, type LaunchRequest, startRunWorkflow } from '../../shared/runs/launch.ts';
import { type OwnerColumns, runDto } from '../../shared/runs/model.ts';
import { canReadRun } from '../../shared/runs/visibility.ts';
import { runInput } from '../../shared/validation.ts';
import { ACCESS_EPOCH_SQL } from '../access-cache.ts';
import type { AppContext } from '../context.ts';
import { connectionOwner } from './connections.ts';
import { findVisibleRun, runAudience } from './runs.ts';

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
  return requireConnections(knex, config.modules.has('webhooks') ? workflows : null, {
    orgId: org!.id,
    spaceId: space!.id,
    owner: connectionOwner(ctx),
    agent,
    chosen,
    publicUrl,
  });
}

/** Admits a run launched by this request against the organization limits and starts its workflow. */
export async function launchFromRequest(ctx: AppContext, launch: Pick<LaunchRequest, 'agent' | 'input' | 'files' | 'remote' | 'connections'>) {
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

export const launchVersionBody = {
  type: 'string',
  minLength: 1,
  description: `${VERSION_DESCRIPTION}. Also accepted as the query parameter \`version\`; this one wins when both are given.`,
} as const;

/** `input` of a launch body (agent, remote and inline runs). */
export const launchInputBody = {
  type: 'object',
  default: {},
  description:
    "Validated against the agent's input schema (defaults applied). A property with `format: 'file'` (or an array of them) takes " +
    'the id of a completed upload (`upl_`) or of a file (`file_`) the caller may read as it reads runs; it is checked against ' +
    "the agent's `file_constraints` (`accept`, `max_size`: 400 `validation_failed` with `errors[].code` `file_not_found`, `file_type_not_accepted` " +
    "or `file_too_large`), becomes a file of the run (the run's `input` then names that file's id) and is mounted read-only in " +
    'the sandbox at `/workspace/input/<field>/<name>`.',
} as const;

/** `connections` of a launch body (agent and inline). */
export const launchConnectionsBody = {
  type: 'object',
  maxProperties: 100,
  propertyNames: { minLength: 1 },
  additionalProperties: { type: 'string', pattern: '^conn_' },
  description:
    "The connection to use per integration dependency, `{<integration id>: <conn id>}`; each must be one of the actor's connections " +
    "of that integration (404 `not_found` otherwise). Unnamed integrations use the actor's most recently updated usable connection. " +
    'An integration without a usable one refuses the launch: 409 `connection_missing` (no run; `errors[]` carries a fresh `connect_url`).',
} as const;
