import { agentSchema } from '../../../shared/packages/model.ts';
import { OFFSET_MAX } from '../../pagination.ts';
import { defineRoute } from '../../route.ts';
import { listOf } from '../../schemas.ts';
import { listAgents } from '../../resources/agents.ts';

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
  query: { type: 'object', properties: { limit: { type: 'integer' }, offset: { type: 'integer', minimum: 0, maximum: OFFSET_MAX } } },
  responses: { 200: { description: 'List', schema: listOf(agentSchema) } },
  async handler(ctx, { query }) {
    ctx.body = await listAgents(ctx, query.limit, query.offset ?? 0);
  },
});
