import type { User } from '../../../shared/db/models.ts';
import { createSession } from '../../../shared/identity/sessions.ts';
import { clientIp } from '../../client-ip.ts';
import type { AppContext } from '../../context.ts';

import { setSessionCookie } from '../../session-cookie.ts';
import { userDto } from '../../../shared/identity/model.ts';

/** Opens a session for the user, sets the cookie, and returns the session body. */
export async function signIn(ctx: AppContext, user: User) {
  const { token, session } = await createSession(ctx.services.knex, user.id, {
    ip: clientIp(ctx, ctx.services.config.trustProxy),
    userAgent: ctx.get('User-Agent'),
  });
  setSessionCookie(ctx, token, session.expires_at);
  return { user: userDto(user), session: { expiresAt: session.expires_at.toISOString() } };
}
