import { agentOf } from '../../../shared/packages/resolve-agent.ts';
import { orderedManifest } from '../../../shared/packages/draft.ts';
import { effectiveTimeoutSeconds } from '../../../shared/packages/timeout.ts';
import { versionOrFail } from '../../../shared/packages/store.ts';
import { defineRoute } from '../../route.ts';
import { type PackageParams, packageParams, readablePackage } from '../../resources/packages.ts';
import { SINK_PROTOCOL } from '../../resources/remote-runs.ts';

const bundleSchema = {
  type: 'object',
  required: ['object', 'packageId', 'version', 'manifest', 'prompt', 'skills', 'input', 'output', 'runtimeTools', 'effectiveTimeoutSeconds'],
  properties: {
    object: { const: 'agent_bundle' },
    packageId: { type: 'string' },
    version: { type: 'string' },
    manifest: { type: 'object' },
    prompt: { type: 'string', description: 'prompt.md of the version' },
    skills: {
      type: 'array',
      description: 'Skill dependencies resolved in the organization (highest published version in range), with their SKILL.md',
      items: {
        type: 'object',
        required: ['id', 'version', 'name', 'content'],
        properties: {
          id: { type: 'string' },
          version: { type: 'string' },
          name: { type: 'string' },
          description: { type: 'string' },
          content: { type: 'string' },
        },
      },
    },
    input: { type: 'object', properties: { schema: { type: ['object', 'null'] } } },
    output: { type: 'object', properties: { schema: { type: ['object', 'null'] } } },
    runtimeTools: { type: 'array', items: { type: 'string' } },
    effectiveTimeoutSeconds: { type: 'integer' },
  },
};

export default defineRoute<unknown, { version?: string }, PackageParams>({
  method: 'get',
  path: '/api/agents/:scope/:name/bundle',
  operationId: 'getAgentBundle',
  summary: 'What a remote runner needs to execute a version of the agent',
  description:
    `Manifest, prompt, resolved skills, input and output schemas of a published version (\`version\`: exact, dist-tag or semver ` +
    `range; latest by default). Needs \`agents:run\` (the bundle is what a run would expose) and the agent readable from the ` +
    `space (404 otherwise).\n\n${SINK_PROTOCOL}`,
  tag: 'Remote runs',
  auth: 'any',
  context: 'space',
  // What a run would put before the model (skills included), for a runner that runs it: agents:run.
  scope: 'agents:run',
  rateLimit: { points: 30, duration: 60, by: 'identity' },
  params: packageParams,
  query: { type: 'object', properties: { version: { type: 'string', minLength: 1 } } },
  responses: { 200: { description: 'The bundle', schema: bundleSchema } },
  async handler(ctx, { params, query }) {
    const pkg = await readablePackage(ctx, params, 'agent');
    const chosen = await versionOrFail(ctx.services.knex, pkg, query.version ?? 'latest', 'query');
    const agent = await agentOf(ctx.services.knex, pkg, chosen.version, orderedManifest(chosen.manifest, chosen.files), chosen.files);
    ctx.body = {
      object: 'agent_bundle',
      packageId: agent.fullName,
      version: agent.version,
      manifest: agent.manifest,
      prompt: agent.prompt,
      skills: agent.skills,
      input: { schema: agent.inputSchema },
      output: { schema: agent.outputSchema },
      runtimeTools: agent.runtimeTools,
      effectiveTimeoutSeconds: effectiveTimeoutSeconds(agent.timeoutSeconds, ctx.services.config.platformRunLimits.timeout_ceiling_seconds),
    };
  },
});
