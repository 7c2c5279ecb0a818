import { CHAT_SESSION_SELECT, type ChatSessionRow, type ChatSessionView, chatSessionDto, chatSessionSchema } from '../../../shared/chat/model.ts';
import { problem } from '../../../shared/errors.ts';
import { newId } from '../../../shared/ids.ts';
import { resolveAgent } from '../../../shared/packages/resolve-agent.ts';
import { effectiveTimeoutSeconds } from '../../../shared/packages/timeout.ts';
import { startChatSessionWorkflow } from '../../../temporal/starters/chat-session.ts';
import { defineRoute } from '../../route.ts';
import { CHAT_AUTH_NOTE, callerSessions } from './_shared.ts';

const AGENT_ID = /^(@[a-z0-9][a-z0-9-]*)\/([a-z0-9][a-z0-9-]*)$/;

export default defineRoute<{ packageId: string; version?: string }>({
  method: 'post',
  path: '/api/chat/sessions',
  operationId: 'createChatSession',
  summary: 'Open a chat session with an agent',
  description:
    `A conversation with one published version of an agent the caller may run (\`agents:run\`), visible from the space: the latest ` +
    `version unless \`version\` names one; every turn of the session runs that version. Send messages with \`POST /api/chat/sessions/{id}/messages\`. ` +
    `${CHAT_AUTH_NOTE}`,
  tag: 'Chat',
  auth: 'session',
  context: 'space',
  scope: 'agents:run',
  rateLimit: { points: 20, duration: 60, by: 'identity' },
  body: {
    type: 'object',
    required: ['packageId'],
    additionalProperties: false,
    properties: {
      packageId: { type: 'string', pattern: AGENT_ID.source, description: 'The agent, `@scope/name`' },
      version: { type: 'string', minLength: 1, description: 'Exact version, dist-tag or semver range; the latest published version by default' },
    },
  },
  responses: { 201: { description: 'The session, idle', schema: chatSessionSchema } },
  async handler(ctx, { body }) {
    const { org, space } = ctx.state.tenancy!;
    const { knex, workflows, config } = ctx.services;
    const [, scope, name] = AGENT_ID.exec(body.packageId)!;
    const agent = await resolveAgent(knex, org!.id, space!.id, scope, name, body.version);
    if (!agent)
      throw problem(
        'not_found',
        body.version ? `No version ${body.version} of ${body.packageId}` : `No agent ${body.packageId} (or it has no published version)`,
      );
    const [row] = (await knex('chat_sessions')
      .insert({
        id: newId('chs'),
        org_id: org!.id,
        space_id: space!.id,
        user_id: ctx.state.auth!.userId,
        package_id: agent.packageId,
        package_version: agent.version,
        turn_timeout_seconds: effectiveTimeoutSeconds(agent.timeoutSeconds, config.platformRunLimits.timeout_ceiling_seconds),
      })
      .returning('*')) as ChatSessionRow[];
    try {
      await startChatSessionWorkflow(workflows, row, agent.fullName);
    } catch (err) {
      await knex('chat_sessions').where({ id: row.id }).delete();
      ctx.services.log.error({ err, sessionId: row.id }, 'chat session workflow not started');
      throw problem('service_unavailable', 'The chat session could not be opened: the workflow service is unavailable');
    }
    const view = (await callerSessions(ctx).where('s.id', row.id).select(CHAT_SESSION_SELECT).first()) as ChatSessionView;
    ctx.status = 201;
    ctx.body = chatSessionDto(view);
  },
});
