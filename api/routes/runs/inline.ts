import { problem } from '../../../shared/errors.ts';
import { admitInlineRun, checkInlineRun, type InlineRunBody } from '../../../shared/runs/inline.ts';
import { manifestSchema } from '../../../shared/packages/manifest-schema.ts';
import { startRunWorkflow } from '../../../shared/runs/launch.ts';
import { runDto, runSchema } from '../../../shared/runs/model.ts';
import { enforceOrgRateLimit } from '../../middleware/rate-limit.ts';
import { configuredRateLimit } from '../../rate-limits.ts';
import type { AppContext } from '../../context.ts';
import { defineRoute } from '../../route.ts';
import { launchConnections, launchConnectionsBody, launcherOf, launchInput, launchInputBody, shapeRunReplay } from '../../resources/launch.ts';

const RATE_SETTING = 'INLINE_RUN_LIMITS.rate_per_min';

/** SPEC 8.2: per identity, `INLINE_RUN_LIMITS.rate_per_min` (default 60) on each inline route. */
export const inlineRateLimit = configuredRateLimit({ points: 60, duration: 60, by: 'identity' }, (c) => c.inlineRunLimits.rate_per_min);

export const inlineRunBody = {
  type: 'object',
  additionalProperties: false,
  required: ['manifest', 'prompt'],
  properties: {
    manifest: { ...manifestSchema('agent'), description: "A full agent manifest (SPEC 2.12, schema_version 0.x); its `version` is the run's version" },
    prompt: {
      type: 'string',
      description: 'The agent prompt (prompt.md): a Mustache template, rendered for the run; 400 naming the line when it does not parse',
    },
    input: launchInputBody,
    connections: launchConnectionsBody,
  },
};

export const INLINE_LIMITS_DOC =
  'Needs `agents:write` besides `agents:run` (an inline run is an unpublished agent). Refused with 400 `inline_limit_exceeded` ' +
  '(`errors[].limit` naming the key) beyond a limit of `INLINE_RUN_LIMITS`: `manifest_bytes`, `prompt_bytes`, `max_skills`, ' +
  '`max_tools` (runtime_tools plus integrations_configuration tools), `max_authorized_uris` (per integrations_configuration ' +
  'entry), `wildcard_uri_allowed`; then the manifest and input are validated (400 `validation_failed`) and skills resolved ' +
  '(409 `dependency_unresolved`). Limited to `INLINE_RUN_LIMITS.rate_per_min` per identity (x-rate-limit) and per organization ' +
  '(429 `rate_limited`).';

/** An inline run is an unpublished agent: running one takes the right to write agents too. */
function requireAgentsWrite(ctx: AppContext): void {
  if (!ctx.state.tenancy!.scopes.has('agents:write')) {
    throw problem('forbidden', 'An inline run is an unpublished agent: it needs the agents:write permission besides agents:run');
  }
}

/** What both inline routes check before the request itself: the permission, then the organization's counter. */
export async function admitInlineRequest(ctx: AppContext, routeKey: string): Promise<void> {
  requireAgentsWrite(ctx);
  await enforceOrgRateLimit(ctx, routeKey, ctx.services.config.inlineRunLimits.rate_per_min, `${RATE_SETTING} per organization`);
}

export default defineRoute<InlineRunBody>({
  method: 'post',
  path: '/api/runs/inline',
  operationId: 'launchInlineRun',
  summary: 'Run an agent sent with the request (inline, ephemeral)',
  description:
    `Answers 201 with the run (status \`pending\`). The manifest and prompt live in a temporary package, emptied with the run's ` +
    `logs after \`INLINE_RUN_LIMITS.retention_days\` (the run record stays); events carry \`package: {ephemeral: true}\`. ${INLINE_LIMITS_DOC} ` +
    `Organization run limits apply as on any launch, and so does the connection check of \`dependencies.integrations\` (\`connections\`; ` +
    `409 \`connection_missing\`, after the checks above and before skills resolve).`,
  tag: 'Runs',
  auth: 'any',
  context: 'space',
  scope: 'agents:run',
  rateLimit: inlineRateLimit,
  idempotent: true,
  async shapeReplay(ctx, stored) {
    requireAgentsWrite(ctx); // SPEC 8.8.5: permissions hold on replays too
    return shapeRunReplay(ctx, stored);
  },
  body: inlineRunBody,
  responses: { 201: { description: 'The queued run', schema: runSchema } },
  async handler(ctx, { body }) {
    await admitInlineRequest(ctx, 'POST /api/runs/inline');
    const { knex, workflows, config } = ctx.services;
    const { org, space } = ctx.state.tenancy!;
    const checked = checkInlineRun(config.inlineRunLimits, body);
    const { input, files } = await launchInput(ctx, { inputSchema: checked.manifest.input?.schema ?? null, manifest: checked.manifest }, checked.input);
    const connections = await launchConnections(ctx, { fullName: checked.manifest.name, manifest: checked.manifest }, body.connections);
    const launch = { orgId: org!.id, spaceId: space!.id, ...launcherOf(ctx), connections, files };
    const { run, agent } = await admitInlineRun(knex, workflows, config, launch, { checked: { ...checked, input }, prompt: body.prompt });
    await startRunWorkflow(knex, workflows, run, agent);
    ctx.status = 201;
    ctx.body = runDto({ ...run, package_full_name: agent.fullName });
  },
});
