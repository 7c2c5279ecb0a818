import { problem } from '../../../shared/errors.ts';
import { draftEtag } from '../../../shared/packages/etag.ts';
import { representation } from '../../../shared/packages/representation.ts';
import { TYPE_SCOPES, type PackageRow, fullName } from '../../../shared/packages/types.ts';
import { anyPackageSchema } from '../../../shared/packages/model.ts';
import { defineRoute } from '../../route.ts';
import { type PackageParams, authorityOf, packageParams, readablePackage, requireHomeScope, viewOf } from '../../resources/packages.ts';

export default defineRoute<{ spaceId: string }, unknown, PackageParams>({
  method: 'put',
  path: '/api/packages/:scope/:name/home',
  operationId: 'movePackageHome',
  summary: 'Move the HOME space of a package',
  description:
    "Needs the type's write permission in the current home space AND in the target space. Moving a package to the organization's " +
    'default space shares it with every space; ' +
    'a package homed elsewhere is visible from its home space only.',
  tag: 'Packages',
  auth: 'any',
  context: 'space',
  params: packageParams,
  body: { type: 'object', additionalProperties: false, required: ['spaceId'], properties: { spaceId: { type: 'string', minLength: 1, maxLength: 100 } } },
  responses: { 200: { description: 'The package, as seen from the request space', schema: anyPackageSchema } },
  async handler(ctx, { params, body }) {
    const pkg = await readablePackage(ctx, params);
    await requireHomeScope(ctx, pkg);
    const authority = authorityOf(ctx);
    if (!(await authority.isMember(body.spaceId))) {
      throw problem('not_a_space_member', { detail: `You hold no role in space ${body.spaceId}`, param: 'spaceId' });
    }
    const need = TYPE_SCOPES[pkg.type].write;
    if (!(await authority.holds(body.spaceId, need))) {
      throw problem('forbidden', { detail: `Moving ${fullName(pkg)} there needs the ${need} permission in space ${body.spaceId}`, param: 'spaceId' });
    }
    const [moved] = (await ctx.services
      .knex('packages')
      .where({ id: pkg.id })
      .update({ home_space_id: body.spaceId, updated_at: ctx.services.knex.fn.now() })
      .returning('*')) as PackageRow[];
    ctx.set('ETag', draftEtag(moved));
    ctx.body = await representation(viewOf(ctx), moved);
  },
});
