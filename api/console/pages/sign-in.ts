// The sign-in page (SPEC 4.2): email and password open a session of the platform realm, the same
// cookie `POST /api/auth/sign-in/email` sets. `next` brings the person back to the console page
// that sent them here (console paths only: never a redirect elsewhere).
import { findSession, SESSION_COOKIE } from '../../../shared/identity/sessions.ts';
import { burnVerification, verifyPassword } from '../../../shared/identity/passwords.ts';
import { findUserByEmail } from '../../../shared/identity/users.ts';
import { openSession } from '../../session-cookie.ts';
import { csrfField, errorSummary, type FieldErrors, textField } from '../forms.ts';
import { html } from '../html.ts';
import { sendConsolePage } from '../layout.ts';
import { definePage, type PageContext, redirect } from '../page.ts';

/** A console path to come back to; anything else is the console's home. */
export function safeNext(raw: string | string[] | null | undefined): string {
  const next = Array.isArray(raw) ? raw[0] : raw;
  return next && /^\/console(\/|$|\?)/.test(next) && !next.includes('//') && !next.includes('\\') ? next : '/console';
}

function render(page: PageContext, o: { email?: string; errors?: FieldErrors; status?: number }) {
  const next = safeNext(page.form.get('next') ?? page.query.next);
  const wrong = o.errors?.password;
  sendConsolePage(page, {
    title: 'Sign in',
    status: o.status,
    body: html`<div class="narrow">
<p class="lead">Sign in with the email and password of your account to see your organizations' runs.</p>
${errorSummary(o.errors, 'You could not be signed in')}
<form method="post" action="/console/sign-in" class="stack">
${csrfField(page)}<input type="hidden" name="next" value="${next}">
${textField({ name: 'email', label: 'Email', type: 'email', autocomplete: 'username', value: o.email, required: true, error: o.errors?.email })}
${textField({ name: 'password', label: 'Password', type: 'password', autocomplete: 'current-password', required: true, error: wrong })}
<button type="submit">Sign in</button>
</form>
<p class="help">No account yet? The first owner is created with the bootstrap token <code>npm start</code> prints; \
others sign up through <code>POST /api/auth/sign-up/email</code> or are added by an organization's owner.</p>
</div>`,
  });
}

export const signInPage = definePage({
  method: 'get',
  path: '/sign-in',
  context: 'public',
  async handler(page) {
    const token = page.ctx.cookies.get(SESSION_COOKIE);
    const session = token ? await findSession(page.ctx.services.knex, token) : undefined;
    if (session?.realm === 'platform') return redirect(page, safeNext(page.query.next));
    render(page, {});
  },
});

export const signInSubmit = definePage({
  method: 'post',
  path: '/sign-in',
  context: 'public',
  // The limit of POST /api/auth/sign-in/email, on its counter: one allowance whichever door.
  rateLimit: { key: 'POST /api/auth/sign-in/email', rule: { points: 10, duration: 60, by: 'ip', productionOnly: true } },
  async handler(page) {
    const email = (page.form.get('email') ?? '').trim();
    const password = page.form.get('password') ?? '';
    const errors: FieldErrors = {};
    if (!email) errors.email = 'Enter your email address.';
    if (!password) errors.password = 'Enter your password.';
    if (Object.keys(errors).length) return render(page, { email, errors, status: 400 });
    const user = await findUserByEmail(page.ctx.services.knex, email);
    // Without such a user the same work is done, so the answer's timing tells nothing.
    if (!user) await burnVerification(password);
    const ok = user ? await verifyPassword(user.password_hash, password) : false;
    if (!user || !ok) return render(page, { email, errors: { password: 'The email or the password is wrong.' }, status: 401 });
    await openSession(page.ctx, user.id);
    redirect(page, safeNext(page.form.get('next')));
  },
});
