// Pause, resume and delete a schedule (PATCH /api/schedules/{id} `enabled`, DELETE, on their
// rate-limit counters): its creator or an admin of the space. Then back where the button was
// (the schedule, or the list with its page), with what happened.
import { ProblemError } from '../../../shared/errors.ts';
import type { Scope } from '../../../shared/permissions.ts';
import { DEFAULT_RATE_LIMITS } from '../../rate-limits.ts';
import { deleteSchedule, updateSchedule } from '../../resources/schedules.ts';
import { setFlash } from '../flash.ts';
import { definePage, type PageDef, redirect } from '../page.ts';
import { readSchedule, type ScheduleParams } from './schedule.ts';

type Verb = 'pause' | 'resume' | 'delete';

const DONE: Record<Verb, string> = { pause: 'paused: it fires no more until resumed', resume: 'resumed', delete: 'deleted; its runs stay' };

function action(verb: Verb, scope: Scope, apiRoute: string): PageDef<ScheduleParams> {
  return definePage<ScheduleParams>({
    method: 'post',
    path: `/orgs/:orgId/spaces/:spaceId/schedules/:scheduleId/${verb}`,
    context: 'space',
    scope,
    rateLimit: { key: apiRoute, rule: DEFAULT_RATE_LIMITS.write },
    async handler(page) {
      const base = page.space!.base;
      const s = await readSchedule(page);
      const back = page.form.get('return');
      const here = `${base}/schedules/${s.id}`;
      let target = back?.startsWith(`${base}/schedules`) && !back.includes('//') ? back : here;
      try {
        if (verb === 'delete') {
          await deleteSchedule(page.ctx, s.id);
          if (target === here) target = `${base}/schedules`;
        } else await updateSchedule(page.ctx, s.id, { enabled: verb === 'resume' });
        setFlash(page.ctx, { kind: 'ok', text: `Schedule “${s.name}” ${DONE[verb]}.` });
      } catch (err) {
        if (!(err instanceof ProblemError) || err.code === 'not_found') throw err;
        setFlash(page.ctx, { kind: 'error', text: `Schedule “${s.name}” was not ${verb === 'delete' ? 'deleted' : `${verb}d`}: ${err.detail}` });
      }
      redirect(page, target);
    },
  });
}

export const pauseSchedule = action('pause', 'schedules:write', 'PATCH /api/schedules/:id');
export const resumeSchedule = action('resume', 'schedules:write', 'PATCH /api/schedules/:id');
export const deleteSchedulePage = action('delete', 'schedules:delete', 'DELETE /api/schedules/:id');
