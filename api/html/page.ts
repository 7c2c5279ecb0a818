// Server-side HTML pages people use (the hosted connect form, OIDC sign-in, consent and device
// pages): one stylesheet, no script at all, and a strict Content-Security-Policy whose only
// allowance is that stylesheet's hash.
import { createHash } from 'node:crypto';
import type { AppContext } from '../context.ts';

const STYLE = `
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;background:#f6f8fa}
main{max-width:28rem;margin:3rem auto;padding:2rem;background:#fff;border:1px solid #d0d7de;border-radius:8px}
h1{font-size:1.5rem;margin:0 0 .25rem}
.lead{margin:0 0 1.5rem;color:#59636e}
.field{margin:0 0 1.25rem}
label{display:block;font-weight:600;margin-bottom:.25rem}
.req{color:#cf222e}
.help{display:block;font-size:.875rem;color:#59636e;margin-top:.25rem}
input[type=text],input[type=password],input[type=email],input[type=url],input[type=number],select{width:100%;padding:.5rem \
.625rem;font:inherit;border:1px solid #d0d7de;border-radius:6px}
input[aria-invalid=true]{border-color:#cf222e}
.check label{display:inline;font-weight:600;margin-left:.375rem}
.error{display:block;color:#cf222e;font-size:.875rem;margin-top:.25rem}
.alert{padding:.75rem 1rem;margin:0 0 1.25rem;border:1px solid #ff818266;background:#ffebe9;border-radius:6px}
.ok{padding:.75rem 1rem;margin:0 0 1rem;border:1px solid #4ac26b66;background:#dafbe1;border-radius:6px}
button{padding:.625rem 1.25rem;font:inherit;font-weight:600;color:#fff;background:#1f883d;border:1px solid #1a7f37;border-radius:6px;cursor:pointer}
button.secondary{color:#1f2328;background:#f6f8fa;border-color:#d0d7de;margin-left:.5rem}
h2{font-size:1.125rem;margin:2rem 0 .25rem}
code{font:1.125rem ui-monospace,monospace;letter-spacing:.1em}
.note{font-size:.875rem;color:#59636e;margin-top:1.5rem}
`;
const STYLE_HASH = createHash('sha256').update(STYLE).digest('base64');

/**
 * `formAction`: origins a form on the page may end up at besides this one. Browsers apply
 * form-action to the redirects that follow a submission, and an OAuth consent ends in a
 * redirect to the client's redirect URI.
 */
export function contentSecurityPolicy(formAction: string[] = []): string {
  return [
    "default-src 'none'",
    `style-src 'sha256-${STYLE_HASH}'`,
    `form-action ${["'self'", ...formAction].join(' ')}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
}

export const CONTENT_SECURITY_POLICY = contentSecurityPolicy();

export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** The headers every server-rendered page carries, with the page's own Content-Security-Policy. */
export function setPageHeaders(ctx: AppContext, status: number, csp: string): void {
  ctx.status = status;
  ctx.set('Content-Security-Policy', csp);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('Cache-Control', 'no-store');
  ctx.set('X-Frame-Options', 'DENY');
  ctx.type = 'text/html; charset=utf-8';
}

/** Writes an HTML page with the security headers every page shares. */
export function sendPage(ctx: AppContext, status: number, title: string, body: string, formAction: string[] = []): void {
  setPageHeaders(ctx, status, contentSecurityPolicy(formAction));
  ctx.body = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body><main>
${body}
</main></body></html>`;
}
