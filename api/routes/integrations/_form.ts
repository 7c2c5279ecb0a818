// The hosted connect form (SPEC 4.7, DESIGN.md 7): server-side HTML generated from an auth's
// `credentials.schema`, no script at all, a strict Content-Security-Policy whose only allowance
// is the inline stylesheet's hash, and a double-submit CSRF token: a random value in an
// HttpOnly SameSite=Strict cookie scoped to the connect path, and in the form its HMAC bound to
// the link's token. Field values never come back into a page when the field is secret.
import type { Knex } from 'knex';
import { safeEqual } from '../../../shared/crypto.ts';
import { type ErrorCode, type ProblemFieldError, problem } from '../../../shared/errors.ts';
import { findIntegration, type Integration, type IntegrationAuth } from '../../../shared/integrations/auths.ts';
import type { ConnectSessionRow } from '../../../shared/integrations/connect-sessions.ts';
import { type CsrfScope, csrfValid as validCsrf, issueCsrf as newCsrf } from '../../html/csrf.ts';
import { escapeHtml, sendPage } from '../../html/page.ts';
import type { AppContext } from '../../context.ts';

export { CONTENT_SECURITY_POLICY, escapeHtml, sendPage } from '../../html/page.ts';

export const CONNECT_PATH = '/api/integrations/connect';
export const SUBMIT_PATH = `${CONNECT_PATH}/submit`;
export const CSRF_COOKIE = 'svc.connect_csrf';
/**
 * The OAuth 2 `state` of the redirect this browser started. The callback needs it: a provider URL
 * handed to someone else (a victim's consent) cannot finish on the link of the one who made it.
 * SameSite=Lax: the provider sends the browser back with a top-level GET.
 */
export const OAUTH_STATE_COOKIE = 'svc.connect_oauth';

export function setOAuthStateCookie(ctx: AppContext, state: string): void {
  const secure = ctx.services.config.publicUrl.startsWith('https:') ? '; Secure' : '';
  ctx.append('Set-Cookie', `${OAUTH_STATE_COOKIE}=${state}; Path=${CONNECT_PATH}; Max-Age=600; HttpOnly; SameSite=Lax${secure}`);
}

/** True when this browser started the redirect that carried `state`. */
export function startedHere(ctx: AppContext, state: string): boolean {
  const cookie = ctx.cookies.get(OAUTH_STATE_COOKIE);
  return !!cookie && safeEqual(cookie, state);
}
/** Form field names of the credentials: `field.<property>` (never clashes with token or csrf). */
export const FIELD_PREFIX = 'field.';

/** Problem codes of the statuses a message page may carry, for clients that do not ask for HTML. */
const PAGE_PROBLEMS: Record<number, ErrorCode> = { 403: 'forbidden', 404: 'not_found', 410: 'connect_link_gone', 501: 'not_implemented' };

/**
 * A page that only says something: a heading and paragraphs (plain text, escaped). A person's
 * browser asks for HTML and gets the page; any other client (no Accept header, or JSON) gets the
 * same error as a problem document, like every other route.
 */
export function sendMessage(ctx: AppContext, status: number, heading: string, paragraphs: string[], title = heading): void {
  const code = PAGE_PROBLEMS[status];
  if (code && ctx.accepts('application/problem+json', 'text/html') !== 'text/html') throw problem(code, `${heading}. ${paragraphs.join(' ')}`);
  sendPage(ctx, status, title, `<h1>${escapeHtml(heading)}</h1>\n${paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`).join('\n')}`);
}

export function sendLinkGone(ctx: AppContext): void {
  sendMessage(ctx, 410, 'This link has expired or was already used', [
    'A connect link works once, for ten minutes.',
    'Ask the application that sent you here for a new link.',
  ]);
}

export function sendSuccess(ctx: AppContext, integration: Integration, label: string): void {
  sendPage(
    ctx,
    200,
    `Connected to ${integration.displayName}`,
    `<h1>${escapeHtml(integration.displayName)}</h1>
