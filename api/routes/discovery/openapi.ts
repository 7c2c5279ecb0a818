import type { Discovery } from '../../discovery.ts';
import { defineRoute } from '../../route.ts';

export default (docs: () => Discovery) =>
  defineRoute({
    method: 'get',
    path: '/api/openapi.json',
    operationId: 'getOpenApi',
    summary: 'This OpenAPI 3.1 document',
    description: 'Strong ETag; `If-None-Match` with it answers 304.',
    tag: 'Discovery',
    auth: 'none',
    responses: { 200: { description: 'OpenAPI document', schema: { type: 'object' } }, 304: { description: 'Not modified' } },
    handler(ctx) {
      ctx.set('ETag', docs().openapiEtag);
      ctx.set('Cache-Control', 'no-cache');
      const inm = ctx.get('If-None-Match');
      if (inm?.split(',').some((t) => t.trim() === docs().openapiEtag || t.trim() === '*')) {
        ctx.status = 304;
        return;
      }
      ctx.type = 'application/json';
      ctx.body = docs().openapiJson;
    },
  });
