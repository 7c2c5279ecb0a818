// Schedules as a request reads and changes them (shared/schedules/README.md): the space's
// schedules, who may change one (its creator; admins of the space pause, resume and delete), and
// creating and changing one with the checks of SPEC 2.8. The schedule routes and the console's
// schedule pages both go through here, so a schedule made or changed from either is the same.
import type { Knex } from 'knex';
import { SpaceMember } from '../../shared/db/models.ts';
import { problem } from '../../shared/errors.ts';
import { isOrgAdmin } from '../../shared/identity/tenancy.ts';
import { type ResolvedAgent, resolveAgent } from '../../shared/packages/resolve-agent.ts';
import { type ScheduleRow, type ScheduleWithPackage, scheduleDto } from '../../shared/schedules/model.ts';
import { checkCron, checkTimezone } from '../../shared/schedules/spec.ts';
import { changeSchedule, insertSchedule, type ScheduleChange } from '../../shared/schedules/store.ts';
import { deleteTemporalSchedule, nextRunAt } from '../../shared/schedules/temporal.ts';
import { runInput } from '../../shared/validation.ts';
import type { AppContext } from '../context.ts';

/** Schedules of the caller's space, joined to their package. */
export function spaceSchedules(ctx: AppContext): Knex.QueryBuilder {
  const { org, space } = ctx.state.tenancy!;
  return ctx.services
    .knex('schedules as s')
    .join('packages as p', 'p.id', 's.package_id')
    .where({ 's.org_id': org!.id, 's.space_id': space!.id })
    .select('s.*', 'p.scope', 'p.name as pkg_name');
}

/** The schedule, when it belongs to the caller's space; 404 otherwise. */
export async function findSchedule(ctx: AppContext, id: string): Promise<ScheduleWithPackage> {
  const row = (await spaceSchedules(ctx).where('s.id', id).first()) as ScheduleWithPackage | undefined;
  if (!row) throw problem('not_found', 'No such schedule');
  return row;
}

/** The DTOs of `rows`, their next fire times described by Temporal in parallel. */
export async function scheduleDtos(ctx: AppContext, rows: ScheduleWithPackage[]) {
  const next = await Promise.all(rows.map((r) => nextRunAt(ctx.services.workflows, r)));
  return rows.map((r, i) => scheduleDto(r, next[i]));
}

/** Scheduled runs launch as a person: creating a schedule, or changing what or when it runs, needs agents:run and no end-user. */
export function requireSchedulingRights(ctx: AppContext, doing: string): void {
  const { scopes, endUserId } = ctx.state.tenancy!;
  if (!scopes.has('agents:run')) throw problem('forbidden', `${doing} also needs agents:run`);
  if (endUserId) throw problem('forbidden', `${doing} is refused while acting for an end-user (Service-User): scheduled runs execute as a person`);
}

/** The input a run of `agent` would get: validated against its input schema, defaults applied. */
export function scheduleInput(agent: ResolvedAgent, input: Record<string, unknown> | undefined): Record<string, unknown> {
  return runInput(agent.inputSchema, input, { prefix: 'input' });
}

/** `creator`: every change; `admin`: pause, resume and delete only. */
export type ScheduleAuthority = 'creator' | 'admin';

/**
 * Whether the caller holds the `admin` role of the request's space, by role rather than by the
 * scopes it grants (a custom role holding every scope is still not an admin). Org owners and
 * admins act as `admin` in every shared space, a personal space's owner in theirs (as
 * `spaceScopes`); X-View-As makes them act as the role they view as.
 */
async function isSpaceAdmin(ctx: AppContext): Promise<boolean> {
  const { org, orgRole, space, viewAs } = ctx.state.tenancy!;
  const userId = ctx.state.auth!.userId;
  if (viewAs && viewAs !== 'admin') return false;
  if (space!.kind === 'personal') return space!.owner_user_id === userId;
  if (isOrgAdmin(orgRole)) return true;
  const member = await SpaceMember.query(ctx.services.knex).findOne({ org_id: org!.id, space_id: space!.id, user_id: userId });
  return member?.preset_role === 'admin';
}

/**
 * What the caller may do to `schedule` (already found in its space), or the refusal: 404 to
 * whoever cannot read it, 403 `forbidden` to anyone else. Its runs execute as its creator, with
 * the creator's connections, so only the creator decides what runs and when. The creator is the
 * person acting as themselves, by session or by one of their API keys; acting for an end-user is
 * neither the creator nor an admin (scheduled runs execute as a person).
 */
