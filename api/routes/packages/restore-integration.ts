import { packageSchema } from '../../../shared/packages/model.ts';
import { defineRoute } from '../../route.ts';
import { type PackageParams, nameParam, scopeParam, versionParam } from '../../resources/packages.ts';
import { restore, restoreDescription } from './_restore.ts';

export default defineRoute<unknown, unknown, PackageParams & { version: string }>({
  method: 'post',
  path: '/api/packages/integrations/:scope/:name/versions/:version/restore',
  operationId: 'restoreIntegrationVersion',
  summary: 'Restore a published integration version into the draft',
  description: restoreDescription,
  tag: 'Packages',
  auth: 'any',
  context: 'space',
  params: { type: 'object', required: ['scope', 'name', 'version'], properties: { scope: scopeParam, name: nameParam, version: versionParam } },
  responses: { 200: { description: 'The integration package (SPEC 2.11)', schema: packageSchema } },
  handler: (ctx, { params }) => restore(ctx, 'integration', params),
});
