import type { Session } from '../shared/db/models.ts';
import { createSession, SESSION_COOKIE } from '../shared/identity/sessions.ts';
import { clientIp } from './client-ip.ts';
import type { AppContext } from './context.ts';

/** Opens a session for the user from this request (its client address and agent) and sets the cookie. */
export async function openSession(ctx: AppContext, userId: string): Promise<Session> {
  const { token, session } = await createSession(ctx.services.knex, userId, {
    ip: clientIp(ctx, ctx.services.config.trustProxy),
    userAgent: ctx.get('User-Agent'),
  });
  setSessionCookie(ctx, token, session.expires_at);
  return session;
}

export function setSessionCookie(ctx: AppContext, token: string, expires: Date): void {
  const secure = ctx.services.config.publicUrl.startsWith('https:');
  // Behind a TLS-terminating proxy the socket is plain HTTP; the public URL decides.
  if (secure) (ctx.cookies as unknown as { secure: boolean }).secure = true;
  ctx.cookies.set(SESSION_COOKIE, token, {
    httpOnly: true,
    sameSite: 'lax',
    secure,
    expires,
    path: '/',
    overwrite: true,
  });
}

export function clearSessionCookie(ctx: AppContext): void {
  ctx.cookies.set(SESSION_COOKIE, '', { httpOnly: true, sameSite: 'lax', expires: new Date(0), path: '/', overwrite: true });
}
