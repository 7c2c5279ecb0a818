import { testResult, testResultSchema } from '../../../shared/models/model.ts';
import { testCompletion } from '../../../shared/models/outbound.ts';
import { type ModelProvider, orgProxyUrl } from '../../../shared/models/resolve.ts';
import { callOut, modelFields, modelTarget } from '../../resources/models.ts';
import { orgProxy } from '../../resources/proxies.ts';
import { unseal } from '../../resources/secrets.ts';
import { defineRoute } from '../../route.ts';

interface Body {
  provider?: ModelProvider;
  baseUrl?: string;
  model: string;
  apiKey?: string | null;
  credentialId?: string | null;
  proxyId?: string | null;
}

const { provider, baseUrl, model, apiKey, credentialId, proxyId } = modelFields;

export const modelTestSchema = testResultSchema('model_test', { model: { type: 'string', description: 'The model that answered (as the provider names it)' } });

export default defineRoute<Body>({
  method: 'post',
  path: '/api/models/test',
  operationId: 'testUnsavedModel',
  summary: 'Test a model configuration before saving it: one real, minimal call to the provider',
  description:
    'Sends a one-token completion (`POST {baseUrl}/chat/completions`, or `/v1/messages` for Anthropic) through the egress policy ' +
    "and the proxy that would carry the model's calls. The answer is 200 either way: `ok: false` names what the provider answered " +
    '(or why nothing answered).',
  tag: 'Models',
  auth: 'any',
  context: 'org',
  scope: 'models:write',
  rateLimit: { points: 5, duration: 60, by: 'identity' },
  body: { type: 'object', additionalProperties: false, required: ['model'], properties: { provider, baseUrl, model, apiKey, credentialId, proxyId } },
  responses: { 200: { description: 'The test result', schema: modelTestSchema } },
  async handler(ctx, { body }) {
    const { knex, config } = ctx.services;
    const target = await modelTarget(ctx, body);
    if (body.proxyId) await orgProxy(ctx, body.proxyId, 'proxyId');
    const key = target.credential ? unseal(ctx, target.credential.api_key_enc) : target.apiKey;
    const proxyUrl = await orgProxyUrl(knex, config, ctx.state.tenancy!.org!.id, body.proxyId);
    const r = await callOut(ctx, target.baseUrl, { proxyUrl }, (d) => testCompletion(d, { ...target, apiKey: key }, body.model));
    ctx.body = testResult('model_test', r, { model: typeof r.json?.model === 'string' ? r.json.model : body.model });
  },
});