<p class="ok" role="status">Connected to ${escapeHtml(integration.displayName)} as <strong>${escapeHtml(label)}</strong>.</p>
<p>You can close this window.</p>`,
  );
}

// ---- CSRF: double submit, the form value bound to the link ----

const CSRF: CsrfScope = { cookie: CSRF_COOKIE, path: CONNECT_PATH, purpose: 'connect-form-csrf' };

/** The hidden form value for the link's `token`; sets the cookie when the browser has none. */
export function issueCsrf(ctx: AppContext, token: string): string {
  return newCsrf(ctx, CSRF, token);
}

export function csrfValid(ctx: AppContext, token: string, submitted: string | undefined): boolean {
  return validCsrf(ctx, CSRF, token, submitted);
}

// ---- the session's integration ----

/** The link's integration and auth as its space sees them now, or undefined. */
export async function sessionTarget(knex: Knex, row: ConnectSessionRow): Promise<{ integration: Integration; auth: IntegrationAuth } | undefined> {
  const slash = row.integration_package_id.indexOf('/');
  const integration = await findIntegration(
    knex,
    row.org_id,
    row.space_id,
    row.integration_package_id.slice(0, slash),
    row.integration_package_id.slice(slash + 1),
  );
  const auth = integration?.auths.find((a) => a.key === row.auth_key);
  return integration && auth ? { integration, auth } : undefined;
}

// ---- fields ----

type Prop = Record<string, any>;

function propsOf(auth: IntegrationAuth): Array<[string, Prop]> {
  return Object.entries((auth.credentialsSchema.properties ?? {}) as Record<string, Prop>);
}

/** Masked on input and never shown again: declared secret, or named like one. */
export function isSecret(name: string, prop: Prop): boolean {
  return prop.writeOnly === true || prop.format === 'password' || /password|passphrase|secret|token|api_?key|private_?key|otp|^pin$|credential/i.test(name);
}

/** `api_key` -> `Api key`, `clientId` -> `Client id`. */
export function readableName(name: string): string {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[\s_.-]+/)
    .filter(Boolean)
    .join(' ')
    .toLowerCase();
  return words ? words[0].toUpperCase() + words.slice(1) : name;
}

function typeOf(prop: Prop): string | undefined {
  return Array.isArray(prop.type) ? prop.type.find((t: string) => t !== 'null') : prop.type;
}

/**
 * The submitted form as the schema's values: number/integer/boolean converted, an empty text
 * left out (so a required field reads as missing), an unchecked box false.
 */
export function credentialsFromForm(auth: IntegrationAuth, form: URLSearchParams): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, prop] of propsOf(auth)) {
    const raw = form.get(FIELD_PREFIX + name);
    const type = typeOf(prop);
    if (type === 'boolean') {
      out[name] = raw === 'true' || raw === 'on';
      continue;
    }
    if (raw === null || raw === '') continue;
    if (type === 'number' || type === 'integer') {
      const n = Number(raw.trim());
      out[name] = raw.trim() !== '' && Number.isFinite(n) ? n : raw;
    } else {
      out[name] = raw;
    }
  }
  return out;
}

/** `credentials.<field>` errors by field, in words for a person; the rest for the top. */
export function fieldErrorsOf(errors: ProblemFieldError[] | undefined, auth: IntegrationAuth): { byField: Record<string, string>; other: string[] } {
  const byField: Record<string, string> = {};
  const other: string[] = [];
  const names = new Set(auth.fields);
  for (const e of errors ?? []) {
    const name = e.field.startsWith('credentials.') ? e.field.slice('credentials.'.length) : undefined;
    if (!name || !names.has(name)) {
      other.push(e.message);
      continue;
    }
    const prop = (auth.credentialsSchema.properties as Record<string, Prop>)[name] ?? {};
    const type = typeOf(prop);
    let message: string;
    if (e.code === 'required') message = 'This field is required.';
    else if (e.code === 'invalid_type')
      message = type === 'integer' ? 'Enter a whole number.' : type === 'number' ? 'Enter a number.' : `Enter a ${type ?? 'valid value'}.`;
    else message = `${e.message.replace(`credentials.${name} `, '').replace(/^./, (c) => c.toUpperCase())}.`.replace(/\.\.$/, '.');
    byField[name] ??= message;
  }
  return { byField, other };
}

export interface FormState {
  integration: Integration;
  auth: IntegrationAuth;
  token: string;
  csrf: string;
  /** Non-secret values to show again. */
  values?: URLSearchParams;
  fieldErrors?: Record<string, string>;
  topError?: string;
  reconnect?: boolean;
}

function fieldHtml(name: string, prop: Prop, required: boolean, state: FormState): string {
  const id = `f-${name.replace(/[^A-Za-z0-9_-]/g, '_')}`;
  const inputName = escapeHtml(FIELD_PREFIX + name);
  const label = escapeHtml(typeof prop.title === 'string' && prop.title.trim() ? prop.title : readableName(name));
  const error = state.fieldErrors?.[name];
  const secret = isSecret(name, prop);
  const type = typeOf(prop);
  const submitted = state.values?.get(FIELD_PREFIX + name);
  const value = secret ? undefined : (submitted ?? (prop.default !== undefined && typeof prop.default !== 'object' ? String(prop.default) : undefined));
  const described: string[] = [];
  const help = typeof prop.description === 'string' && prop.description ? `<span class="help" id="${id}-help">${escapeHtml(prop.description)}</span>` : '';
  if (help) described.push(`${id}-help`);
  const err = error ? `<span class="error" id="${id}-error">${escapeHtml(error)}</span>` : '';
  if (err) described.push(`${id}-error`);
  const aria = `${described.length ? ` aria-describedby="${described.join(' ')}"` : ''}${error ? ' aria-invalid="true"' : ''}`;
  const req = required ? ' required' : '';
  const marker = required ? ' <span class="req" aria-hidden="true">*</span>' : '';

  if (type === 'boolean') {
    const checked = (submitted ?? (prop.default === true ? 'true' : '')) === 'true' ? ' checked' : '';
    return `<div class="field check"><input type="checkbox" id="${id}" name="${inputName}" \
