// How connections look on console pages: the status badge (connected, or needing reconnection),
// how an auth connects, and the connect button that leads to a hosted link (the connections list,
// a connection's page, and later an agent's readiness all use them).
import type { Integration, IntegrationAuth } from '../../../shared/integrations/auths.ts';
import type { ConnectionRow } from '../../../shared/integrations/connections.ts';
import { csrfField } from '../forms.ts';
import { type Html, html, when } from '../html.ts';
import type { PageContext } from '../page.ts';

export function connectionBadge(row: Pick<ConnectionRow, 'needs_reconnection'>): Html {
  return row.needs_reconnection
    ? html`<span class="badge status-failed" data-status="needs_reconnection">Needs reconnection</span>`
    : html`<span class="badge status-success" data-status="connected">Connected</span>`;
}

const HOW: Record<IntegrationAuth['connect'], string> = { fields: 'a form', login: 'a form, then a sign-in', oauth2: 'OAuth 2 at the provider' };

export function connectHow(auth: Pick<IntegrationAuth, 'connect'>): string {
  return HOW[auth.connect];
}

/**
 * A button that asks for a hosted connect link for one auth (`connection`: reconnect that
 * connection in place; `scopes`: recorded on the connection, as an agent's readiness needs them);
 * the answer is a page leading to the link (pages/connection-connect.ts).
 */
export function connectButton(
  page: PageContext<unknown>,
  o: { integration: Pick<Integration, 'id' | 'displayName'>; authKey: string; connectionId?: string; scopes?: string[]; label?: string; className?: string },
): Html {
  const label = o.label ?? (o.connectionId ? 'Reconnect' : 'Connect');
  const scopes = (o.scopes ?? []).map((s) => html`<input type="hidden" name="scope" value="${s}">`);
  return html`<form method="post" action="${page.space!.base}/connections/connect" \
class="inline-form">${csrfField(page)}<input type="hidden" name="integration" value="${o.integration.id}"><input \
type="hidden" name="auth" value="${o.authKey}">${when(
    o.connectionId,
    html`<input type="hidden" name="connection" \
value="${o.connectionId ?? ''}">`,
  )}${scopes}<button type="submit" class="${o.className ?? 'small secondary'}" \
aria-label="${label} ${o.integration.displayName} (${o.authKey})">${label}</button></form>`;
}
