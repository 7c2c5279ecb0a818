// CSRF for the HTML forms: double submit. A random value in an HttpOnly SameSite=Strict cookie
// scoped to the form's path, and in the form its HMAC bound to what the form acts on (a connect
// link's token, an OIDC interaction), so a value taken from one form is worthless on another.
import { createHmac, randomBytes } from 'node:crypto';
import { safeEqual, sha256Hex } from '../../shared/crypto.ts';
import type { AppContext } from '../context.ts';

export interface CsrfScope {
  cookie: string;
  path: string;
  /** Separates the keys of different forms. */
  purpose: string;
  /** The cookie's lifetime (default an hour): the console keeps it as long as a session lasts. */
  maxAgeSeconds?: number;
  /**
   * Default `Strict`. The console's is `Lax`: a page opened from a link elsewhere (a chat, a
   * mail) gets no Strict cookie and would set a new one, voiding the forms of its other tabs.
   * Either way a cross-site POST carries none.
   */
  sameSite?: 'Strict' | 'Lax';
}

/** Only without SECRETS_KEY (never in a service, which requires it): a key for this process. */
const FALLBACK_KEY = randomBytes(32);

function csrfValue(ctx: AppContext, scope: CsrfScope, cookie: string, bound: string): string {
  const key = createHmac('sha256', ctx.services.config.secretsKey ?? FALLBACK_KEY)
    .update(scope.purpose)
    .digest();
  return createHmac('sha256', key)
    .update(`${cookie}|${sha256Hex(bound)}`)
    .digest('base64url');
}

const COOKIE_FORMAT = /^[A-Za-z0-9_-]{43}$/;

/** The hidden form value bound to `bound`; sets the cookie when the browser has none (or a bad one). */
export function issueCsrf(ctx: AppContext, scope: CsrfScope, bound: string): string {
  let cookie = ctx.cookies.get(scope.cookie);
  if (!cookie || !COOKIE_FORMAT.test(cookie)) {
    cookie = randomBytes(32).toString('base64url');
    const secure = ctx.services.config.publicUrl.startsWith('https:') ? '; Secure' : '';
    ctx.append(
      'Set-Cookie',
      `${scope.cookie}=${cookie}; Path=${scope.path}; Max-Age=${scope.maxAgeSeconds ?? 3600}; HttpOnly; SameSite=${scope.sameSite ?? 'Strict'}${secure}`,
    );
  }
  return csrfValue(ctx, scope, cookie, bound);
}

export function csrfValid(ctx: AppContext, scope: CsrfScope, bound: string, submitted: string | undefined): boolean {
  const cookie = ctx.cookies.get(scope.cookie);
  if (!cookie || !COOKIE_FORMAT.test(cookie) || !submitted) return false;
  return safeEqual(csrfValue(ctx, scope, cookie, bound), submitted);
}
