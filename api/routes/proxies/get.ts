import { proxyDto, proxySchema } from '../../../shared/models/model.ts';
import { orgProxy } from '../../resources/proxies.ts';
import { defineRoute } from '../../route.ts';
import { idParams } from './_shared.ts';

export default defineRoute<unknown, unknown, { id: string }>({
  method: 'get',
  path: '/api/proxies/:id',
  operationId: 'getProxy',
  summary: 'One outbound proxy (its URL without credentials)',
  tag: 'Proxies',
  auth: 'any',
  context: 'org',
  scope: 'proxies:read',
  params: idParams,
  responses: { 200: { description: 'The proxy', schema: proxySchema } },
  async handler(ctx, { params }) {
    ctx.body = proxyDto(await orgProxy(ctx, params.id));
  },
});
