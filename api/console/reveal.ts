// A secret shown once (a new API key, a rotated webhook secret), after the form that made it
// redirects (303): the page the browser then reads shows it, and never again. It waits in a
// short-lived cookie of the console's path, sealed with SECRETS_KEY and bound to the session and
// to the resource it belongs to, so it is unreadable at rest, useless to another session, and
// shown only on its own page; reading it clears it, and a reload finds it gone. Never in the URL
// (history, logs) and never stored on the server.
import { safeEqual } from '../../shared/crypto.ts';
import { decryptSecret, encryptSecret } from '../../shared/secrets.ts';
import type { AppContext } from '../context.ts';

const COOKIE = 'svc.console_reveal';

interface Sealed {
  session: string;
  /** What the secret belongs to (`key:<id>`, `webhook:<id>`). */
  subject: string;
  secret: string;
}

function clear(ctx: AppContext): void {
  ctx.append('Set-Cookie', `${COOKIE}=; Path=/console; Max-Age=0; HttpOnly; SameSite=Lax`);
}

/** Keeps `secret` for the next page of this session that asks for `subject` (within a minute). */
export function revealOnce(ctx: AppContext, sessionId: string, subject: string, secret: string): void {
  const secure = ctx.services.config.publicUrl.startsWith('https:') ? '; Secure' : '';
  const sealed = encryptSecret(ctx.services.config.secretsKey, JSON.stringify({ session: sessionId, subject, secret } satisfies Sealed));
  ctx.append('Set-Cookie', `${COOKIE}=${sealed}; Path=/console; Max-Age=60; HttpOnly; SameSite=Strict${secure}`);
}

/** The secret waiting for `subject` in this session, taken (the cookie is cleared); else undefined. */
export function takeRevealed(ctx: AppContext, sessionId: string | undefined, subject: string): string | undefined {
  const raw = ctx.cookies.get(COOKIE);
  if (!raw || !sessionId) return undefined;
  let sealed: Sealed;
  try {
    sealed = JSON.parse(decryptSecret(ctx.services.config.secretsKey, raw)) as Sealed;
  } catch {
    clear(ctx);
    return undefined;
  }
  const mine = safeEqual(sealed.session, sessionId);
  // Another page of the same session leaves it for its own page; another session's is dropped.
  if (mine && sealed.subject !== subject) return undefined;
  clear(ctx);
  return mine ? sealed.secret : undefined;
}
