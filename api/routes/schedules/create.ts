import { scheduleSchema } from '../../../shared/schedules/model.ts';
import { defineRoute } from '../../route.ts';
import { agentPathParams } from '../../resources/launch.ts';
import { createSchedule } from '../../resources/schedules.ts';
import { scheduleFields } from './_shared.ts';

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
    "Needs `schedules:write` and `agents:run`. The runs execute as the caller (an API key's creator), in this space, with the " +
    "latest published version at each tick. `input` is validated against the agent's input schema now (defaults applied) and " +
    'again at each tick. Invalid cron or time zone: 400 `validation_failed` naming the field.',
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
    const schedule = await createSchedule(ctx, params.scope, params.name, body);
    ctx.status = 201;
    ctx.body = schedule;
  },
});
