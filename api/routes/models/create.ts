import { isUniqueViolation } from '../../../shared/db/errors.ts';
import { problem } from '../../../shared/errors.ts';
import { newId } from '../../../shared/ids.ts';
import { modelDto, modelSchema } from '../../../shared/models/model.ts';
import type { ModelProvider, ModelRow } from '../../../shared/models/resolve.ts';
import { modelFields, modelTarget } from '../../resources/models.ts';
import { orgProxy } from '../../resources/proxies.ts';
import { sealKey } from '../../resources/secrets.ts';
import { defineRoute } from '../../route.ts';

interface Body {
  name: string;
  provider?: ModelProvider;
  baseUrl?: string;
  model: string;
  apiKey?: string | null;
  credentialId?: string | null;
  proxyId?: string | null;
  isDefault?: boolean;
  inputCostPerMTok?: number | null;
  outputCostPerMTok?: number | null;
}

export default defineRoute<Body>({
  method: 'post',
  path: '/api/models',
  operationId: 'createModel',
  summary: 'Configure a model for the organization',
  description:
    '`apiKey` is stored encrypted and never returned. Instead of `provider`, `baseUrl` and `apiKey`, `credentialId` names a model ' +
    "provider credential to take them from. `proxyId` sends the model's calls through that proxy (else the organization's default " +
    'proxy). `isDefault: true` makes runs use it (the previous default stops being one).',
  tag: 'Models',
  auth: 'any',
  context: 'org',
  scope: 'models:write',
  body: { type: 'object', additionalProperties: false, required: ['name', 'model'], properties: modelFields },
  responses: { 201: { description: 'Created', schema: modelSchema } },
  async handler(ctx, { body }) {
    const orgId = ctx.state.tenancy!.org!.id;
    const target = await modelTarget(ctx, body);
    if (body.proxyId) await orgProxy(ctx, body.proxyId, 'proxyId');
    const sealed = target.apiKey ? sealKey(ctx, target.apiKey) : null;
    try {
      const row = await ctx.services.knex.transaction(async (trx) => {
        if (body.isDefault) await trx('models').where({ org_id: orgId, is_default: true }).update({ is_default: false });
        const [inserted] = await trx<ModelRow>('models')
          .insert({
            id: newId('mdl'),
            org_id: orgId,
            name: body.name,
            provider: target.provider,
            base_url: target.baseUrl,
            model: body.model,
            api_key_enc: sealed,
            credential_id: target.credential?.id ?? null,
            proxy_id: body.proxyId ?? null,
            is_default: body.isDefault ?? false,
            input_cost_per_mtok: body.inputCostPerMTok ?? null,
            output_cost_per_mtok: body.outputCostPerMTok ?? null,
          })
          .returning('*');
        return inserted as ModelRow;
      });
      ctx.status = 201;
      ctx.body = modelDto(row);
    } catch (err) {
      if (isUniqueViolation(err)) throw problem('conflict', { detail: `A model named "${body.name}" exists`, param: 'name' });
      throw err;
    }
  },
});
