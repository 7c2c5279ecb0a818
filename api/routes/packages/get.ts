import { draftEtag } from '../../../shared/packages/etag.ts';
import { representation } from '../../../shared/packages/representation.ts';
import { anyPackageSchema } from '../../../shared/packages/model.ts';
import { defineRoute } from '../../route.ts';
import { type PackageParams, packageParams, readablePackage, viewOf } from '../../resources/packages.ts';

export default defineRoute<unknown, unknown, PackageParams>({
  method: 'get',
  path: '/api/packages/:scope/:name',
  operationId: 'getPackage',
  summary: 'A package draft: the agent representation (SPEC 2.10) or the package representation (2.11)',
  description: "Needs the type's read permission in the request space; packages not visible from it answer 404. The `ETag` header is the draft's.",
  tag: 'Packages',
  auth: 'any',
  context: 'space',
  params: packageParams,
  responses: { 200: { description: 'The package', schema: anyPackageSchema } },
  async handler(ctx, { params }) {
    const pkg = await readablePackage(ctx, params);
    ctx.set('ETag', draftEtag(pkg));
    ctx.body = await representation(viewOf(ctx), pkg);
  },
});
