import { problem } from '../../../shared/errors.ts';
import { newId } from '../../../shared/ids.ts';
import { resolveAgent } from '../../../shared/packages/resolve-agent.ts';
import { type ScheduleRow, scheduleDto, scheduleSchema } from '../../../shared/schedules/model.ts';
import { checkCron, checkTimezone } from '../../../shared/schedules/spec.ts';
import { createTemporalSchedule, deleteTemporalSchedule, nextRunAt } from '../../../shared/schedules/temporal.ts';
import { defineRoute } from '../../route.ts';
import { agentPathParams } from '../../resources/launch.ts';
import { requireSchedulingRights, scheduleFields, scheduleInput } from './_shared.ts';

interface Body {
  name: string;
  cron_expression: string;
  timezone: string;
  input?: Record<string, unknown>;
}

export default defineRoute<Body, unknown, { scope: string; name: string }>({
  method: 'post',
  path: '/api/agents/:scope/:name/schedules',
  operationId: 'createSchedule',
  summary: 'Schedule runs of the agent',
  description:
    "Needs `schedules:write` and `agents:run`. The runs execute as the caller (an API key's creator), in this space, with the latest published version at each tick. `input` is validated against the agent's input schema now (defaults applied) and again at each tick. Invalid cron or time zone: 400 `validation_failed` naming the field.",
  tag: 'Schedules',
  auth: 'any',
  context: 'space',
  scope: 'schedules:write',
  rateLimit: { points: 10, duration: 60, by: 'identity' },
  params: agentPathParams,
  body: {
    type: 'object',
    additionalProperties: false,
    required: ['name', 'cron_expression'],
    properties: { ...scheduleFields, timezone: { ...scheduleFields.timezone, default: 'UTC' }, input: { ...scheduleFields.input, default: {} } },
  },
  responses: { 201: { description: 'The schedule', schema: scheduleSchema } },
  async handler(ctx, { body, params }) {
    const { org, space } = ctx.state.tenancy!;
    const auth = ctx.state.auth!;
    const { knex, workflows } = ctx.services;
    requireSchedulingRights(ctx, 'Scheduling runs');
    const cron = checkCron(body.cron_expression);
    const timezone = checkTimezone(body.timezone);
    const agent = await resolveAgent(knex, org!.id, space!.id, params.scope, params.name);
    if (!agent) throw problem('not_found', 'No such agent (or it has no published version)');
    const input = scheduleInput(agent, body.input);

    const id = newId('sch');
    let temporalCreated = false;
    let row: ScheduleRow;
    try {
      row = await knex.transaction(async (trx) => {
        const [inserted] = (await trx('schedules')
          .insert({
            id,
            org_id: org!.id,
            space_id: space!.id,
            package_id: agent.packageId,
            name: body.name,
            cron_expression: cron,
            timezone,
            input: JSON.stringify(input),
            created_by: auth.userId,
            created_with_key_id: auth.kind === 'api_key' ? auth.key.id : null,
          })
          .returning('*')) as ScheduleRow[];
        // Before the commit: a schedule the workflow service refuses leaves no row behind.
        await createTemporalSchedule(workflows, { ...inserted, packageId: agent.fullName });
        temporalCreated = true;
        return inserted;
      });
    } catch (err) {
      if (temporalCreated) await deleteTemporalSchedule(workflows, id); // the commit failed
      throw err;
    }
    const [scope, pkgName] = agent.fullName.split('/');
    const next = await nextRunAt(workflows, row);
    ctx.status = 201;
    ctx.body = scheduleDto({ ...row, scope, pkg_name: pkgName }, next);
  },
});
