import { isUniqueViolation } from '../../../shared/db/errors.ts';
import { problem } from '../../../shared/errors.ts';
import { assertKeyFollowsDestination } from '../../../shared/models/key-destination.ts';
import { credentialDto, credentialSchema } from '../../../shared/models/model.ts';
import type { CredentialRow } from '../../../shared/models/resolve.ts';
import { assertModelUrl } from '../../resources/models.ts';
import { sealKey } from '../../resources/secrets.ts';
import { defineRoute } from '../../route.ts';
import { credentialFields, idParams } from './_shared.ts';

export default defineRoute<Record<string, any>, unknown, { id: string }>({
  method: 'patch',
  path: '/api/model-provider-credentials/:id',
  operationId: 'updateModelProviderCredential',
  summary: 'Change a model provider credential (merge semantics)',
  description:
    'A new `provider` or `baseUrl` applies to every model using the credential, and needs `apiKey` in the same request (else ' +
    '400 `validation_failed` naming `apiKey`): the stored key is never sent anywhere else.',
  tag: 'Models',
  auth: 'any',
  context: 'org',
  scope: 'models:write',
  params: idParams,
  body: { type: 'object', additionalProperties: false, properties: credentialFields },
  responses: { 200: { description: 'Updated', schema: credentialSchema } },
  async handler(ctx, { body, params }) {
    const orgId = ctx.state.tenancy!.org!.id;
    if (body.baseUrl) await assertModelUrl(ctx, body.baseUrl);
    const patch: Partial<CredentialRow> = { updated_at: new Date() };
    if (body.name !== undefined) patch.name = body.name;
    if (body.provider !== undefined) patch.provider = body.provider;
    if (body.baseUrl !== undefined) patch.base_url = body.baseUrl.replace(/\/$/, '');
    if (body.apiKey !== undefined) patch.api_key_enc = sealKey(ctx, body.apiKey);
    try {
      const row = await ctx.services.knex.transaction(async (trx) => {
        const existing = await trx<CredentialRow>('model_provider_credentials').where({ id: params.id, org_id: orgId }).forUpdate().first();
        if (!existing) throw problem('not_found', 'No such model provider credential');
        assertKeyFollowsDestination(body, existing);
        const [updated] = await trx<CredentialRow>('model_provider_credentials').where({ id: params.id, org_id: orgId }).update(patch).returning('*');
        // Models copy the credential's provider and base URL (shown on them); keep them in step.
        if (patch.provider || patch.base_url) {
          await trx('models')
            .where({ org_id: orgId, credential_id: params.id })
            .update({ provider: updated.provider, base_url: updated.base_url, updated_at: new Date() });
        }
        return updated as CredentialRow;
      });
      ctx.body = credentialDto(row);
    } catch (err) {
      if (isUniqueViolation(err)) throw problem('conflict', { detail: `A credential named "${body.name}" exists`, param: 'name' });
      throw err;
    }
  },
});
