// How models, model provider credentials, outbound proxies and the results of their test calls
// are shown (issue 17): the response schemas and the DTOs that fill them, one shape wherever
// they are presented. A credential's key is write-only: stored encrypted, never shown.
// A proxy's URL may carry a user and password: the whole URL is stored encrypted and shown
// without them.
import type { CallResult } from './outbound.ts';
import type { CredentialRow, ModelRow } from './resolve.ts';

export const modelSchema = {
  type: 'object',
  required: [
    'object',
    'id',
    'name',
    'provider',
    'baseUrl',
    'model',
    'hasApiKey',
    'credentialId',
    'proxyId',
    'isDefault',
    'inputCostPerMTok',
    'outputCostPerMTok',
    'createdAt',
    'updatedAt',
  ],
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

export function modelDto(row: ModelRow) {
  return {
    object: 'model' as const,
    id: row.id,
    name: row.name,
    provider: row.provider,
    baseUrl: row.base_url,
    model: row.model,
    hasApiKey: row.api_key_enc !== null || row.credential_id !== null,
    credentialId: row.credential_id,
    proxyId: row.proxy_id,
    isDefault: row.is_default,
    inputCostPerMTok: row.input_cost_per_mtok,
    outputCostPerMTok: row.output_cost_per_mtok,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export const credentialSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['object', 'id', 'name', 'provider', 'baseUrl', 'hasApiKey', 'createdAt', 'updatedAt'],
  properties: {
    object: { const: 'model_provider_credential' },
    id: { type: 'string' },
    name: { type: 'string' },
    provider: { enum: ['openai-compatible', 'anthropic'] },
    baseUrl: { type: 'string' },
    hasApiKey: { const: true, description: 'The key itself is write-only' },
    createdAt: { type: 'string', format: 'date-time' },
    updatedAt: { type: 'string', format: 'date-time' },
  },
};

export function credentialDto(row: CredentialRow) {
  return {
    object: 'model_provider_credential' as const,
    id: row.id,
    name: row.name,
    provider: row.provider,
    baseUrl: row.base_url,
    hasApiKey: true as const,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export interface ProxyRow {
  id: string;
  org_id: string;
  name: string;
  url_enc: string;
  display_url: string;
  has_credentials: boolean;
  is_default: boolean;
  created_at: Date;
  updated_at: Date;
}

export const proxySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['object', 'id', 'name', 'url', 'hasCredentials', 'isDefault', 'createdAt', 'updatedAt'],
  properties: {
    object: { const: 'proxy' },
    id: { type: 'string' },
    name: { type: 'string' },
    url: { type: 'string', description: 'The proxy URL without its user and password' },
    hasCredentials: { type: 'boolean', description: 'The URL carries a user or password (write-only)' },
    isDefault: { type: 'boolean', description: "The organization's models without a `proxyId` use it" },
    createdAt: { type: 'string', format: 'date-time' },
    updatedAt: { type: 'string', format: 'date-time' },
  },
};

export function proxyDto(row: ProxyRow) {
  return {
    object: 'proxy' as const,
    id: row.id,
    name: row.name,
    url: row.display_url,
    hasCredentials: row.has_credentials,
    isDefault: row.is_default,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
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
      status: { type: ['integer', 'null'], description: 'The HTTP status answered; null when nothing answered' },
      error: { type: ['string', 'null'], description: 'Why the test failed, naming the answer (secrets redacted); null when ok' },
      ...extra,
    },
  };
}

/** A test result body (see `testResultSchema`). */
export function testResult(object: string, r: CallResult, extra: Record<string, unknown> = {}) {
  return { object, ok: !r.error, latencyMs: r.latencyMs, status: r.status, error: r.error ?? null, ...extra };
}
