import { problem } from '../../../shared/errors.ts';
import { type WebhookRow, webhookDto, webhookSchema } from '../../../shared/webhooks/model.ts';
import { cursorPage, cursorQuery, limitFrom } from '../../pagination.ts';
import { defineRoute } from '../../route.ts';
import { listOf } from '../../schemas.ts';
import { allowed, webhooksOf } from '../../resources/webhooks.ts';
import { boundSpaceId } from '../../middleware/authenticate.ts';

export default defineRoute<unknown, { spaceId?: string; all?: boolean; limit?: number; startingAfter?: string; endingBefore?: string }>({
  method: 'get',
  path: '/api/webhooks',
  operationId: 'listWebhooks',
  summary: 'List webhooks, newest first (cursor pagination)',
  description:
    "Without parameters: the organization-level webhooks; `spaceId=` adds that space's; `all=true` (needs `org-webhooks:read`) " +
    "spans every space. With an API key: the webhooks of the key's space, parameters ignored.",
  tag: 'Webhooks',
  auth: 'any',
  context: 'org',
  rateLimit: { points: 300, duration: 60, by: 'identity' },
  query: { type: 'object', properties: { spaceId: { type: 'string' }, all: { type: 'boolean' }, ...cursorQuery } },
  responses: { 200: { description: 'List', schema: listOf(webhookSchema) } },
  async handler(ctx, { query }) {
    const auth = ctx.state.auth!;
    const orgId = ctx.state.tenancy!.org!.id;
    let q = ctx.services.knex('webhooks').where({ org_id: orgId });
    const pinned = boundSpaceId(auth);
    if (pinned) {
      const spaceId = pinned;
      if (!(await allowed(ctx, 'space', spaceId, 'read'))) throw problem('forbidden', 'This needs webhooks:read');
      q.where({ level: 'space', space_id: spaceId });
    } else if (query.all) {
      if (!(await allowed(ctx, 'org', null, 'read'))) throw problem('forbidden', 'all=true needs org-webhooks:read');
    } else {
      const orgLevel = await allowed(ctx, 'org', null, 'read');
      const space = query.spaceId && (await allowed(ctx, 'space', query.spaceId, 'read')) ? query.spaceId : null;
      if (query.spaceId && !space) throw problem('forbidden', { detail: 'This needs webhooks:read in that space', param: 'spaceId' });
      q = webhooksOf(ctx.services.knex, orgId, { org: orgLevel, spaceId: space });
    }
    // Link headers keep `spaceId` and `all`: the next page is of the same list.
    const { rows, hasMore } = await cursorPage<WebhookRow>(ctx, q, {
      limit: limitFrom(query.limit, 20, 100),
      startingAfter: query.startingAfter,
      endingBefore: query.endingBefore,
    });
    ctx.body = { object: 'list', data: rows.map(webhookDto), hasMore };
  },
});
