import { problem } from '../../../shared/errors.ts';
import { modelDto, type ModelRow } from '../../../shared/models/resolve.ts';
import { defineRoute } from '../../route.ts';
import { assertModelUrl, modelFields, modelSchema, sealKey } from './_shared.ts';

export default defineRoute<Record<string, any>, unknown, { id: string }>({
  method: 'patch',
  path: '/api/models/:id',
  operationId: 'updateModel',
  summary: 'Change a model (merge semantics; `apiKey: null` removes the key)',
  tag: 'Models',
  auth: 'any',
  context: 'org',
  scope: 'models:write',
  params: { type: 'object', required: ['id'], properties: { id: { type: 'string' } } },
  body: { type: 'object', additionalProperties: false, properties: modelFields },
  responses: { 200: { description: 'Updated', schema: modelSchema } },
  async handler(ctx, { body, params }) {
    const orgId = ctx.state.tenancy!.org!.id;
    if (body.baseUrl) await assertModelUrl(ctx, body.baseUrl);
    const patch: Partial<ModelRow> = { updated_at: new Date() };
    if (body.name !== undefined) patch.name = body.name;
    if (body.provider !== undefined) patch.provider = body.provider;
    if (body.baseUrl !== undefined) patch.base_url = body.baseUrl.replace(/\/$/, '');
    if (body.model !== undefined) patch.model = body.model;
    if (body.apiKey !== undefined) patch.api_key_enc = body.apiKey === null ? null : sealKey(ctx, body.apiKey);
    if (body.inputCostPerMTok !== undefined) patch.input_cost_per_mtok = body.inputCostPerMTok;
    if (body.outputCostPerMTok !== undefined) patch.output_cost_per_mtok = body.outputCostPerMTok;
    if (body.isDefault !== undefined) patch.is_default = body.isDefault;
    const row = await ctx.services.knex.transaction(async (trx) => {
      const existing = await trx<ModelRow>('models').where({ id: params.id, org_id: orgId }).forUpdate().first();
      if (!existing) throw problem('not_found', 'No such model');
      if (body.isDefault) await trx('models').where({ org_id: orgId, is_default: true }).whereNot({ id: params.id }).update({ is_default: false });
      const [updated] = await trx<ModelRow>('models').where({ id: params.id, org_id: orgId }).update(patch).returning('*');
      return updated as ModelRow;
    });
    ctx.body = modelDto(row);
  },
});
