import { problem } from '../../../shared/errors.ts';
import { resolveAgent } from '../../../shared/packages/resolve-agent.ts';
import { creatorCanRun } from '../../../shared/schedules/access.ts';
import type { ScheduleRow } from '../../../shared/schedules/model.ts';
import { checkCron, checkTimezone } from '../../../shared/schedules/spec.ts';
import { syncTemporalSchedule } from '../../../shared/schedules/temporal.ts';
import { defineRoute } from '../../route.ts';
import { findSchedule, scheduleDtos, scheduleFields, scheduleIdParam, scheduleInput, scheduleSchema } from './_shared.ts';

interface Body {
  name?: string;
  enabled?: boolean;
  cron_expression?: string;
  timezone?: string;
  input?: Record<string, unknown>;
}

export default defineRoute<Body, unknown, { id: string }>({
  method: 'patch',
  path: '/api/schedules/:id',
  operationId: 'updateSchedule',
  summary: 'Change, enable or disable a schedule (merge semantics)',
  description:
    "`enabled: false` pauses it, `true` resumes it and clears `disabled_reason` (409 `schedule_creator_lost_access` when its creator can no longer run agents in the space). A new `input` is validated against the agent's latest published version.",
  tag: 'Schedules',
  auth: 'any',
  context: 'space',
  scope: 'schedules:write',
  params: scheduleIdParam,
  body: { type: 'object', additionalProperties: false, properties: { ...scheduleFields, enabled: { type: 'boolean' } } },
  responses: { 200: { description: 'Updated', schema: scheduleSchema } },
  async handler(ctx, { body, params }) {
    const { knex, workflows } = ctx.services;
    const current = await findSchedule(ctx, params.id);
    const patch: Partial<ScheduleRow> = {};
    if (body.name !== undefined) patch.name = body.name;
    if (body.cron_expression !== undefined) patch.cron_expression = checkCron(body.cron_expression);
    if (body.timezone !== undefined) patch.timezone = checkTimezone(body.timezone);
    if (body.input !== undefined) {
      const agent = await resolveAgent(knex, current.org_id, current.space_id, current.scope, current.pkg_name);
      if (!agent) throw problem('not_found', 'The agent is no longer available in this space (or has no published version)');
      patch.input = scheduleInput(agent, body.input);
    }
    if (body.enabled === true && !current.enabled) {
      if (!(await creatorCanRun(knex, current))) {
        throw problem('schedule_creator_lost_access', 'The person who created this schedule can no longer run agents in this space; create a new schedule instead');
      }
      Object.assign(patch, { enabled: true, disabled_reason: null });
    }
    if (body.enabled === false && current.enabled) patch.enabled = false;

    const packageId = `${current.scope}/${current.pkg_name}`;
    const next = { ...current, ...patch, packageId };
    const temporalChanged = ['cron_expression', 'timezone', 'enabled'].some((k) => k in patch);
    let synced = false;
    try {
      await knex.transaction(async (trx) => {
        await trx('schedules')
          .where({ id: current.id, org_id: current.org_id })
          .update({ ...patch, ...(patch.input ? { input: JSON.stringify(patch.input) } : {}), updated_at: trx.fn.now() });
        // Before the commit: a spec the workflow service refuses changes nothing.
        if (temporalChanged) await syncTemporalSchedule(workflows, next);
        synced = temporalChanged;
      });
    } catch (err) {
      if (synced) await syncTemporalSchedule(workflows, { ...current, packageId }); // the commit failed: back to the row
      throw err;
    }
    [ctx.body] = await scheduleDtos(ctx, [await findSchedule(ctx, current.id)]);
  },
});
