// Model provider credentials (issue 17): a provider's base URL and API key, kept once per
// organization for several models (`credentialId` on a model) and for listing the provider's
// models. The key is write-only: stored encrypted, never returned (`hasApiKey`).
import type { CredentialRow } from '../../../shared/models/resolve.ts';
import { modelFields } from '../../resources/models.ts';

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

export const credentialFields = {
  name: modelFields.name,
  provider: modelFields.provider,
  baseUrl: modelFields.baseUrl,
  apiKey: { type: 'string', minLength: 1, maxLength: 4000, description: 'Write-only; stored encrypted' },
};

export const idParams = { type: 'object', required: ['id'], properties: { id: { type: 'string' } } };

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
