// The space's API keys still in force (GET /api/api-keys: never the key itself) and the form
// that creates one (POST /api/api-keys, on its rate-limit counter: name, scopes among those the
// person can grant, expiry). A new key is shown once, on its own page, right after the form
// (reveal.ts); a refusal shows this page again with the reasons beside the fields.
import type { ApiKey } from '../../../shared/db/models.ts';
import { ProblemError } from '../../../shared/errors.ts';
import { availableKeyScopes, createApiKey, liveApiKeys } from '../../../shared/identity/api-keys.ts';
import { DEFAULT_RATE_LIMITS } from '../../rate-limits.ts';
import { keyHolder } from '../../resources/api-keys.ts';
import { setFlash } from '../flash.ts';
import { formatTime } from '../format.ts';
import { checkboxesField, csrfField, errorSummary, type FieldErrors, textField } from '../forms.ts';
import { type Html, html } from '../html.ts';
import { sendConsolePage } from '../layout.ts';
import { definePage, type PageContext, redirect } from '../page.ts';
import { revealOnce } from '../reveal.ts';
import { instant } from '../views/run-filters.ts';
import { keyRevokeButton, keyCreators } from '../views/api-keys.ts';

const MAX_ROWS = 200;

interface KeyForm {
  name?: string;
  scopes?: string[];
  expiresAt?: string;
  errors?: FieldErrors;
}

function createForm(page: PageContext, f: KeyForm): Html {
  const { scopes, space } = page.space!;
  if (!scopes.has('api-keys:create')) return html`<p class="note">Creating keys needs the api-keys:create permission in this space.</p>`;
  if (space.kind === 'personal') return html`<p class="note">A personal space takes no API keys: create them in a team or the default space.</p>`;
  const available = availableKeyScopes(keyHolder(page.ctx));
  return html`<section aria-labelledby="create-heading" class="card">
<h2 id="create-heading">Create a key</h2>
${errorSummary(f.errors, 'The key could not be created')}
<form method="post" action="${page.space!.base}/api-keys" class="stack" aria-labelledby="create-heading">${csrfField(page)}
${textField({
  id: 'key-name',
  name: 'name',
  label: 'Name',
  value: f.name,
  required: true,
  help: 'What uses it, e.g. “billing service”.',
  error: f.errors?.['key-name'],
})}
${checkboxesField({
  id: 'key-scopes',
  name: 'scopes',
  legend: 'Permissions',
  options: available.map((s) => ({ value: s, label: s })),
  checked: new Set(f.scopes ?? []),
  help: 'Only permissions you hold here are offered; none checked gives the key every one listed. A key never holds more than its ' + 'creator does now.',
  error: f.errors?.['key-scopes'],
})}
${textField({
  id: 'key-expires',
  name: 'expiresAt',
  label: 'Expires (UTC)',
  type: 'datetime-local',
  value: f.expiresAt,
  help: 'Empty: the key works until it is revoked.',
  error: f.errors?.['key-expires'],
})}
<div><button type="submit">Create key</button></div>
</form>
</section>`;
}

async function renderKeysPage(page: PageContext, o: { form?: KeyForm; status?: number } = {}): Promise<void> {
  const { knex } = page.ctx.services;
  const { org, space, base } = page.space!;
  const keys = (await liveApiKeys(knex, org.id, space.id)
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(MAX_ROWS)) as ApiKey[];
  const creators = await keyCreators(knex, keys);
  const rows = keys.map(
    (k) => html`<tr id="key-${k.id}">
<td><a href="${base}/api-keys/${k.id}">${k.name}</a></td>
<td><code>${k.key_prefix}…</code></td>
<td>${k.scopes.length} <span class="muted">${k.scopes.slice(0, 3).join(', ')}${k.scopes.length > 3 ? ', …' : ''}</span></td>
<td>${creators.get(k.created_by) ?? k.created_by}</td>
<td>${k.expires_at ? html`<time datetime="${k.expires_at.toISOString()}">${formatTime(k.expires_at)}</time>` : html`<span class="muted">Never</span>`}</td>
<td>${
      k.last_used_at
        ? html`<time \
datetime="${k.last_used_at.toISOString()}">${formatTime(k.last_used_at)}</time>`
        : html`<span class="muted">Not yet\
</span>`
    }</td>
<td class="actions">${keyRevokeButton(page, k, 'small danger')}</td>
</tr>`,
  );
  const table = rows.length
    ? html`<table class="data"><caption class="visually-hidden">API keys in force, newest first</caption><thead><tr><th \
scope="col">Name</th><th scope="col">Key</th><th scope="col">Permissions</th><th scope="col">Created by</th><th \
scope="col">Expires</th><th scope="col">Last used</th><th scope="col"><span class="visually-hidden">Actions</span></th>\
</tr></thead><tbody>${rows}</tbody></table>`
    : html`<p class="empty">No API key in this space yet.</p>`;
  sendConsolePage(page, {
    title: 'API keys',
    status: o.status,
    current: 'api-keys',
    body: html`<p class="lead">Keys let programs call the API as the person who made them, in ${space.name} only, with \
at most the permissions checked. The key itself is shown once, when it is made.</p>
${table}
${createForm(page, o.form ?? {})}`,
  });
}

export const apiKeysPage = definePage({
  method: 'get',
  path: '/orgs/:orgId/spaces/:spaceId/api-keys',
  context: 'space',
  scope: 'api-keys:read',
  nav: { label: 'API keys', order: 70 },
  handler: (page) => renderKeysPage(page),
});

export const apiKeyCreate = definePage({
  method: 'post',
  path: '/orgs/:orgId/spaces/:spaceId/api-keys',
  context: 'space',
  scope: 'api-keys:create',
  rateLimit: { key: 'POST /api/api-keys', rule: DEFAULT_RATE_LIMITS.write },
  async handler(page) {
    const { ctx } = page;
    const form: KeyForm = { name: (page.form.get('name') ?? '').trim(), scopes: page.form.getAll('scopes'), expiresAt: page.form.get('expiresAt') ?? '' };
    const refuse = (errors: FieldErrors) => renderKeysPage(page, { form: { ...form, errors }, status: 400 });
    const errors: FieldErrors = {};
    if (!form.name) errors['key-name'] = 'Give the key a name.';
    else if (form.name.length > 200) errors['key-name'] = 'At most 200 characters.';
    const expiresAt = form.expiresAt ? instant(form.expiresAt) : null;
    if (expiresAt === undefined) errors['key-expires'] = 'Give a date and time in UTC, or leave it empty.';
    if (Object.keys(errors).length) return refuse(errors);
    try {
      const { key, row } = await createApiKey(ctx.services.knex, keyHolder(ctx), { name: form.name!, scopes: form.scopes, expiresAt: expiresAt ?? null });
      revealOnce(ctx, page.sessionId!, `key:${row.id}`, key);
      setFlash(ctx, { kind: 'ok', text: `Created the key “${row.name}”: copy it now, it is not shown again.` });
      redirect(page, `${page.space!.base}/api-keys/${row.id}`);
    } catch (err) {
      if (!(err instanceof ProblemError)) throw err;
      if (err.code === 'validation_failed') return refuse({ 'key-expires': 'The expiry must be in the future.' });
      if (err.code === 'invalid_request') return refuse({ 'key-scopes': err.detail });
      return refuse({ '': err.detail });
    }
  },
});
