import { problem } from '../../../shared/errors.ts';
import { findVisiblePackage } from '../../../shared/packages/resolve-agent.ts';
import { limitFrom, offsetQuery } from '../../pagination.ts';
import { defineRoute } from '../../route.ts';
import { agentPathParams } from '../../resources/launch.ts';
import { respondWithRunPage, runListResponse, visibleRuns } from '../../resources/runs.ts';

export default defineRoute<unknown, { limit?: number; offset: number }, { scope: string; name: string }>({
  method: 'get',
  path: '/api/agents/:scope/:name/runs',
  operationId: 'listAgentRuns',
  summary: 'Runs of one agent, newest first',
  description: 'Offset pagination (default 50, max 100) with Link headers.',
  tag: 'Runs',
  auth: 'any',
  context: 'space',
  scope: 'runs:read',
  params: agentPathParams,
  query: { type: 'object', properties: offsetQuery },
  responses: { 200: { description: 'Page of runs', schema: runListResponse } },
  async handler(ctx, { params, query }) {
    const { org, space } = ctx.state.tenancy!;
    const pkg = await findVisiblePackage(ctx.services.knex, org!.id, space!.id, params.scope, params.name, 'agent');
    if (!pkg) throw problem('not_found', 'No such agent');
    const limit = limitFrom(query.limit, 50, 100);
    const q = visibleRuns(ctx).where('r.package_id', pkg.id);
    await respondWithRunPage(ctx, q, limit, query.offset);
  },
});
