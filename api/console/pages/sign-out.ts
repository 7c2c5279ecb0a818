// Sign out: ends this session (as `POST /api/auth/sign-out`) and clears the cookie.
import { Session } from '../../../shared/db/models.ts';
import { clearSessionCookie } from '../../session-cookie.ts';
import { setFlash } from '../flash.ts';
import { definePage, redirect } from '../page.ts';

export default definePage({
  method: 'post',
  path: '/sign-out',
  context: 'user',
  async handler(page) {
    await Session.query(page.ctx.services.knex).deleteById(page.sessionId!);
    clearSessionCookie(page.ctx);
    setFlash(page.ctx, { kind: 'ok', text: 'You are signed out.' });
    redirect(page, '/console/sign-in');
  },
});
