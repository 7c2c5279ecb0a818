// A message for the next page a person sees, after a form redirects (303): "Cancellation
// requested", "Signed out". Kept in a short-lived cookie of the console's path and shown once;
// never in the URL, so a link still shows exactly the rows it names.
import type { AppContext } from '../context.ts';

const COOKIE = 'svc.console_flash';

export interface Flash {
  kind: 'ok' | 'error';
  text: string;
}

export function setFlash(ctx: AppContext, flash: Flash): void {
  const secure = ctx.services.config.publicUrl.startsWith('https:') ? '; Secure' : '';
  const value = encodeURIComponent(JSON.stringify(flash).slice(0, 1500));
  ctx.append('Set-Cookie', `${COOKIE}=${value}; Path=/console; Max-Age=60; HttpOnly; SameSite=Lax${secure}`);
}

/** The message waiting for this page, if any, taken (the cookie is cleared). */
export function takeFlash(ctx: AppContext): Flash | undefined {
  const raw = ctx.cookies.get(COOKIE);
  if (!raw) return undefined;
  ctx.append('Set-Cookie', `${COOKIE}=; Path=/console; Max-Age=0; HttpOnly; SameSite=Lax`);
  try {
    const f = JSON.parse(decodeURIComponent(raw)) as Flash;
    return (f.kind === 'ok' || f.kind === 'error') && typeof f.text === 'string' ? f : undefined;
  } catch {
    return undefined;
  }
}