value="true"${checked}${aria}><label for="${id}">${label}</label>${help}${err}</div>`;
  }
  let control: string;
  if (Array.isArray(prop.enum)) {
    const options = [
      ...(required ? [] : ['<option value=""></option>']),
      ...prop.enum.map((v: unknown) => `<option value="${escapeHtml(v)}"${value === String(v) ? ' selected' : ''}>${escapeHtml(v)}</option>`),
    ];
    control = `<select id="${id}" name="${inputName}"${req}${aria}>${options.join('')}</select>`;
  } else {
    let inputType = 'text';
    let extra = '';
    if (secret) inputType = 'password';
    else if (type === 'number' || type === 'integer') {
      inputType = 'number';
      extra = type === 'integer' ? ' step="1"' : ' step="any"';
    } else if (prop.format === 'email') inputType = 'email';
    else if (prop.format === 'uri' || prop.format === 'url') inputType = 'url';
    if (typeof prop.maxLength === 'number') extra += ` maxlength="${prop.maxLength}"`;
    const autocomplete = secret ? 'off' : name.toLowerCase().includes('user') || prop.format === 'email' ? 'username' : 'off';
    control =
      `<input type="${inputType}" id="${id}" name="${inputName}"${value !== undefined ? ` value="${escapeHtml(value)}"` : ''}${extra}${req} ` +
      `autocomplete="${autocomplete}" spellcheck="false"${aria}>`;
  }
  return `<div class="field"><label for="${id}">${label}${marker}</label>${control}${help}${err}</div>`;
}

export function sendForm(ctx: AppContext, status: number, state: FormState): void {
  const { integration, auth } = state;
  const required = new Set<string>(Array.isArray(auth.credentialsSchema.required) ? auth.credentialsSchema.required : []);
  // Stored manifests lose property order (jsonb): required fields first, in `required` order.
  const order = [...required];
  const fields = propsOf(auth)
    .sort(([a], [b]) => (order.indexOf(a) + 1 || order.length + 1) - (order.indexOf(b) + 1 || order.length + 1))
    .map(([name, prop]) => fieldHtml(name, prop, required.has(name), state))
    .join('\n');
  const lead = state.reconnect ? 'Enter your details again to reconnect your account.' : 'Enter your details to connect your account.';
  const top = state.topError ? `<div class="alert" role="alert">${escapeHtml(state.topError)}</div>` : '';
  const note =
    auth.connect === 'login'
      ? `These details are sent once to ${integration.displayName} to sign you in; the password is not stored.`
      : `These details are stored encrypted and used only for requests to ${integration.displayName}.`;
  sendPage(
    ctx,
    status,
    `Connect ${integration.displayName}`,
    `<h1>${escapeHtml(integration.displayName)}</h1>
<p class="lead">${escapeHtml(lead)}</p>
${top}
<form method="post" action="${SUBMIT_PATH}" autocomplete="off">
<input type="hidden" name="token" value="${escapeHtml(state.token)}">
<input type="hidden" name="csrf" value="${escapeHtml(state.csrf)}">
${fields}
<button type="submit">Connect</button>
</form>
<p class="note">${required.size ? '<span class="req" aria-hidden="true">*</span> Required. ' : ''}${escapeHtml(note)}</p>`,
  );
}
