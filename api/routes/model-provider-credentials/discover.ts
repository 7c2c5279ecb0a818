import { problem } from '../../../shared/errors.ts';
import type { ModelProvider } from '../../../shared/models/resolve.ts';
import { modelFields, modelTarget } from '../../resources/models.ts';
import { unseal } from '../../resources/secrets.ts';
import { defineRoute } from '../../route.ts';
import { listProviderModels } from './_probe.ts';
import { credentialFields } from './_shared.ts';

interface Body {
  credentialId?: string;
  provider?: ModelProvider;
  baseUrl?: string;
  apiKey?: string;
}

const discovered = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'name'],
  properties: { id: { type: 'string', description: 'The name to use as `model`' }, name: { type: 'string' } },
};

export default defineRoute<Body>({
  method: 'post',
  path: '/api/model-provider-credentials/discover',
  operationId: 'discoverProviderModels',
  summary: "List a provider's models through its models endpoint",
  description:
    "With `credentialId`, a saved credential's base URL and key; else `provider`, `baseUrl` and `apiKey` as given. Calls `GET " +
    "{baseUrl}/models` (`/v1/models` for Anthropic) through the egress policy and the organization's default proxy. A failed " +
    'call: 502 `provider_unreachable` naming what the provider answered.',
  tag: 'Models',
  auth: 'any',
  context: 'org',
  scope: 'models:write',
  rateLimit: { points: 6, duration: 60, by: 'identity' },
  body: {
    type: 'object',
    additionalProperties: false,
    properties: {
      credentialId: { type: 'string', maxLength: 100 },
      provider: modelFields.provider,
      baseUrl: modelFields.baseUrl,
      apiKey: credentialFields.apiKey,
    },
  },
  responses: {
    200: {
      description: "The provider's models",
      schema: {
        type: 'object',
        additionalProperties: false,
        required: ['object', 'data'],
        properties: { object: { const: 'list' }, data: { type: 'array', items: discovered } },
      },
    },
  },
  async handler(ctx, { body }) {
    const target = await modelTarget(ctx, body);
    const apiKey = target.credential ? unseal(ctx, target.credential.api_key_enc) : target.apiKey;
    const r = await listProviderModels(ctx, { ...target, apiKey });
    if (r.error) throw problem('provider_unreachable', `The provider's models could not be listed: ${r.error}`);
    const data = (r.json.data as any[])
      .filter((m) => m && typeof m.id === 'string')
      .map((m) => ({ id: m.id as string, name: typeof m.display_name === 'string' ? m.display_name : typeof m.name === 'string' ? m.name : m.id }));
    ctx.body = { object: 'list', data };
  },
});
