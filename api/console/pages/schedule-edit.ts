// Change a schedule (PATCH /api/schedules/{id}, on its rate-limit counter), by its creator: what
// differs from the schedule is sent, checked as the API checks it (cron, zone, the input against
// the agent's latest version). A refusal shows the page again with the form as typed.
import { ProblemError } from '../../../shared/errors.ts';
import type { ScheduleChange } from '../../../shared/schedules/store.ts';
import { DEFAULT_RATE_LIMITS } from '../../rate-limits.ts';
import { updateSchedule } from '../../resources/schedules.ts';
import { setFlash } from '../flash.ts';
import { definePage, redirect } from '../page.ts';
import { rawValuesFrom, readInputForm } from '../views/input-form.ts';
import { type ScheduleFormValues, scheduleErrorsOf, scheduleFormErrors } from '../views/schedules.ts';
import { readSchedule, renderSchedulePage, type ScheduleParams, scheduleSpec } from './schedule.ts';

export default definePage<ScheduleParams>({
  method: 'post',
  path: '/orgs/:orgId/spaces/:spaceId/schedules/:scheduleId',
  context: 'space',
  scope: 'schedules:write',
  rateLimit: { key: 'PATCH /api/schedules/:id', rule: DEFAULT_RATE_LIMITS.write },
  async handler(page) {
    const s = await readSchedule(page);
    const spec = await scheduleSpec(page, s);
    const values: ScheduleFormValues = {
      name: page.form.get('name') ?? '',
      cron: page.form.get('cron_expression') ?? '',
      timezone: page.form.get('timezone') ?? '',
      input: rawValuesFrom(spec, page.form),
    };
    const read = readInputForm(spec, values.input);
    const errors = { ...scheduleFormErrors(values), ...read.errors };
    if (Object.keys(errors).length) return renderSchedulePage(page, { values, errors, status: 400 });
    const change: ScheduleChange = {};
    if (values.name !== s.name) change.name = values.name;
    if (values.cron.trim() !== s.cron_expression) change.cron_expression = values.cron;
    if (values.timezone.trim() !== s.timezone) change.timezone = values.timezone.trim();
    if (JSON.stringify(read.input) !== JSON.stringify(s.input)) change.input = read.input;
    if (!Object.keys(change).length) {
      setFlash(page.ctx, { kind: 'ok', text: 'Nothing changed.' });
      return redirect(page, `${page.space!.base}/schedules/${s.id}`);
    }
    try {
      await updateSchedule(page.ctx, s.id, change);
      setFlash(page.ctx, {
        kind: 'ok',
        text: `Saved: ${Object.keys(change)
          .map((k) => k.replace('_expression', ''))
          .join(', ')}.`,
      });
      redirect(page, `${page.space!.base}/schedules/${s.id}`);
    } catch (err) {
      if (!(err instanceof ProblemError) || err.code === 'not_found') throw err;
      return renderSchedulePage(page, {
        values,
        errors: err.code === 'validation_failed' ? scheduleErrorsOf(spec, err) : { '': err.detail },
        status: err.status,
      });
    }
  },
});
