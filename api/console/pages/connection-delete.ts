// Delete one of the person's connections (DELETE /api/connections/{id}, on its rate-limit
// counter): the same deletion, schedules that relied on it disabled in the same transaction.
import { deleteConnection } from '../../../shared/integrations/disconnect.ts';
import { DEFAULT_RATE_LIMITS } from '../../rate-limits.ts';
import { findCallerConnection } from '../../resources/connections.ts';
import { setFlash } from '../flash.ts';
import { definePage, redirect } from '../page.ts';

export default definePage<{ connectionId: string }>({
  method: 'post',
  path: '/orgs/:orgId/spaces/:spaceId/connections/:connectionId/delete',
  context: 'space',
  scope: 'integrations:disconnect',
  rateLimit: { key: 'DELETE /api/connections/:id', rule: DEFAULT_RATE_LIMITS.write },
  async handler(page) {
    const row = await findCallerConnection(page.ctx, page.params.connectionId);
    await deleteConnection(page.ctx.services.knex, page.ctx.services.workflows, row);
    setFlash(page.ctx, { kind: 'ok', text: `Deleted the connection “${row.label}” to ${row.integration_package_id}.` });
    redirect(page, `${page.space!.base}/connections`);
  },
});
