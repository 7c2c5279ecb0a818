import { isUniqueViolation } from '../../../shared/db/errors.ts';
import { problem } from '../../../shared/errors.ts';
import { newId } from '../../../shared/ids.ts';
import { credentialDto, credentialSchema } from '../../../shared/models/model.ts';
import type { CredentialRow, ModelProvider } from '../../../shared/models/resolve.ts';
import { assertModelUrl } from '../../resources/models.ts';
import { sealKey } from '../../resources/secrets.ts';
import { defineRoute } from '../../route.ts';
import { credentialFields } from './_shared.ts';

interface Body {
  name: string;
  provider: ModelProvider;
  baseUrl: string;
  apiKey: string;
}

export default defineRoute<Body>({
  method: 'post',
  path: '/api/model-provider-credentials',
  operationId: 'createModelProviderCredential',
  summary: "Store a model provider's base URL and API key for the organization",
  description: '`apiKey` is stored encrypted and never returned. Models use it with `credentialId`.',
  tag: 'Models',
  auth: 'any',
  context: 'org',
  scope: 'models:write',
  body: { type: 'object', additionalProperties: false, required: ['name', 'provider', 'baseUrl', 'apiKey'], properties: credentialFields },
  responses: { 201: { description: 'Created', schema: credentialSchema } },
  async handler(ctx, { body }) {
    await assertModelUrl(ctx, body.baseUrl);
    try {
      const [row] = await ctx.services
        .knex<CredentialRow>('model_provider_credentials')
        .insert({
          id: newId('mpc'),
          org_id: ctx.state.tenancy!.org!.id,
          name: body.name,
          provider: body.provider,
          base_url: body.baseUrl.replace(/\/$/, ''),
          api_key_enc: sealKey(ctx, body.apiKey),
        })
        .returning('*');
      ctx.status = 201;
      ctx.body = credentialDto(row as CredentialRow);
    } catch (err) {
      if (isUniqueViolation(err)) throw problem('conflict', { detail: `A credential named "${body.name}" exists`, param: 'name' });
      throw err;
    }
  },
});
