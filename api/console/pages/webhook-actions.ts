// What the person may do to a webhook from its page, each as its API operation does it and on
// that operation's rate-limit counter, with write access to the webhook re-checked
// (`webhookFor(..., 'write')`): a test ping, a delivery sent again, a window of events replayed,
// the signing secret rotated (the new one shown once on the page the form returns to).
import { ProblemError, problem } from '../../../shared/errors.ts';
import { replayWebhook, retryDelivery } from '../../../shared/webhooks/replay.ts';
import { DEFAULT_ROTATION_WINDOW_SECONDS, MAX_ROTATION_WINDOW_SECONDS, rotateWebhookSecret } from '../../../shared/webhooks/rotate.ts';
import { sendTestPing } from '../../../shared/webhooks/test-ping.ts';
import type { WebhookRow } from '../../../shared/webhooks/model.ts';
import type { RateLimitRule } from '../../rate-limiters.ts';
import { webhookFor } from '../../resources/webhooks.ts';
import { setFlash } from '../flash.ts';
import type { FieldErrors } from '../forms.ts';
import { definePage, type PageContext, type PageDef, redirect } from '../page.ts';
import { revealOnce } from '../reveal.ts';
import { instant } from '../views/run-filters.ts';
import { renderWebhookPage } from './webhook.ts';

type Params = { webhookId: string };
const PATH = '/orgs/:orgId/spaces/:spaceId/webhooks/:webhookId';
/** The webhook routes' own limits (api/routes/webhooks/). */
const LIMIT_5 = { points: 5, duration: 60, by: 'identity' } as const;
const LIMIT_10 = { points: 10, duration: 60, by: 'identity' } as const;

function back(page: PageContext<Params>): string {
  return `${page.space!.base}/webhooks/${encodeURIComponent(page.params.webhookId)}`;
}

/**
 * A form of the webhook's page: POST `<webhook>/<action>`, counted as the API's
 * `POST /api/webhooks/:id/<action>`; `act` gets the webhook once write access to it is checked.
 */
function webhookAction<P extends Params = Params>(
  action: string,
  rule: RateLimitRule,
  act: (page: PageContext<P>, hook: WebhookRow) => Promise<void>,
): PageDef<P> {
  return definePage<P>({
    method: 'post',
    path: `${PATH}/${action}`,
    context: 'space',
    scope: 'webhooks:read',
    rateLimit: { key: `POST /api/webhooks/:id/${action}`, rule },
    async handler(page) {
      await act(page, await webhookFor(page.ctx, page.params.webhookId, 'write'));
    },
  });
}

export const webhookTest = webhookAction('test', LIMIT_5, async (page, hook) => {
  const { knex, workflows } = page.ctx.services;
  const sent = await sendTestPing(knex, workflows, hook);
  setFlash(page.ctx, { kind: 'ok', text: `Sent a test.ping (${sent.eventId}); its attempt appears below in a moment.` });
  redirect(page, `${back(page)}#deliveries`);
});

export const webhookRetry = webhookAction<Params & { deliveryId: string }>('deliveries/:deliveryId/retry', LIMIT_10, async (page, hook) => {
  const { knex, workflows } = page.ctx.services;
  try {
    const r = await retryDelivery(knex, workflows, hook, page.params.deliveryId);
    const text = r.running ? `${r.eventId} was waiting for its next attempt: it attempts now.` : `Sending ${r.eventId} again as attempt ${r.attempt}.`;
    setFlash(page.ctx, { kind: 'ok', text });
  } catch (err) {
    if (!(err instanceof ProblemError) || (err.code === 'not_found' && err.detail === 'No such delivery of this webhook')) throw err;
    setFlash(page.ctx, { kind: 'error', text: `Not sent again: ${err.detail}` });
  }
  redirect(page, `${back(page)}#deliveries`);
});

export const webhookReplay = webhookAction('replay', LIMIT_10, async (page, hook) => {
  const { knex, workflows } = page.ctx.services;
  const form = { since: page.form.get('since') ?? '', until: page.form.get('until') ?? '', failed: page.form.get('failed') === 'yes' };
  const refuse = (errors: FieldErrors) => renderWebhookPage(page, { replay: { ...form, errors }, status: 400 });
  const since = instant(form.since);
  const until = form.until ? instant(form.until) : undefined;
  const errors: FieldErrors = {};
  if (!since) errors['replay-since'] = 'Give the start of the window, a date and time in UTC.';
  if (form.until && !until) errors['replay-until'] = 'Give a date and time in UTC, or leave it empty for now.';
  if (!since || Object.keys(errors).length) return refuse(errors);
  try {
    const r = await replayWebhook(knex, workflows, hook, { since, until, failedOnly: form.failed });
    const more = r.truncated ? ` More events matched: replay again from ${r.nextSince} for the rest.` : '';
    setFlash(page.ctx, {
      kind: 'ok',
      text: `Replaying ${r.queued} event${r.queued === 1 ? '' : 's'} of ${r.matched} in the \
window${r.alreadyRunning ? ` (${r.alreadyRunning} still being delivered)` : ''}.${more}`,
    });
    redirect(page, `${back(page)}#deliveries`);
  } catch (err) {
    if (!(err instanceof ProblemError) || err.code === 'not_found') throw err;
    const field = err.errors?.[0]?.field;
    return refuse(field === 'since' || field === 'until' ? { [`replay-${field}`]: err.errors![0].message } : { '': err.detail });
  }
});

export const webhookRotate = webhookAction('rotate', LIMIT_5, async (page, hook) => {
  const { knex, config } = page.ctx.services;
  const windowSeconds = Number(page.form.get('windowSeconds') ?? DEFAULT_ROTATION_WINDOW_SECONDS);
  if (!Number.isInteger(windowSeconds) || windowSeconds < 0 || windowSeconds > MAX_ROTATION_WINDOW_SECONDS) {
    throw problem('validation_failed', `The window is a number of seconds from 0 to ${MAX_ROTATION_WINDOW_SECONDS}.`);
  }
  const { secret } = await rotateWebhookSecret(knex, config.secretsKey, hook, windowSeconds);
  revealOnce(page.ctx, page.sessionId!, `webhook:${hook.id}`, secret);
  setFlash(page.ctx, { kind: 'ok', text: 'The signing secret was rotated: copy the new one now, it is not shown again.' });
  redirect(page, back(page));
});
