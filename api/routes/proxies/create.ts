import { isUniqueViolation } from '../../../shared/db/errors.ts';
import { problem } from '../../../shared/errors.ts';
import { newId } from '../../../shared/ids.ts';
import { type ProxyRow, proxyDto, proxySchema } from '../../../shared/models/model.ts';
import { defineRoute } from '../../route.ts';
import { proxyFields, proxyUrlColumns } from './_shared.ts';

interface Body {
  name: string;
  url: string;
  isDefault?: boolean;
}

export default defineRoute<Body>({
  method: 'post',
  path: '/api/proxies',
  operationId: 'createProxy',
  summary: "Add an outbound proxy for the organization's model calls",
  description:
    '`url` is stored encrypted; responses show it without user and password. `isDefault: true` sends the calls of every model ' +
    "without a `proxyId` through it (the previous default stops being one). The instance default model (`MODEL_*`) is the operator's " +
    "and never uses an organization's proxy.",
  tag: 'Proxies',
  auth: 'any',
  context: 'org',
  scope: 'proxies:write',
  body: { type: 'object', additionalProperties: false, required: ['name', 'url'], properties: proxyFields },
  responses: { 201: { description: 'Created', schema: proxySchema } },
  async handler(ctx, { body }) {
    const orgId = ctx.state.tenancy!.org!.id;
    const url = await proxyUrlColumns(ctx, body.url);
    try {
      const row = await ctx.services.knex.transaction(async (trx) => {
        if (body.isDefault) await trx('proxies').where({ org_id: orgId, is_default: true }).update({ is_default: false });
        const [inserted] = await trx<ProxyRow>('proxies')
          .insert({ id: newId('prx'), org_id: orgId, name: body.name, ...url, is_default: body.isDefault ?? false })
          .returning('*');
        return inserted as ProxyRow;
      });
      ctx.status = 201;
      ctx.body = proxyDto(row);
    } catch (err) {
      if (isUniqueViolation(err)) throw problem('conflict', { detail: `A proxy named "${body.name}" exists`, param: 'name' });
      throw err;
    }
  },
});
