import { agentSchema } from '../../../shared/packages/model.ts';
import { defineRoute } from '../../route.ts';
import { type PackageParams, nameParam, scopeParam, versionParam } from '../../resources/packages.ts';
import { restore, restoreDescription } from './_restore.ts';

export default defineRoute<unknown, unknown, PackageParams & { version: string }>({
  method: 'post',
  path: '/api/packages/agents/:scope/:name/versions/:version/restore',
  operationId: 'restoreAgentVersion',
  summary: 'Restore a published agent version into the draft',
  description: `${restoreDescription} Refused with 409 \`runs_in_progress\` while the agent has pending or running runs.`,
  tag: 'Packages',
  auth: 'any',
  context: 'space',
  params: { type: 'object', required: ['scope', 'name', 'version'], properties: { scope: scopeParam, name: nameParam, version: versionParam } },
  responses: { 200: { description: 'The agent draft (SPEC 2.10)', schema: agentSchema } },
  handler: (ctx, { params }) => restore(ctx, 'agent', params),
});
