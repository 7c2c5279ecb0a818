import { orgCredential } from '../../resources/models.ts';
import { unseal } from '../../resources/secrets.ts';
import { defineRoute } from '../../route.ts';
import { credentialTestResult, credentialTestSchema, listProviderModels } from './_probe.ts';
import { idParams } from './_shared.ts';

export default defineRoute<unknown, unknown, { id: string }>({
  method: 'post',
  path: '/api/model-provider-credentials/:id/test',
  operationId: 'testModelProviderCredential',
  summary: "Test a saved credential: list the provider's models with its key",
  description: 'As `POST /api/model-provider-credentials/test`, with the saved base URL and key. 200 either way.',
  tag: 'Models',
  auth: 'any',
  context: 'org',
  scope: 'models:write',
  rateLimit: { points: 5, duration: 60, by: 'identity' },
  params: idParams,
  responses: { 200: { description: 'The test result', schema: credentialTestSchema } },
  async handler(ctx, { params }) {
    const c = await orgCredential(ctx, params.id);
    ctx.body = credentialTestResult(await listProviderModels(ctx, { provider: c.provider, baseUrl: c.base_url, apiKey: unseal(ctx, c.api_key_enc) }));
  },
});
