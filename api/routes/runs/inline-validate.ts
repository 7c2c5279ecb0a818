import { requireConnections } from '../../../shared/integrations/readiness.ts';
import { resolveSkills } from '../../../shared/packages/resolve-agent.ts';
import { effectiveTimeoutSeconds } from '../../../shared/packages/timeout.ts';
import { checkInlineRun, type InlineRunBody, toolsOf } from '../../../shared/runs/inline.ts';
import { defineRoute } from '../../route.ts';
import { connectionOwner } from '../../resources/connections.ts';
import { admitInlineRequest, INLINE_LIMITS_DOC, inlineRateLimit, inlineRunBody } from './inline.ts';

const validationSchema = {
  type: 'object',
  required: ['object', 'valid', 'packageId', 'version', 'effectiveTimeoutSeconds', 'skills', 'tools'],
  properties: {
    object: { const: 'inline_run_validation' },
    valid: { const: true },
    packageId: { type: 'string', description: 'manifest.name' },
    version: { type: 'string', description: 'manifest.version, the version a run would carry' },
    effectiveTimeoutSeconds: { type: 'integer', description: 'min(manifest timeout or 300, timeout_ceiling_seconds)' },
    skills: {
      type: 'array',
      description: 'Skill dependencies resolved in the organization (highest published version in range)',
      items: { type: 'object', properties: { id: { type: 'string' }, version: { type: 'string' } } },
    },
    tools: { type: 'array', items: { type: 'string' }, description: 'Runtime tools, then integration tools as `<integration>:<tool>`' },
  },
};

export default defineRoute<InlineRunBody>({
  method: 'post',
  path: '/api/runs/inline/validate',
  operationId: 'validateInlineRun',
  summary: 'Check an inline run without running it',
  description:
    `The checks of POST /api/runs/inline, in the same order and with the same problems; nothing is created (a 409 \`connection_missing\` ` +
    `here carries no \`connect_url\` and publishes no event: use the integration's \`connect/session\`). ${INLINE_LIMITS_DOC}`,
  tag: 'Runs',
  auth: 'any',
  context: 'space',
  scope: 'agents:run',
  rateLimit: inlineRateLimit,
  body: inlineRunBody,
  responses: { 200: { description: 'The request would be accepted', schema: validationSchema } },
  async handler(ctx, { body }) {
    await admitInlineRequest(ctx, 'POST /api/runs/inline/validate');
    const { knex, config } = ctx.services;
    const { manifest } = checkInlineRun(config.inlineRunLimits, body);
    const { org, space } = ctx.state.tenancy!;
    await requireConnections(knex, null, {
      orgId: org!.id,
      spaceId: space!.id,
      owner: connectionOwner(ctx),
      agent: { fullName: manifest.name, manifest },
      chosen: body.connections,
      publicUrl: null,
    });
    const skills = await resolveSkills(knex, ctx.state.tenancy!.org!.id, manifest.dependencies?.skills);
    ctx.body = {
      object: 'inline_run_validation',
      valid: true,
      packageId: manifest.name,
      version: manifest.version,
      effectiveTimeoutSeconds: effectiveTimeoutSeconds(manifest.timeout, config.platformRunLimits.timeout_ceiling_seconds),
      skills: skills.map((s) => ({ id: s.id, version: s.version })),
      tools: toolsOf(manifest),
    };
  },
});
