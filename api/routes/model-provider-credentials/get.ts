import { credentialDto, credentialSchema } from '../../../shared/models/model.ts';
import { orgCredential } from '../../resources/models.ts';
import { defineRoute } from '../../route.ts';
import { idParams } from './_shared.ts';

export default defineRoute<unknown, unknown, { id: string }>({
  method: 'get',
  path: '/api/model-provider-credentials/:id',
  operationId: 'getModelProviderCredential',
  summary: 'One model provider credential (without its key)',
  tag: 'Models',
  auth: 'any',
  context: 'org',
  scope: 'models:read',
  params: idParams,
  responses: { 200: { description: 'The credential', schema: credentialSchema } },
  async handler(ctx, { params }) {
    ctx.body = credentialDto(await orgCredential(ctx, params.id));
  },
});
