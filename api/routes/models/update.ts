import { problem } from '../../../shared/errors.ts';
import { assertKeyFollowsDestination } from '../../../shared/models/key-destination.ts';
import { modelDto, modelSchema } from '../../../shared/models/model.ts';
import type { ModelRow } from '../../../shared/models/resolve.ts';
import { assertModelUrl, modelFields, modelTarget } from '../../resources/models.ts';
import { orgProxy } from '../../resources/proxies.ts';
import { sealKey } from '../../resources/secrets.ts';
import { defineRoute } from '../../route.ts';

export default defineRoute<Record<string, any>, unknown, { id: string }>({
  method: 'patch',
  path: '/api/models/:id',
  operationId: 'updateModel',
  summary: 'Change a model (merge semantics; `apiKey: null` removes the key)',
  description:
    'A model that uses a credential takes `provider`, `baseUrl` and its key from it: change those on the credential, or send ' +
    '`credentialId: null` (the model keeps the provider and base URL, without a key). A new `provider` or `baseUrl` of a model ' +
    'holding its own key needs `apiKey` in the same request (else 400 `validation_failed` naming `apiKey`): the stored key is ' +
    "never sent anywhere else. `proxyId: null` returns the model to the organization's default proxy.",
  tag: 'Models',
  auth: 'any',
  context: 'org',
  scope: 'models:write',
  params: { type: 'object', required: ['id'], properties: { id: { type: 'string' } } },
  body: { type: 'object', additionalProperties: false, properties: modelFields },
  responses: { 200: { description: 'Updated', schema: modelSchema } },
  async handler(ctx, { body, params }) {
    const orgId = ctx.state.tenancy!.org!.id;
    const current = await ctx.services.knex<ModelRow>('models').where({ id: params.id, org_id: orgId }).first('credential_id', 'proxy_id');
    if (!current) throw problem('not_found', 'No such model');
    const patch: Partial<ModelRow> = { updated_at: new Date() };
    const credentialId = body.credentialId !== undefined ? body.credentialId : current.credential_id;
    if (credentialId) {
      // The credential decides where the key goes (modelTarget refuses provider, baseUrl, apiKey).
      const target = await modelTarget(ctx, { ...body, credentialId });
      if (body.credentialId) Object.assign(patch, { credential_id: body.credentialId, provider: target.provider, base_url: target.baseUrl, api_key_enc: null });
    } else {
      if (body.credentialId === null) patch.credential_id = null;
      if (body.baseUrl) await assertModelUrl(ctx, body.baseUrl, body.proxyId !== undefined ? body.proxyId : current.proxy_id);
      if (body.provider !== undefined) patch.provider = body.provider;
      if (body.baseUrl !== undefined) patch.base_url = body.baseUrl.replace(/\/$/, '');
      if (body.apiKey !== undefined) patch.api_key_enc = body.apiKey === null ? null : sealKey(ctx, body.apiKey);
    }
    if (body.proxyId) await orgProxy(ctx, body.proxyId, 'proxyId');
    if (body.proxyId !== undefined) patch.proxy_id = body.proxyId;
    if (body.name !== undefined) patch.name = body.name;
    if (body.model !== undefined) patch.model = body.model;
    if (body.inputCostPerMTok !== undefined) patch.input_cost_per_mtok = body.inputCostPerMTok;
    if (body.outputCostPerMTok !== undefined) patch.output_cost_per_mtok = body.outputCostPerMTok;
    if (body.isDefault !== undefined) patch.is_default = body.isDefault;
    const row = await ctx.services.knex.transaction(async (trx) => {
      const existing = await trx<ModelRow>('models').where({ id: params.id, org_id: orgId }).forUpdate().first();
      if (!existing) throw problem('not_found', 'No such model');
      // Under the row lock, so the key checked is the key the new destination would get (a model
      // on a credential holds none: the credential's key follows the credential's own rule).
      assertKeyFollowsDestination(body, existing);
      if (body.isDefault) await trx('models').where({ org_id: orgId, is_default: true }).whereNot({ id: params.id }).update({ is_default: false });
      const [updated] = await trx<ModelRow>('models').where({ id: params.id, org_id: orgId }).update(patch).returning('*');
      return updated as ModelRow;
    });
    ctx.body = modelDto(row);
  },
});
