import { problem } from '../../../shared/errors.ts';
import { callProvider } from '../../../shared/models/outbound.ts';
import { orgProxyUrl } from '../../../shared/models/resolve.ts';
import { callOut } from '../../resources/models.ts';
import { defineRoute } from '../../route.ts';

const perMTok = { type: ['number', 'null'], description: 'USD per million tokens; null when OpenRouter gives no fixed price' };

const openRouterModel = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'name', 'description', 'contextLength', 'inputCostPerMTok', 'outputCostPerMTok'],
  properties: {
    id: { type: 'string', description: 'The name to use as `model` with base URL `https://openrouter.ai/api/v1`' },
    name: { type: 'string' },
    description: { type: 'string' },
    contextLength: { type: ['integer', 'null'] },
    inputCostPerMTok: perMTok,
    outputCostPerMTok: perMTok,
  },
};

/** OpenRouter prices are USD per token, as strings; negative means "varies" (e.g. its router). */
function price(raw: unknown): number | null {
  const n = Number(raw);
  return raw === undefined || raw === null || raw === '' || !Number.isFinite(n) || n < 0 ? null : Math.round(n * 1e6 * 1e6) / 1e6;
}

export default defineRoute({
  method: 'get',
  path: '/api/models/openrouter',
  operationId: 'listOpenRouterModels',
  summary: "OpenRouter's public model list, to pick a model from",
  description:
    "Reads `GET {OPENROUTER_API_URL}/models` (default `https://openrouter.ai/api/v1/models`, no key needed) through the organization's " +
    'default proxy, if any. Prices are converted to USD per million tokens, the unit of `inputCostPerMTok` on models. OpenRouter ' +
    'unreachable or answering an error: 502 `provider_unreachable`.',
  tag: 'Models',
  auth: 'any',
  context: 'org',
  scope: 'models:read',
  rateLimit: { points: 10, duration: 60, by: 'identity' },
  responses: {
    200: {
      description: 'The models OpenRouter offers',
      schema: {
        type: 'object',
        additionalProperties: false,
        required: ['object', 'data'],
        properties: { object: { const: 'list' }, data: { type: 'array', items: openRouterModel } },
      },
    },
    502: {
      description:
        "`provider_unreachable`: OpenRouter (`OPENROUTER_API_URL`) could not be reached, refused by the egress policy or the organization's " +
        'proxy, or answered without a model list',
      contentType: 'application/problem+json',
      schema: { $ref: '#/components/schemas/Problem' },
    },
  },
  async handler(ctx) {
    const { knex, config } = ctx.services;
    const url = `${config.openrouterApiUrl}/models`;
    const proxyUrl = await orgProxyUrl(knex, config, ctx.state.tenancy!.org!.id);
    // The URL is the operator's setting: its host may be internal, like the instance default model's.
    const r = await callOut(ctx, url, { proxyUrl, operatorHosts: [new URL(url).hostname] }, (d) => callProvider(d, url, { method: 'GET' }));
    if (r.error || !Array.isArray(r.json?.data)) {
      throw problem('provider_unreachable', `OpenRouter's model list (${url}) could not be read: ${r.error ?? 'the answer has no data list'}`);
    }
    const data = (r.json.data as any[])
      .filter((m) => m && typeof m.id === 'string')
      .map((m) => ({
        id: m.id as string,
        name: typeof m.name === 'string' ? m.name : m.id,
        description: typeof m.description === 'string' ? m.description : '',
        contextLength: Number.isInteger(m.context_length) ? m.context_length : null,
        inputCostPerMTok: price(m.pricing?.prompt),
        outputCostPerMTok: price(m.pricing?.completion),
      }));
    ctx.body = { object: 'list', data };
  },
});
