// Agents as route slices read them: the list the REST route and the MCP tool both serve.
import { agentRepresentation } from '../../shared/packages/representation.ts';
import type { PackageRow } from '../../shared/packages/types.ts';
import { visiblePackagesQuery } from '../../shared/packages/visibility.ts';
import type { AppContext } from '../context.ts';
import { viewOf } from './packages.ts';

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
