// GET /api/integrations (SPEC 4.7, DESIGN.md 7): integrations visible from the space, offset pages.
import { integrationRepresentation, integrationSchema } from '../../../shared/integrations/model.ts';
import type { PackageRow } from '../../../shared/packages/types.ts';
import { visiblePackagesQuery } from '../../../shared/packages/visibility.ts';
import { limitFrom, offsetQuery, setOffsetLinks } from '../../pagination.ts';
import { defineRoute } from '../../route.ts';
import { listOf } from '../../schemas.ts';
import { viewOf } from '../../resources/packages.ts';

const list = listOf(integrationSchema);
const integrationListResponse = {
  ...list,
  properties: { ...(list.properties as object), total: { type: 'integer' }, limit: { type: 'integer' }, offset: { type: 'integer' } },
};

export default defineRoute<unknown, { limit?: number; offset: number }>({
  method: 'get',
  path: '/api/integrations',
  operationId: 'listIntegrations',
  summary: 'Integrations visible from the space (its own and those shared from the default space)',
  description:
    'Offset pagination (default 100, max 100) with Link headers, sorted by package id. Each item is the package representation (SPEC 2.11) plus `auths`.',
  tag: 'Integrations',
  auth: 'any',
  context: 'space',
  scope: 'integrations:read',
  query: { type: 'object', properties: offsetQuery },
  responses: { 200: { description: 'Page of integrations', schema: integrationListResponse } },
  async handler(ctx, { query }) {
    const view = viewOf(ctx);
    const limit = limitFrom(query.limit, 100, 100);
    const offset = query.offset ?? 0;
    const q = visiblePackagesQuery(view.knex, view.orgId, view.spaceId).where('packages.type', 'integration');
    const [{ total }] = await q.clone().count<{ total: string }[]>({ total: '*' });
    const rows = (await q
      .select('packages.*')
      .orderBy([{ column: 'packages.scope' }, { column: 'packages.name' }])
      .limit(limit)
      .offset(offset)) as PackageRow[];
    const data = [];
    for (const pkg of rows) data.push(await integrationRepresentation(view, pkg));
    setOffsetLinks(ctx, { limit, offset, total: Number(total) });
    ctx.body = { object: 'list', data, hasMore: offset + rows.length < Number(total), total: Number(total), limit, offset };
  },
});
