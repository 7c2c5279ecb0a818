import { agentRepresentation } from '../../../shared/packages/representation.ts';
import type { PackageRow } from '../../../shared/packages/types.ts';
import { visiblePackagesQuery } from '../../../shared/packages/visibility.ts';
import { type AppContext, defineRoute } from '../../route.ts';
import { listOf } from '../../schemas.ts';
import { viewOf } from '../packages/_access.ts';
import { agentSchema } from '../packages/_schemas.ts';

const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 100;

/** One page of the agents visible from the caller's space, sorted by package id; a `limit` outside 1..100 falls back to 20. */
export async function listAgents(ctx: AppContext, rawLimit: number | undefined, offset: number) {
  const view = viewOf(ctx);
  const limit = rawLimit !== undefined && rawLimit >= 1 && rawLimit <= MAX_LIMIT ? rawLimit : DEFAULT_LIMIT;
  const rows = (await visiblePackagesQuery(view.knex, view.orgId, view.spaceId)
    .where({ 'packages.type': 'agent', 'packages.ephemeral': false })
    .select('packages.*')
    .orderBy([{ column: 'packages.scope' }, { column: 'packages.name' }])
    .limit(limit + 1)
    .offset(offset)) as PackageRow[];
  const data = [];
  for (const pkg of rows.slice(0, limit)) data.push(await agentRepresentation(view, pkg));
  return { object: 'list' as const, data, hasMore: rows.length > limit, limit };
}

export default defineRoute<unknown, { limit?: number; offset?: number }>({
  method: 'get',
  path: '/api/agents',
  operationId: 'listAgents',
  summary: 'Agents visible from the space (its own and those shared from the default space)',
  description: 'Offset pagination, sorted by package id. A `limit` outside 1..100 falls back to 20.',
  tag: 'Agents',
  auth: 'any',
  context: 'space',
  scope: 'agents:read',
  query: { type: 'object', properties: { limit: { type: 'integer' }, offset: { type: 'integer', minimum: 0 } } },
  responses: { 200: { description: 'List', schema: listOf(agentSchema) } },
  async handler(ctx, { query }) {
    ctx.body = await listAgents(ctx, query.limit, query.offset ?? 0);
  },
});
