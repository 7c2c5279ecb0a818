import type { Space } from '../../../shared/db/models.ts';
import { enterableSpaces } from '../../../shared/identity/tenancy.ts';
import { cursorPage, cursorQuery, limitFrom } from '../../pagination.ts';
import { defineRoute } from '../../route.ts';
import { listOf } from '../../schemas.ts';
import { boundSpaceId } from '../../middleware/authenticate.ts';
import { spaceDto, spaceSchema } from '../../../shared/identity/model.ts';

export default defineRoute<unknown, { limit?: number; startingAfter?: string; endingBefore?: string }>({
  method: 'get',
  path: '/api/spaces',
  operationId: 'listSpaces',
  summary: 'Spaces the caller can enter in the organization, newest first (cursor pagination)',
  description:
    'Organization owners and admins see every shared space; others the spaces where they hold a role. Everyone sees their own ' +
    'personal space. An API key sees its own space.',
  tag: 'Spaces',
  auth: 'any',
  context: 'org',
  query: { type: 'object', properties: cursorQuery },
  responses: { 200: { description: 'List', schema: listOf(spaceSchema) } },
  async handler(ctx, { query }) {
    const auth = ctx.state.auth!;
    const { org, orgRole } = ctx.state.tenancy!;
    const pinned = boundSpaceId(auth);
    const q = pinned
      ? ctx.services.knex('spaces').where('org_id', org!.id).where('id', pinned)
      : enterableSpaces(ctx.services.knex, org!.id, auth.userId, orgRole);
    const { rows, hasMore } = await cursorPage<Space>(ctx, q, {
      limit: limitFrom(query.limit, 20, 100),
      startingAfter: query.startingAfter,
      endingBefore: query.endingBefore,
    });
    ctx.body = { object: 'list', data: rows.map(spaceDto), hasMore };
  },
});
