import type { Discovery } from '../../discovery.ts';
import { defineRoute } from '../../route.ts';

export default (docs: () => Discovery) =>
  defineRoute({
    method: 'get',
    path: '/llms.txt',
    operationId: 'getLlmsTxt',
    summary: 'LLM-oriented index of the API',
    tag: 'Discovery',
    auth: 'none',
    responses: { 200: { description: 'Markdown index', contentType: 'text/plain', schema: { type: 'string' } } },
    handler(ctx) {
      ctx.type = 'text/plain; charset=utf-8';
      ctx.body = docs().llmsTxt;
    },
  });
