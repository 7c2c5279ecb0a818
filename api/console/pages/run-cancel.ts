// Cancel a run (as POST /api/runs/{id}/cancel, on its rate-limit counter): then back where the
// button was, the run page or the run list with its filters, with what happened.
import { ProblemError } from '../../../shared/errors.ts';
import { DEFAULT_RATE_LIMITS } from '../../rate-limits.ts';
import { cancelRun } from '../../resources/runs.ts';
import { setFlash } from '../flash.ts';
import { definePage, redirect } from '../page.ts';

export default definePage<{ runId: string }>({
  method: 'post',
  path: '/orgs/:orgId/spaces/:spaceId/runs/:runId/cancel',
  context: 'space',
  scope: 'runs:cancel',
  rateLimit: { key: 'POST /api/runs/:id/cancel', rule: DEFAULT_RATE_LIMITS.write },
  async handler(page) {
    const { runId } = page.params;
    const base = page.space!.base;
    const back = page.form.get('return');
    const target = back?.startsWith(`${base}/runs`) && !back.includes('//') ? back : `${base}/runs/${encodeURIComponent(runId)}`;
    try {
      await cancelRun(page.ctx, runId);
      setFlash(page.ctx, { kind: 'ok', text: `Cancellation of ${runId} requested: it ends cancelled in a moment.` });
    } catch (err) {
      if (!(err instanceof ProblemError) || err.code === 'not_found') throw err;
      setFlash(page.ctx, { kind: 'error', text: `${runId} was not cancelled: ${err.detail}` });
    }
    redirect(page, target);
  },
});
