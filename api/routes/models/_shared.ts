import { EgressError, checkDestination } from '../../../shared/egress.ts';
import { problem } from '../../../shared/errors.ts';
import { encryptSecret, SecretsUnavailableError } from '../../../shared/secrets.ts';
import type { AppContext } from '../../route.ts';

export const modelSchema = {
  type: 'object',
  required: ['object', 'id', 'name', 'provider', 'baseUrl', 'model', 'hasApiKey', 'isDefault'],
  properties: {
    object: { const: 'model' },
    id: { type: 'string' },
    name: { type: 'string' },
    provider: { enum: ['openai-compatible', 'anthropic'] },
    baseUrl: { type: 'string' },
    model: { type: 'string' },
    hasApiKey: { type: 'boolean', description: 'The key itself is write-only' },
    isDefault: { type: 'boolean' },
    inputCostPerMTok: { type: ['number', 'null'] },
    outputCostPerMTok: { type: ['number', 'null'] },
    createdAt: { type: 'string', format: 'date-time' },
    updatedAt: { type: 'string', format: 'date-time' },
  },
};

export const modelFields = {
  name: { type: 'string', minLength: 1, maxLength: 100 },
  provider: { enum: ['openai-compatible', 'anthropic'] },
  baseUrl: { type: 'string', format: 'uri', maxLength: 2000 },
  model: { type: 'string', minLength: 1, maxLength: 200 },
  apiKey: { type: ['string', 'null'], maxLength: 4000 },
  isDefault: { type: 'boolean' },
  inputCostPerMTok: { type: ['number', 'null'], minimum: 0 },
  outputCostPerMTok: { type: ['number', 'null'], minimum: 0 },
};

/** The base URL passes the egress policy (SSRF) now; the sidecar checks again at every call. */
export async function assertModelUrl(ctx: AppContext, baseUrl: string): Promise<void> {
  try {
    await checkDestination(baseUrl, { allowInternalHosts: ctx.services.config.egressAllowInternalHosts });
  } catch (err) {
    if (err instanceof EgressError) {
      throw problem('validation_failed', { detail: `baseUrl: ${err.message}`, errors: [{ field: 'baseUrl', code: 'invalid_value', message: err.message }] });
    }
    throw err;
  }
}

export function sealKey(ctx: AppContext, apiKey: string): string {
  try {
    return encryptSecret(ctx.services.config.secretsKey, apiKey);
  } catch (err) {
    if (err instanceof SecretsUnavailableError) throw problem('service_unavailable', err.message);
    throw err;
  }
}
