import { problem } from '../../../shared/errors.ts';
import { resolveAgent } from '../../../shared/packages/resolve-agent.ts';
import { creatorCanRun } from '../../../shared/schedules/access.ts';
import { type ScheduleRow, scheduleSchema } from '../../../shared/schedules/model.ts';
import { checkCron, checkTimezone } from '../../../shared/schedules/spec.ts';
import { syncTemporalSchedule } from '../../../shared/schedules/temporal.ts';
import { defineRoute } from '../../route.ts';
import { scheduleAuthority } from './_ownership.ts';
import { findSchedule, requireSchedulingRights, scheduleDtos, scheduleFields, scheduleIdParam, scheduleInput } from './_shared.ts';

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
    "Only the schedule's creator (by session or one of their API keys) may change `name`, `input`, `cron_expression` or `timezone`: its runs execute as them. Admins of the space (org owners and admins included) who did not create it may only send `enabled`; anything else is 403 `forbidden`, and so is any change by anyone else who can read the schedule (404 otherwise). Changing `input`, `cron_expression` or `timezone`, or enabling, also needs `agents:run` and is refused while acting for an end-user (403). `enabled: false` pauses it, `true` resumes it and clears `disabled_reason` (409 `schedule_creator_lost_access` when its creator can no longer run agents in the space). A new `input` is validated against the agent's latest published version.",
  tag: 'Schedules',
  auth: 'any',
  context: 'space',
  scope: 'schedules:write',
  params: scheduleIdParam,
  body: { type: 'object', additionalProperties: false, properties: { ...scheduleFields, enabled: { type: 'boolean' } } },
  responses: { 200: { description: 'Updated', schema: scheduleSchema } },
  async handler(ctx, { body, params }) {
    const { knex, workflows } = ctx.services;
    const found = await findSchedule(ctx, params.id);
    if ((await scheduleAuthority(ctx, found)) === 'admin') {
      const changed = Object.keys(body).filter((k) => k !== 'enabled');
      if (changed.length) {
        throw problem('forbidden', `Only the person who created this schedule can change ${changed.join(', ')}; admins of the space can pause, resume or delete it`);
      }
    }
    // What runs, when, and whether it runs again are launches made as the creator: the same
    // checks as creating. Renaming and disabling need schedules:write only.
    if (body.input !== undefined || body.cron_expression !== undefined || body.timezone !== undefined || body.enabled === true) {
      requireSchedulingRights(ctx, 'Changing what a schedule runs, or when,');
    }
    const cron = body.cron_expression === undefined ? undefined : checkCron(body.cron_expression);
    const timezone = body.timezone === undefined ? undefined : checkTimezone(body.timezone);
    let input: Record<string, unknown> | undefined;
    if (body.input !== undefined) {
      const agent = await resolveAgent(knex, found.org_id, found.space_id, found.scope, found.pkg_name);
      if (!agent) throw problem('not_found', 'The agent is no longer available in this space (or has no published version)');
      input = scheduleInput(agent, body.input);
    }

    const packageId = `${found.scope}/${found.pkg_name}`;
    let before: ScheduleRow | undefined; // the locked row, to put Temporal back if the commit fails
    let synced = false;
    try {
      await knex.transaction(async (trx) => {
        // Locked: a concurrent disable (access lost) or PATCH waits, so Temporal gets this row.
        before = (await trx('schedules').where({ id: found.id, org_id: found.org_id }).forUpdate().first()) as ScheduleRow | undefined;
        if (!before) throw problem('not_found', 'No such schedule');
        const patch: Partial<ScheduleRow> = {};
        if (body.name !== undefined) patch.name = body.name;
        if (cron !== undefined) patch.cron_expression = cron;
        if (timezone !== undefined) patch.timezone = timezone;
        if (input !== undefined) patch.input = input;
        if (body.enabled === true && !before.enabled) {
          if (!(await creatorCanRun(trx, before))) {
            throw problem('schedule_creator_lost_access', 'The person who created this schedule can no longer run agents in this space; create a new schedule instead');
          }
          Object.assign(patch, { enabled: true, disabled_reason: null });
        }
        if (body.enabled === false && before.enabled) patch.enabled = false;
        await trx('schedules')
          .where({ id: before.id, org_id: before.org_id })
          .update({ ...patch, ...(patch.input ? { input: JSON.stringify(patch.input) } : {}), updated_at: trx.fn.now() });
        // Before the commit: a spec the workflow service refuses changes nothing.
        if (['cron_expression', 'timezone', 'enabled'].some((k) => k in patch)) {
          await syncTemporalSchedule(workflows, { ...before, ...patch, packageId });
          synced = true;
        }
      });
    } catch (err) {
      if (synced && before) await syncTemporalSchedule(workflows, { ...before, packageId }); // the commit failed: back to the row
      throw err;
    }
    [ctx.body] = await scheduleDtos(ctx, [await findSchedule(ctx, found.id)]);
  },
});
