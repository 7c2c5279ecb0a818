import { cursorPage, cursorQuery, limitFrom } from '../../pagination.ts';
import { defineRoute } from '../../route.ts';
import { listOf } from '../../schemas.ts';
import { callerOrgRole, orgIdParam } from './_access.ts';

const entrySchema = {
  type: 'object',
  required: ['object', 'id', 'requestId', 'keyId', 'endUserId', 'method', 'path', 'createdAt'],
  properties: {
    object: { const: 'impersonation' },
    id: { type: 'string' },
    spaceId: { type: 'string' },
    requestId: { type: 'string' },
    keyId: { type: 'string' },
    endUserId: { type: 'string' },
    method: { type: 'string' },
    path: { type: 'string' },
    ip: { type: ['string', 'null'] },
    userAgent: { type: ['string', 'null'] },
    createdAt: { type: 'string', format: 'date-time' },
  },
};

export default defineRoute<unknown, { limit?: number; startingAfter?: string; endingBefore?: string }, { orgId: string }>({
  method: 'get',
  path: '/api/orgs/:orgId/impersonation-audit',
  operationId: 'listImpersonationAudit',
  summary: 'Requests made on behalf of end-users (Service-User), newest first',
  description: 'Organization owners and admins only (SPEC 5.6).',
  tag: 'Organizations',
  auth: 'session',
  params: orgIdParam,
  query: {
    type: 'object',
    properties: {
      ...cursorQuery,
      startingAfter: { ...cursorQuery.startingAfter, pattern: '^[0-9]+$' },
      endingBefore: { ...cursorQuery.endingBefore, pattern: '^[0-9]+$' },
    },
  },
  responses: { 200: { description: 'Page of audit entries', schema: listOf(entrySchema) } },
  async handler(ctx, { params, query }) {
    await callerOrgRole(ctx, params.orgId, { admin: true });
    const { rows, hasMore } = await cursorPage<{ id: string; created_at: Date; [k: string]: any }>(
      ctx,
      ctx.services.knex('impersonation_audit').where({ org_id: params.orgId }),
      {
        limit: limitFrom(query.limit, 20, 100),
        startingAfter: query.startingAfter,
        endingBefore: query.endingBefore,
      },
    );
    ctx.body = {
      object: 'list',
      hasMore,
      data: rows.map((r) => ({
        object: 'impersonation',
        id: String(r.id),
        spaceId: r.space_id,
        requestId: r.request_id,
        keyId: r.key_id,
        endUserId: r.end_user_id,
        method: r.method,
        path: r.path,
        ip: r.ip,
        userAgent: r.user_agent,
        createdAt: r.created_at.toISOString(),
      })),
    };
  },
});
