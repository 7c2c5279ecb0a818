// The agents of a space (what GET /api/agents lists the person: the space's own and those shared
// from the default space), each with its latest version, its last run and what runs now, leading
// to its page (versions, the launch form, connections).
import { OFFSET_MAX } from '../../pagination.ts';
import { listAgents } from '../../resources/agents.ts';
import { formatCount } from '../format.ts';
import { html } from '../html.ts';
import { sendConsolePage } from '../layout.ts';
import { definePage } from '../page.ts';
import { agentPath } from '../views/agents.ts';
import { statusBadge } from '../views/runs.ts';

const PAGE_SIZE = 50;

export default definePage({
  method: 'get',
  path: '/orgs/:orgId/spaces/:spaceId/agents',
  context: 'space',
  scope: 'agents:read',
  nav: { label: 'Agents', order: 30 },
  async handler(page) {
    const base = page.space!.base;
    const raw = Number(typeof page.query.offset === 'string' ? page.query.offset : 0);
    const offset = Number.isInteger(raw) && raw >= 0 && raw <= OFFSET_MAX ? raw : 0;
    const { data, hasMore } = await listAgents(page.ctx, PAGE_SIZE, offset);
    const rows = data.map((a) => {
      const href = agentPath(base, a.id);
      const last = a.last_run
        ? html`<a href="${base}/runs/${a.last_run.id}">${statusBadge(a.last_run.status)}</a>`
        : html`<span class="muted">never run</span>`;
      const integrations = a.dependencies.integrations.length;
      return html`<tr id="agent-${a.id.replace(/[^a-z0-9-]/g, '_')}">
<td><a class="agent-link" href="${href}"><strong>${a.display_name ?? a.id}</strong></a><br><code class="muted">${a.id}</code></td>
<td>${a.description ?? ''}</td>
<td>${a.version ? html`<code>${a.version}</code>` : html`<span class="muted">unpublished</span>`}</td>
<td class="num">${formatCount(a.version_count)}</td>
<td>${last}</td>
<td class="num">${a.running_runs ? formatCount(a.running_runs) : '—'}</td>
<td class="num">${integrations || '—'}</td>
<td class="actions">${a.version && page.space!.scopes.has('agents:run') ? html`<a class="button small secondary" href="${href}#launch">Launch…</a>` : ''}</td>
</tr>`;
    });
    const pager =
      offset > 0 || hasMore
        ? html`<nav class="pager" aria-label="Pages of agents">${
            offset > 0
              ? html`<a rel="prev" \
href="${base}/agents?offset=${Math.max(0, offset - PAGE_SIZE)}">← Previous</a>`
              : ''
          }${
            hasMore
              ? html`<a rel="next" \
href="${base}/agents?offset=${offset + PAGE_SIZE}">Next →</a>`
              : ''
          }</nav>`
        : '';
    const table = rows.length
      ? html`<table class="data agents"><caption class="visually-hidden">Agents of this space</caption><thead><tr><th \
scope="col">Agent</th><th scope="col">Description</th><th scope="col">Latest version</th><th scope="col" \
class="num">Versions</th><th scope="col">Last run</th><th scope="col" class="num">Running</th><th scope="col" \
class="num">Integrations</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>\
<tbody>${rows}</tbody></table>`
      : html`<p class="empty">${offset ? 'No more agents.' : 'No agent in this space yet. Import one (POST /api/packages/import) and it shows here.'}</p>`;
    sendConsolePage(page, {
      title: 'Agents',
      current: 'agents',
      body: html`<p class="lead">The agents this space can run: its own, and those shared from the organization's default space.</p>${table}${pager}`,
    });
  },
});
