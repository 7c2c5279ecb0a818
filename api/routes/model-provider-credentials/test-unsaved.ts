import type { ModelProvider } from '../../../shared/models/resolve.ts';
import { modelTarget } from '../../resources/models.ts';
import { defineRoute } from '../../route.ts';
import { credentialTestResult, credentialTestSchema, listProviderModels } from './_probe.ts';
import { credentialFields } from './_shared.ts';

interface Body {
  provider: ModelProvider;
  baseUrl: string;
  apiKey?: string;
}

const { provider, baseUrl, apiKey } = credentialFields;

export default defineRoute<Body>({
  method: 'post',
  path: '/api/model-provider-credentials/test',
  operationId: 'testUnsavedModelProviderCredential',
  summary: 'Test a provider base URL and key before saving them',
  description:
    "Lists the provider's models (`GET {baseUrl}/models`, or `/v1/models` for Anthropic) with the key, through the egress policy " +
    "and the organization's default proxy. 200 either way: `ok: false` names what the provider answered.",
  tag: 'Models',
  auth: 'any',
  context: 'org',
  scope: 'models:write',
  rateLimit: { points: 5, duration: 60, by: 'identity' },
  body: { type: 'object', additionalProperties: false, required: ['provider', 'baseUrl'], properties: { provider, baseUrl, apiKey } },
  responses: { 200: { description: 'The test result', schema: credentialTestSchema } },
  async handler(ctx, { body }) {
    const target = await modelTarget(ctx, body);
    ctx.body = credentialTestResult(await listProviderModels(ctx, target));
  },
});
