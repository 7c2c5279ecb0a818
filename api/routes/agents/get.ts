import { draftEtag } from '../../../shared/packages/etag.ts';
import { agentRepresentation } from '../../../shared/packages/representation.ts';
import { agentSchema } from '../../../shared/packages/model.ts';
import { defineRoute } from '../../route.ts';
import { type PackageParams, packageParams, readablePackage, viewOf } from '../../resources/packages.ts';

export default defineRoute<unknown, unknown, PackageParams>({
  method: 'get',
  path: '/api/agents/:scope/:name',
  operationId: 'getAgent',
  summary: "An agent (SPEC 2.10): its draft, latest version, runs and the caller's authority in its home space",
  description:
    "Agents homed in the request space or in the organization's default space are visible; others answer 404, as do agents without " +
    "`agents:read`. The `ETag` header is the draft's.",
  tag: 'Agents',
  auth: 'any',
  context: 'space',
  params: packageParams,
  responses: { 200: { description: 'The agent', schema: agentSchema } },
  async handler(ctx, { params }) {
    const pkg = await readablePackage(ctx, params, 'agent');
    ctx.set('ETag', draftEtag(pkg));
    ctx.body = await agentRepresentation(viewOf(ctx), pkg);
  },
});
