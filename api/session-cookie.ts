import { SESSION_COOKIE } from '../shared/identity/sessions.ts';
import type { AppContext } from './context.ts';

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
