import { isUniqueViolation } from '../../../shared/db/errors.ts';
import { problem } from '../../../shared/errors.ts';
import { type ProxyRow, proxyDto, proxySchema } from '../../../shared/models/model.ts';
import { defineRoute } from '../../route.ts';
import { idParams, proxyFields, proxyUrlColumns } from './_shared.ts';

export default defineRoute<{ name?: string; url?: string; isDefault?: boolean }, unknown, { id: string }>({
  method: 'patch',
  path: '/api/proxies/:id',
  operationId: 'updateProxy',
  summary: 'Change an outbound proxy (merge semantics)',
  tag: 'Proxies',
  auth: 'any',
  context: 'org',
  scope: 'proxies:write',
  params: idParams,
  body: { type: 'object', additionalProperties: false, properties: proxyFields },
  responses: { 200: { description: 'Updated', schema: proxySchema } },
  async handler(ctx, { body, params }) {
    const orgId = ctx.state.tenancy!.org!.id;
    const patch: Partial<ProxyRow> = { updated_at: new Date() };
    if (body.url !== undefined) Object.assign(patch, await proxyUrlColumns(ctx, body.url));
    if (body.name !== undefined) patch.name = body.name;
    if (body.isDefault !== undefined) patch.is_default = body.isDefault;
    try {
      const row = await ctx.services.knex.transaction(async (trx) => {
        const existing = await trx('proxies').where({ id: params.id, org_id: orgId }).forUpdate().first('id');
        if (!existing) throw problem('not_found', 'No such proxy');
        if (body.isDefault) await trx('proxies').where({ org_id: orgId, is_default: true }).whereNot({ id: params.id }).update({ is_default: false });
        const [updated] = await trx<ProxyRow>('proxies').where({ id: params.id, org_id: orgId }).update(patch).returning('*');
        return updated as ProxyRow;
      });
      ctx.body = proxyDto(row);
    } catch (err) {
      if (isUniqueViolation(err)) throw problem('conflict', { detail: `A proxy named "${body.name}" exists`, param: 'name' });
      throw err;
    }
  },
});
