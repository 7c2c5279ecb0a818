// How agents look on console pages: their address, and whether the person's connections are
// ready for an agent's integrations (GET /api/agents/{scope}/{name}/connection-readiness), each
// with the connections pages' connect button (a hosted link for the auth the agent uses, its
// scopes, the connection to refresh in place).
import type { IntegrationReadiness } from '../../../shared/integrations/readiness.ts';
import { type Html, html } from '../html.ts';
import type { PageContext } from '../page.ts';
import { connectButton } from './connections.ts';

/** An agent's page: `…/agents/@scope/name`. */
export function agentPath(base: string, id: string): string {
  return `${base}/agents/${id}`;
}

const READINESS: Record<IntegrationReadiness['status'], { label: string; badge: string; action: string }> = {
  ready: { label: 'Connected', badge: 'status-success', action: 'Connect another' },
  missing: { label: 'Not connected', badge: 'status-failed', action: 'Connect' },
  needs_reconnection: { label: 'Needs reconnection', badge: 'status-timeout', action: 'Reconnect' },
  missing_scopes: { label: 'Missing scopes', badge: 'status-timeout', action: 'Reconnect with the scopes' },
};

export function readinessBadge(status: IntegrationReadiness['status']): Html {
  return html`<span class="badge ${READINESS[status].badge}" data-readiness="${status}">${READINESS[status].label}</span>`;
}

/**
 * One row per integration the agent depends on: its state for the person, the connection a run
 * would use, and (with integrations:connect) the button to connect, reconnect or widen it.
 */
export function readinessTable(page: PageContext<unknown>, rows: IntegrationReadiness[]): Html {
  if (!rows.length) return html`<p class="note">This agent uses no integration: nothing to connect.</p>`;
  const canConnect = page.space!.scopes.has('integrations:connect');
  const body = rows.map((r) => {
    const connection = r.candidate_connections.find((c) => c.id === r.connection_id);
    const connectable = r.auth_key !== null && r.available_auth_keys.includes(r.auth_key);
    const button = !connectable
      ? html`<span class="muted">${
          r.available_auth_keys.length
            ? `No auth ${r.required_auth_key ?? ''} in this \
integration`
            : 'Not available in this space'
        }</span>`
      : canConnect
        ? connectButton(page, {
            integration: { id: r.packageId, displayName: r.packageId },
            authKey: r.auth_key!,
            // Reconnecting or widening refreshes that connection in place; a new one otherwise.
            connectionId: r.status === 'needs_reconnection' || r.status === 'missing_scopes' ? (r.connection_id ?? undefined) : undefined,
            scopes: r.required_scopes,
            label: READINESS[r.status].action,
            className: r.status === 'ready' ? 'small secondary' : 'small',
          })
        : html`<span class="muted">Connecting needs integrations:connect</span>`;
    const scopes = r.missing_scopes.length ? html`<br><span class="help">Lacks ${r.missing_scopes.join(', ')}</span>` : '';
    return html`<tr data-integration="${r.packageId}"><td><code>${r.packageId}</code></td><td>${r.auth_key ?? '—'}</td>\
<td>${readinessBadge(r.status)}${scopes}</td><td>${
      connection
        ? html`${connection.label} <span \
class="muted">(${connection.account_id || connection.id})</span>`
        : html`<span class="muted">none</span>`
    }</td><td \
class="actions">${button}</td></tr>`;
  });
  return html`<table class="data readiness"><caption class="visually-hidden">Connections of the agent's integrations\
</caption><thead><tr><th scope="col">Integration</th><th scope="col">Auth</th><th scope="col">State</th><th \
scope="col">Connection a run uses</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>\
<tbody>${body}</tbody></table>`;
}