export async function scheduleAuthority(ctx: AppContext, schedule: Pick<ScheduleRow, 'created_by'>): Promise<ScheduleAuthority> {
  const { scopes, endUserId } = ctx.state.tenancy!;
  if (!endUserId) {
    if (ctx.state.auth!.userId === schedule.created_by) return 'creator';
    if (await isSpaceAdmin(ctx)) return 'admin';
  }
  if (!scopes.has('schedules:read')) throw problem('not_found', 'No such schedule');
  if (endUserId)
    throw problem('forbidden', 'Schedules cannot be changed or deleted while acting for an end-user (Service-User): scheduled runs execute as a person');
  throw problem('forbidden', 'Only the person who created this schedule can change it; admins of the space can pause, resume or delete it');
}

export interface ScheduleRequest {
  name: string;
  cron_expression: string;
  timezone: string;
  input?: Record<string, unknown>;
}

/**
 * Creates a schedule of the agent `scope`/`name` in the caller's space, its runs to execute as
 * the caller: 403 without agents:run or for an end-user, 400 naming a wrong cron, time zone or
 * input field, 404 for an agent without a published version here. Answers the schedule's DTO.
 */
export async function createSchedule(ctx: AppContext, scope: string, name: string, body: ScheduleRequest) {
  const { org, space } = ctx.state.tenancy!;
  const auth = ctx.state.auth!;
  const { knex, workflows } = ctx.services;
  requireSchedulingRights(ctx, 'Scheduling runs');
  const cron = checkCron(body.cron_expression);
  const timezone = checkTimezone(body.timezone);
  const agent = await resolveAgent(knex, org!.id, space!.id, scope, name);
  if (!agent) throw problem('not_found', 'No such agent (or it has no published version)');
  const input = scheduleInput(agent, body.input);
  const row = await insertSchedule(knex, workflows, {
    orgId: org!.id,
    spaceId: space!.id,
    packageId: agent.packageId,
    agentName: agent.fullName,
    name: body.name,
    cron,
    timezone,
    input,
    createdBy: auth.userId,
    createdWithKeyId: auth.kind === 'api_key' ? auth.key.id : null,
  });
  const [agentScope, pkgName] = agent.fullName.split('/');
  return scheduleDto({ ...row, scope: agentScope, pkg_name: pkgName }, await nextRunAt(workflows, row));
}

/**
 * Changes the schedule `id` of the caller's space (merge semantics, as PATCH /api/schedules/{id}):
 * an admin who did not create it may send `enabled` only; changing what runs or when, or
 * resuming, needs the rights of creating. Answers the schedule's DTO.
 */
export async function updateSchedule(ctx: AppContext, id: string, body: ScheduleChange) {
  const { knex, workflows } = ctx.services;
  const found = await findSchedule(ctx, id);
  if ((await scheduleAuthority(ctx, found)) === 'admin') {
    const changed = Object.keys(body).filter((k) => k !== 'enabled');
    if (changed.length) {
      throw problem(
        'forbidden',
        `Only the person who created this schedule can change ${changed.join(', ')}; admins of the space can pause, resume or delete it`,
      );
    }
  }
  // What runs, when, and whether it runs again are launches made as the creator: the same
  // checks as creating. Renaming and disabling need schedules:write only.
  if (body.input !== undefined || body.cron_expression !== undefined || body.timezone !== undefined || body.enabled === true) {
    requireSchedulingRights(ctx, 'Changing what a schedule runs, or when,');
  }
  const change: ScheduleChange = { name: body.name, enabled: body.enabled };
  if (body.cron_expression !== undefined) change.cron_expression = checkCron(body.cron_expression);
  if (body.timezone !== undefined) change.timezone = checkTimezone(body.timezone);
  if (body.input !== undefined) {
    const agent = await resolveAgent(knex, found.org_id, found.space_id, found.scope, found.pkg_name);
    if (!agent) throw problem('not_found', 'The agent is no longer available in this space (or has no published version)');
    change.input = scheduleInput(agent, body.input);
  }
  await changeSchedule(knex, workflows, found, `${found.scope}/${found.pkg_name}`, change);
  return (await scheduleDtos(ctx, [await findSchedule(ctx, found.id)]))[0];
}

/** Deletes the schedule `id` of the caller's space (its creator or an admin of the space); its runs stay, still naming it. */
export async function deleteSchedule(ctx: AppContext, id: string): Promise<void> {
  const schedule = await findSchedule(ctx, id);
  await scheduleAuthority(ctx, schedule); // the creator or an admin of the space
  // Temporal first: a failure there leaves the schedule whole rather than firing without a row.
  await deleteTemporalSchedule(ctx.services.workflows, schedule.id);
  await ctx.services.knex('schedules').where({ id: schedule.id, org_id: schedule.org_id }).delete();
}
