import type { OAuthClientRow } from '../../../../shared/oidc/clients.ts';
import { clientDto, clientSchema } from '../../../../shared/oidc/model.ts';
import { cursorPage, cursorQuery, limitFrom } from '../../../pagination.ts';
import { defineRoute } from '../../../route.ts';
import { listOf } from '../../../schemas.ts';
import { canActInSpace } from './_access.ts';

export default defineRoute<unknown, { limit?: number; startingAfter?: string; endingBefore?: string }>({
  method: 'get',
  path: '/api/oauth/clients',
  operationId: 'listOAuthClients',
  summary: "List the organization's OAuth clients, newest first (cursor pagination)",
  description:
    'Instance- and organization-level clients, and the space-level clients of the spaces the caller can act in (an API key: its own space). Never a secret.',
  tag: 'OAuth clients',
  auth: 'any',
  context: 'org',
  scope: 'oauth-clients:read',
  query: { type: 'object', properties: cursorQuery },
  responses: { 200: { description: 'List', schema: listOf(clientSchema) } },
  async handler(ctx, { query }) {
    const { knex } = ctx.services;
    const orgId = ctx.state.tenancy!.org!.id;
    // The spaces are those the organization's clients live in (a handful), each checked with
    // the same rule as a single read.
    const spaceIds: string[] = (await knex('oauth_clients').distinct('space_id').where({ org_id: orgId, level: 'space' })).map((r) => r.space_id);
    const visible: string[] = [];
    for (const spaceId of spaceIds) if (await canActInSpace(ctx, spaceId)) visible.push(spaceId);
    const q = knex('oauth_clients')
      .where({ org_id: orgId })
      .where((w) => {
        w.whereNot({ level: 'space' }).orWhereIn('space_id', visible);
      });
    const { rows, hasMore } = await cursorPage<OAuthClientRow>(ctx, q, {
      limit: limitFrom(query.limit, 20, 100),
      startingAfter: query.startingAfter,
      endingBefore: query.endingBefore,
    });
    ctx.body = { object: 'list', data: rows.map(clientDto), hasMore };
  },
});
