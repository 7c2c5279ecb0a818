// Schedules (SPEC 2.8): the body fields, and the space's schedule lookup (the wire shape is
// shared/schedules/model.ts).
import type { Knex } from 'knex';
import { problem } from '../../../shared/errors.ts';
import type { ResolvedAgent } from '../../../shared/packages/resolve-agent.ts';
import { type ScheduleWithPackage, scheduleDto } from '../../../shared/schedules/model.ts';
import { nextRunAt } from '../../../shared/schedules/temporal.ts';
import { runInput } from '../../../shared/validation.ts';
import type { AppContext } from '../../context.ts';

export const scheduleFields = {
  name: { type: 'string', minLength: 1, maxLength: 200 },
  cron_expression: {
    type: 'string',
    minLength: 1,
    maxLength: 200,
    description: 'Five fields (minute hour day-of-month month day-of-week) or @yearly, @monthly, @weekly, @daily, @hourly; not both day fields restricted',
  },
  timezone: { type: 'string', minLength: 1, maxLength: 100, description: 'IANA name, e.g. Europe/Paris' },
  input: { type: 'object', description: "Validated against the agent's input schema (defaults applied)" },
} as const;

export const scheduleIdParam = { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1 } } } as const;

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
