// The authorization server's pages (SPEC 4.2): sign-in, consent, the device flow's code entry
// and confirmation, sign-out and errors. Plain server-side HTML in the service's one layout
// (api/html/page.ts: no script, strict CSP); forms carry a CSRF value (ours on sign-in and
// consent, oidc-provider's `xsrf` on the device and sign-out forms).
import type { KoaContextWithOIDC } from 'oidc-provider';
import { escapeHtml, sendPage } from '../../html/page.ts';
import type { AppContext } from '../../context.ts';
import { INTERACTION_PATH } from './_paths.ts';

const page = (ctx: unknown) => ctx as AppContext;

/** What the service's permissions mean, in words, for the consent page. */
function describeScope(scope: string): string {
  const named: Record<string, string> = {
    openid: 'Know who you are',
    email: 'See your email address',
    profile: 'See your name',
    offline_access: 'Stay signed in when you are away',
  };
  if (named[scope]) return named[scope];
  const [resource, action] = scope.split(':');
  return `${action.replace(/-/g, ' ')} ${resource.replace(/-/g, ' ')}`.replace(/^\w/, (c) => c.toUpperCase());
}

export interface SignInPageState {
  uid: string;
  csrf: string;
  clientName: string;
  /** Shown above the form: who the app signs you in as. */
  audience: string;
  email?: string;
  error?: string;
  /** A space-level client with `allowSignup`: the page also creates accounts. */
  signup: boolean;
}

export function signInPage(ctx: AppContext, status: number, s: SignInPageState): void {
  // Absolute: the page is also re-shown as the answer to the POST of `<uid>/login`, where a
  // relative action would resolve to `<uid>/<uid>/login`.
  const action = `${INTERACTION_PATH}/${escapeHtml(s.uid)}/login`;
  const error = s.error ? `<p class="alert" role="alert" id="form-error">${escapeHtml(s.error)}</p>` : '';
  const invalid = s.error ? ' aria-invalid="true" aria-describedby="form-error"' : '';
  const signup = s.signup
    ? `<h2>New here?</h2>
<p class="lead">Create an account: enter your name, email and a password of at least 8 characters.</p>
<form method="post" action="${action}">
<input type="hidden" name="csrf" value="${escapeHtml(s.csrf)}"><input type="hidden" name="mode" value="signup">
<div class="field"><label for="su-name">Name</label><input type="text" id="su-name" name="name" autocomplete="name" required></div>
<div class="field"><label for="su-email">Email</label><input type="email" id="su-email" name="email" autocomplete="email" required></div>
<div class="field"><label for="su-password">Password</label><input type="password" id="su-password" name="password" autocomplete="new-password" \
minlength="8" required>
<span class="help">At least 8 characters.</span></div>
<button type="submit">Create account and continue</button>
</form>`
    : '';
  sendPage(
    ctx,
    status,
    `Sign in to ${s.clientName}`,
    `<h1>Sign in</h1>
<p class="lead"><strong>${escapeHtml(s.clientName)}</strong> asks you to sign in ${escapeHtml(s.audience)}.</p>
${error}
<form method="post" action="${action}">
<input type="hidden" name="csrf" value="${escapeHtml(s.csrf)}"><input type="hidden" name="mode" value="signin">
<div class="field"><label for="email">Email</label><input type="email" id="email" name="email" autocomplete="username" value="${escapeHtml(s.email ?? '')}" \
required${invalid}></div>
<div class="field"><label for="password">Password</label><input type="password" id="password" name="password" autocomplete="current-password" \
required${invalid}></div>
<button type="submit">Sign in</button>
</form>
${signup}
<p class="note">Only sign in if you trust ${escapeHtml(s.clientName)}. You choose what it may do on the next page.</p>`,
  );
}

export interface ConsentPageState {
  uid: string;
  csrf: string;
  clientName: string;
  who: string;
  where: string;
  scopes: string[];
  /** Origins the consent redirects to (the client's redirect URIs): allowed as form targets. */
  redirectOrigins: string[];
}

export function consentPage(ctx: AppContext, s: ConsentPageState): void {
  const items = s.scopes.map((scope) => `<li>${escapeHtml(describeScope(scope))} <span class="help">${escapeHtml(scope)}</span></li>`).join('\n');
  sendPage(
    ctx,
    200,
    `Allow ${s.clientName}?`,
    `<h1>Allow ${escapeHtml(s.clientName)}?</h1>
<p class="lead">Signed in as <strong>${escapeHtml(s.who)}</strong>. ${escapeHtml(s.clientName)} asks to act for you ${escapeHtml(s.where)}:</p>
<ul>
${items}
</ul>
<p class="help">It never gets more than you hold yourself: if your role changes, so does what it can do.</p>
<form method="post" action="${INTERACTION_PATH}/${escapeHtml(s.uid)}/confirm">
<input type="hidden" name="csrf" value="${escapeHtml(s.csrf)}">
<button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</form>`,
    s.redirectOrigins,
  );
}

