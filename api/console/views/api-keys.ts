// How API keys look on console pages: who made each, and the revoke button, offered to those the
// API lets revoke it (its creator with api-keys:delete, or anyone holding spaces:write as well).
import type { Knex } from 'knex';
import type { ApiKey } from '../../../shared/db/models.ts';
import { csrfField } from '../forms.ts';
import { type Html, html } from '../html.ts';
import type { PageContext } from '../page.ts';

/** The creators' names (or emails) by user id. */
export async function keyCreators(knex: Knex, keys: Pick<ApiKey, 'created_by'>[]): Promise<Map<string, string>> {
  const ids = [...new Set(keys.map((k) => k.created_by))];
  const users: { id: string; name: string; email: string }[] = ids.length ? await knex('users').whereIn('id', ids).select('id', 'name', 'email') : [];
  return new Map(users.map((u) => [u.id, u.name || u.email]));
}

export function keyRevokeButton(page: PageContext<unknown>, key: Pick<ApiKey, 'id' | 'name' | 'created_by'>, className = 'danger'): Html {
  const { scopes, base } = page.space!;
  const may = scopes.has('api-keys:delete') && (key.created_by === page.user!.id || scopes.has('spaces:write'));
  if (!may) return html``;
  return html`<form method="post" action="${base}/api-keys/${key.id}/revoke" \
class="inline-form">${csrfField(page)}<button type="submit" class="${className}" aria-label="Revoke ${key.name}">Revoke\
</button></form>`;
}
