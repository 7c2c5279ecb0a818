import { scheduleSchema } from '../../../shared/schedules/model.ts';
import { defineRoute } from '../../route.ts';
import { updateSchedule } from '../../resources/schedules.ts';
import { scheduleFields, scheduleIdParam } from './_shared.ts';

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
    "Only the schedule's creator (by session or one of their API keys) may change `name`, `input`, `cron_expression` or `timezone`: " +
    'its runs execute as them. Admins of the space (org owners and admins included) who did not create it may only send `enabled`; ' +
    'anything else is 403 `forbidden`, and so is any change by anyone else who can read the schedule (404 otherwise). Changing ' +
    '`input`, `cron_expression` or `timezone`, or enabling, also needs `agents:run` and is refused while acting for an end-user ' +
    '(403). `enabled: false` pauses it, `true` resumes it and clears `disabled_reason` (409 `schedule_creator_lost_access` when ' +
    "its creator can no longer run agents in the space). A new `input` is validated against the agent's latest published version.",
  tag: 'Schedules',
  auth: 'any',
  context: 'space',
  scope: 'schedules:write',
  params: scheduleIdParam,
  body: { type: 'object', additionalProperties: false, properties: { ...scheduleFields, enabled: { type: 'boolean' } } },
  responses: { 200: { description: 'Updated', schema: scheduleSchema } },
  async handler(ctx, { body, params }) {
    ctx.body = await updateSchedule(ctx, params.id, body);
  },
});
