// Model provider credentials (issue 17): a provider's base URL and API key, kept once per
// organization for several models (`credentialId` on a model) and for listing the provider's
// models. Here: the request fields and the id parameter (the wire shape is shared/models/model.ts).
import { modelFields } from '../../resources/models.ts';

export const credentialFields = {
  name: modelFields.name,
  provider: modelFields.provider,
  baseUrl: modelFields.baseUrl,
  apiKey: { type: 'string', minLength: 1, maxLength: 4000, description: 'Write-only; stored encrypted' },
};

export const idParams = { type: 'object', required: ['id'], properties: { id: { type: 'string' } } };
