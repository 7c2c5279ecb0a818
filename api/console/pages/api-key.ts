// One API key in force in the space (404 for any other: revoked, expired, another space's or
// organization's), shown once with its secret right after it was made, and its revocation
// (DELETE /api/api-keys/{id}, on its rate-limit counter, with the route's rule: the creator, or
// anyone holding spaces:write as well).
import type { ApiKey } from '../../../shared/db/models.ts';
import { problem } from '../../../shared/errors.ts';
import { liveApiKeys, revokeApiKey } from '../../../shared/identity/api-keys.ts';
import { DEFAULT_RATE_LIMITS } from '../../rate-limits.ts';
import { keyHolder } from '../../resources/api-keys.ts';
import { setFlash } from '../flash.ts';
import { formatTime } from '../format.ts';
import { html } from '../html.ts';
import { sendConsolePage } from '../layout.ts';
import { definePage, redirect } from '../page.ts';
import { takeRevealed } from '../reveal.ts';
import { keyCreators, keyRevokeButton } from '../views/api-keys.ts';

type Params = { keyId: string };

export const apiKeyPage = definePage<Params>({
  method: 'get',
  path: '/orgs/:orgId/spaces/:spaceId/api-keys/:keyId',
  context: 'space',
  scope: 'api-keys:read',
  async handler(page) {
    const { knex } = page.ctx.services;
    const { org, space, base } = page.space!;
    const key = (await liveApiKeys(knex, org.id, space.id).where({ id: page.params.keyId }).first()) as ApiKey | undefined;
    if (!key) throw problem('not_found', 'No such API key');
    const secret = takeRevealed(page.ctx, page.sessionId, `key:${key.id}`);
    const creators = await keyCreators(knex, [key]);
    const reveal = secret
      ? html`<section class="reveal" aria-labelledby="secret-heading"><h2 id="secret-heading">Your new key</h2>
<p><code id="api-key-secret" class="secret-value">${secret}</code> <button type="button" class="small secondary" \
data-controller="copy" data-copy-target="api-key-secret">Copy key</button></p>
<p class="help">Shown this once: store it now. Send it as <code>Authorization: Bearer …</code>; it acts \
in ${space.name} as you, with at most the permissions below.</p></section>`
      : '';
    sendConsolePage(page, {
      title: `API key ${key.name}`,
      current: 'api-keys',
      crumbs: [{ label: 'API keys', href: `${base}/api-keys` }, { label: key.name }],
      heading: html`<h1>API key <span class="muted">${key.name}</span></h1>`,
      body: html`${reveal}
<section class="run-summary" aria-label="Key">
<div class="run-actions">${keyRevokeButton(page, key)}</div>
<dl class="facts">
<div><dt>Id</dt><dd><code>${key.id}</code></dd></div>
<div><dt>Key</dt><dd><code>${key.key_prefix}…</code></dd></div>
<div><dt>Created by</dt><dd>${creators.get(key.created_by) ?? key.created_by}</dd></div>
<div><dt>Created</dt><dd><time datetime="${key.created_at.toISOString()}">${formatTime(key.created_at)}</time></dd></div>
<div><dt>Expires</dt><dd>${key.expires_at ? html`<time datetime="${key.expires_at.toISOString()}">${formatTime(key.expires_at)}</time>` : 'Never'}</dd></div>
<div><dt>Last used</dt><dd>${
        key.last_used_at
          ? html`<time \
datetime="${key.last_used_at.toISOString()}">${formatTime(key.last_used_at)}</time>`
          : 'Not yet'
      }</dd></div>
</dl>
</section>
<h2>Permissions</h2>
<ul class="scopes">${key.scopes.map((s) => html`<li><code class="chip">${s}</code></li>`)}</ul>
<p class="help">A key never holds more than its creator does now: if their role shrinks, so does the key.</p>`,
    });
  },
});

export const apiKeyRevoke = definePage<Params>({
  method: 'post',
  path: '/orgs/:orgId/spaces/:spaceId/api-keys/:keyId/revoke',
  context: 'space',
  scope: 'api-keys:delete',
  rateLimit: { key: 'DELETE /api/api-keys/:id', rule: DEFAULT_RATE_LIMITS.write },
  async handler(page) {
    const key = await revokeApiKey(page.ctx.services.knex, keyHolder(page.ctx), page.params.keyId);
    setFlash(page.ctx, { kind: 'ok', text: `Revoked the key “${key.name}”: it is refused from now on.` });
    redirect(page, `${page.space!.base}/api-keys`);
  },
});
