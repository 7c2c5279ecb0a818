import { isUniqueViolation } from '../../../shared/db/errors.ts';
import { problem } from '../../../shared/errors.ts';
import { newId } from '../../../shared/ids.ts';
import { modelDto, type ModelProvider, type ModelRow } from '../../../shared/models/resolve.ts';
import { defineRoute } from '../../route.ts';
import { assertModelUrl, modelFields, modelSchema, sealKey } from './_shared.ts';

interface Body {
  name: string;
  provider: ModelProvider;
  baseUrl: string;
  model: string;
  apiKey?: string | null;
  isDefault?: boolean;
  inputCostPerMTok?: number | null;
  outputCostPerMTok?: number | null;
}

export default defineRoute<Body>({
  method: 'post',
  path: '/api/models',
  operationId: 'createModel',
  summary: 'Configure a model for the organization',
  description: '`apiKey` is stored encrypted and never returned. `isDefault: true` makes runs use it (the previous default stops being one).',
  tag: 'Models',
  auth: 'any',
  context: 'org',
  scope: 'models:write',
  body: { type: 'object', additionalProperties: false, required: ['name', 'provider', 'baseUrl', 'model'], properties: modelFields },
  responses: { 201: { description: 'Created', schema: modelSchema } },
  async handler(ctx, { body }) {
    const orgId = ctx.state.tenancy!.org!.id;
    await assertModelUrl(ctx, body.baseUrl);
    const sealed = body.apiKey ? sealKey(ctx, body.apiKey) : null;
    try {
      const row = await ctx.services.knex.transaction(async (trx) => {
        if (body.isDefault) await trx('models').where({ org_id: orgId, is_default: true }).update({ is_default: false });
        const [inserted] = await trx<ModelRow>('models')
          .insert({
            id: newId('mdl'),
            org_id: orgId,
            name: body.name,
            provider: body.provider,
            base_url: body.baseUrl.replace(/\/$/, ''),
            model: body.model,
            api_key_enc: sealed,
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
