import { EgressError, checkDestination, checkProxiedDestination } from '../../../shared/egress.ts';
import { problem } from '../../../shared/errors.ts';
import { type CredentialRow, type ModelProvider, orgProxyUrl } from '../../../shared/models/resolve.ts';
import { encryptSecret, SecretsUnavailableError } from '../../../shared/secrets.ts';
import type { AppContext } from '../../context.ts';

export const modelSchema = {
  type: 'object',
  required: ['object', 'id', 'name', 'provider', 'baseUrl', 'model', 'hasApiKey', 'credentialId', 'proxyId', 'isDefault', 'inputCostPerMTok', 'outputCostPerMTok', 'createdAt', 'updatedAt'],
  additionalProperties: false,
  properties: {
    object: { const: 'model' },
    id: { type: 'string' },
    name: { type: 'string' },
    provider: { enum: ['openai-compatible', 'anthropic'] },
    baseUrl: { type: 'string' },
    model: { type: 'string' },
    hasApiKey: { type: 'boolean', description: 'The key itself is write-only; true also when the key comes from `credentialId`' },
    credentialId: { type: ['string', 'null'], description: 'The model provider credential whose provider, base URL and key the model uses' },
    proxyId: { type: ['string', 'null'], description: "The proxy the model's calls go through; null: the organization's default proxy, if any" },
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
  credentialId: { type: ['string', 'null'], maxLength: 100, description: 'Use this credential\'s provider, base URL and key (then send none of `provider`, `baseUrl`, `apiKey`)' },
  proxyId: { type: ['string', 'null'], maxLength: 100, description: "Send the model's calls through this proxy; null: the organization's default proxy" },
  isDefault: { type: 'boolean' },
  inputCostPerMTok: { type: ['number', 'null'], minimum: 0 },
  outputCostPerMTok: { type: ['number', 'null'], minimum: 0 },
};

/**
 * The base URL passes the egress policy (SSRF) now, as the calls would leave: through the proxy
 * that would carry them (`proxyId`, else the organization's default; a name is then the proxy's
 * to resolve), or directly. Every call checks again, the way it then goes.
 */
export async function assertModelUrl(ctx: AppContext, baseUrl: string, proxyId?: string | null): Promise<void> {
  const { knex, config } = ctx.services;
  const allow = { allowInternalHosts: config.egressAllowInternalHosts };
  try {
    if (await orgProxyUrl(knex, config, ctx.state.tenancy!.org!.id, proxyId)) checkProxiedDestination(baseUrl, allow);
    else await checkDestination(baseUrl, allow);
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

function invalid(field: string, code: string, message: string) {
  return problem('validation_failed', { detail: `${field}: ${message}`, errors: [{ field, code, message }] });
}

/**
 * A stored key goes only where it was sent with (DESIGN.md 5, issue 28): a request that changes
 * `provider` or `baseUrl` of a model or credential holding a key must send `apiKey` too, else
 * someone who may write it but never read the key could send it to a host of their own.
 * `stored` is the row as it is now (read for update).
 */
export function assertKeyFollowsDestination(
  body: { provider?: ModelProvider; baseUrl?: string; apiKey?: string | null },
  stored: { provider: ModelProvider; base_url: string; api_key_enc: string | null },
): void {
  if (stored.api_key_enc === null || body.apiKey !== undefined) return;
  const moved = (body.provider !== undefined && body.provider !== stored.provider) || (body.baseUrl !== undefined && body.baseUrl.replace(/\/$/, '') !== stored.base_url);
  if (moved) throw invalid('apiKey', 'required', 'is required with a new provider or baseUrl: the stored key is never sent anywhere else');
}

/** The organization's credential `id`; another organization's (or none) is 404. */
export async function orgCredential(ctx: AppContext, id: string): Promise<CredentialRow> {
  const row = await ctx.services.knex<CredentialRow>('model_provider_credentials').where({ id, org_id: ctx.state.tenancy!.org!.id }).first();
  if (!row) throw problem('not_found', { detail: 'No such model provider credential', param: 'credentialId' });
  return row;
}

/**
 * Where a model's calls go, from a body: its credential's provider, base URL and key, or its
 * own `provider`, `baseUrl`, `apiKey`. A key travels only to its credential's base URL, so a
 * model naming a credential cannot also name another base URL (or key).
 */
export async function modelTarget(
  ctx: AppContext,
  body: { credentialId?: string | null; provider?: ModelProvider; baseUrl?: string; apiKey?: string | null; proxyId?: string | null },
): Promise<{ provider: ModelProvider; baseUrl: string; apiKey?: string; credential?: CredentialRow }> {
  if (body.credentialId) {
    for (const f of ['provider', 'baseUrl', 'apiKey'] as const) {
      if (body[f] !== undefined) throw invalid(f, 'not_allowed', `comes from the credential; send either ${f} or credentialId`);
    }
    const credential = await orgCredential(ctx, body.credentialId);
    return { provider: credential.provider, baseUrl: credential.base_url, credential };
  }
  if (!body.provider) throw invalid('provider', 'required', 'is required (or credentialId)');
  if (!body.baseUrl) throw invalid('baseUrl', 'required', 'is required (or credentialId)');
  await assertModelUrl(ctx, body.baseUrl, body.proxyId);
  return { provider: body.provider, baseUrl: body.baseUrl.replace(/\/$/, ''), apiKey: body.apiKey ?? undefined };
}

/** The result of a test call (models, credentials, proxies), named by `object`. */
export function testResultSchema(object: string, extra: Record<string, unknown> = {}) {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['object', 'ok', 'latencyMs', 'status', 'error', ...Object.keys(extra)],
    properties: {
      object: { const: object },
      ok: { type: 'boolean' },
      latencyMs: { type: 'integer', description: 'Time until the answer (or the failure)' },
      status: { type: ['integer', 'null'], description: "The HTTP status answered; null when nothing answered" },
      error: { type: ['string', 'null'], description: "Why the test failed, naming the answer (secrets redacted); null when ok" },
      ...extra,
    },
  };
}
