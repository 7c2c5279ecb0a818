// GET /api/integrations/{scope}/{name} (DESIGN.md 7): one integration as the space sees it.
import { integrationRepresentation, integrationSchema } from '../../../shared/integrations/model.ts';
import { draftEtag } from '../../../shared/packages/etag.ts';
import { defineRoute } from '../../route.ts';
import { type PackageParams, packageParams, readablePackage, viewOf } from '../../resources/packages.ts';

export default defineRoute<unknown, unknown, PackageParams>({
  method: 'get',
  path: '/api/integrations/:scope/:name',
  operationId: 'getIntegration',
  summary: 'An integration: the package representation (SPEC 2.11) plus its auths',
  description:
    "Integrations homed in the request space or in the organization's default space are visible; others answer 404, as do integrations " +
    'without `integrations:read`. ' +
    "`auths` lists `{key, type, fields, connect, authorized_uris}` and never a secret. The `ETag` header is the draft's.",
  tag: 'Integrations',
  auth: 'any',
  context: 'space',
  params: packageParams,
  responses: { 200: { description: 'The integration', schema: integrationSchema } },
  async handler(ctx, { params }) {
    const pkg = await readablePackage(ctx, params, 'integration');
    ctx.set('ETag', draftEtag(pkg));
    ctx.body = await integrationRepresentation(viewOf(ctx), pkg);
  },
});