/** A page that only says something (a refusal, an ended interaction). */
export function messagePage(ctx: AppContext, status: number, heading: string, text: string): void {
  sendPage(ctx, status, heading, `<h1>${escapeHtml(heading)}</h1>\n<p>${escapeHtml(text)}</p>`);
}

// ---- oidc-provider's page hooks ----

const PREFILL = Symbol('device user code');

/** Takes `?user_code=` off the request for the provider, keeping it for the code entry page. */
export function prefillUserCode(ctx: AppContext): boolean {
  const code = ctx.query.user_code;
  if (typeof code === 'string' && code) {
    (ctx.req as unknown as Record<symbol, string>)[PREFILL] = code.slice(0, 64);
    ctx.req.url = ctx.path;
  }
  return false; // the provider still answers
}

export async function deviceUserCodeInputPage(
  ctx: KoaContextWithOIDC,
  form: string,
  _out?: unknown,
  err?: { userCode?: string; name?: string },
): Promise<void> {
  let message = '<p class="lead">Enter the code your device shows you. It looks like <code>ABCD-EFGH</code>.</p>';
  if (err && (err.userCode || err.name === 'NoCodeError'))
    message = '<p class="alert" role="alert">That code is not valid or has expired. Check it on your device and try again.</p>';
  else if (err?.name === 'AbortedError') message = '<p class="alert" role="alert">The sign-in was cancelled.</p>';
  else if (err) message = '<p class="alert" role="alert">Something went wrong with this code. Start again on your device.</p>';
  // Set only on the GET of `verification_uri_complete`: the library's form has no value then.
  const prefill = (ctx.req as unknown as Record<symbol, string | undefined>)[PREFILL];
  // The library's input carries an inline handler the CSP would block anyway: dropped.
  const input = form
    .replace(/ onfocus="[^"]*"/, '')
    .replace(
      'type="text" name="user_code"',
      `id="user-code" ${prefill ? `value="${escapeHtml(prefill)}" ` : ''}type="text" name="user_code" aria-describedby="user-code-help"`,
    );
  sendPage(
    page(ctx),
    err ? 400 : 200,
    'Connect a device',
    `<h1>Connect a device</h1>
${message}
<label for="user-code">Code</label>
<span class="help" id="user-code-help">Eight letters, as shown on your device; the dash is optional.</span>
${input}
<p><button type="submit" form="op.deviceInputForm">Continue</button></p>`,
  );
}

export async function deviceUserCodeConfirmPage(
  ctx: KoaContextWithOIDC,
  form: string,
  client: { clientName?: string; clientId: string },
  _info: unknown,
  userCode: string,
): Promise<void> {
  const name = client.clientName || client.clientId;
  sendPage(
    page(ctx),
    200,
    'Confirm the device',
    `<h1>Confirm the device</h1>
<p class="lead"><strong>${escapeHtml(name)}</strong> asks to sign in. Your device must show this code:</p>
<p class="ok"><code>${escapeHtml(userCode)}</code></p>
<p class="help">If you did not start this, or the code differs, cancel.</p>
${form}
<p><button type="submit" form="op.deviceConfirmForm">Continue</button>
<button type="submit" form="op.deviceConfirmForm" name="abort" value="yes" class="secondary">Cancel</button></p>`,
  );
}

export async function deviceSuccessPage(ctx: KoaContextWithOIDC): Promise<void> {
  const name = ctx.oidc.client?.clientName ?? 'The device';
  sendPage(
    page(ctx),
    200,
    'Device connected',
    `<h1>Device connected</h1>\n<p class="ok" role="status">${escapeHtml(name)} is signed in. You can close this window and go back to your device.</p>`,
  );
}

export async function logoutPage(ctx: KoaContextWithOIDC, form: string): Promise<void> {
  sendPage(
    page(ctx),
    200,
    'Sign out',
    `<h1>Sign out?</h1>
<p class="lead">You will have to sign in again the next time an application asks.</p>
${form}
<p><button type="submit" form="op.logoutForm" name="logout" value="yes">Sign out</button>
<button type="submit" form="op.logoutForm" class="secondary">Stay signed in</button></p>`,
  );
}

export async function signedOutPage(ctx: KoaContextWithOIDC): Promise<void> {
  sendPage(page(ctx), 200, 'Signed out', '<h1>Signed out</h1>\n<p class="ok" role="status">You are signed out. You can close this window.</p>');
}

export async function errorPage(ctx: KoaContextWithOIDC, out: { error?: string; error_description?: string }): Promise<void> {
  const status = ctx.status && ctx.status >= 400 ? ctx.status : 400;
  sendPage(
    page(ctx),
    status,
    'Sign-in could not continue',
    `<h1>Sign-in could not continue</h1>
<p class="alert" role="alert">${escapeHtml(out.error_description ?? 'The request is not valid.')}</p>
<p class="help">Error code: <code>${escapeHtml(out.error ?? 'invalid_request')}</code>. Go back to the application and start again.</p>`,
  );
}
