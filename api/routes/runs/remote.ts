import { runDto, runSchema } from '../../../shared/runs/model.ts';
import { newSinkSecret, SINK_TTL } from '../../../shared/runs/sink.ts';
import { configuredRateLimit } from '../../rate-limits.ts';
import type { AppContext } from '../../context.ts';
import { defineRoute } from '../../route.ts';
import {
  launchable,
  launchConnections,
  launchConnectionsBody,
  launchFromRequest,
  launchInputBody,
  launchVersionBody,
  launchVersionQuery,
} from '../../resources/launch.ts';
import { SINK_PROTOCOL } from '../../resources/remote-runs.ts';
import { findVisibleRun } from '../../resources/runs.ts';

interface RemoteBody {
  packageId: string;
  version?: string;
  input?: Record<string, unknown>;
  sinkTtlSeconds?: number;
  connections?: Record<string, string>;
}

const sinkSchema = {
  type: 'object',
  required: ['url', 'extendUrl', 'secret', 'expiresAt'],
  properties: {
    url: { type: 'string', format: 'uri', description: 'POST reports here' },
    extendUrl: { type: 'string', format: 'uri', description: 'PATCH here to push the expiry back' },
    secret: { type: 'string', pattern: '^sink_', description: 'Bearer secret of this sink; shown once' },
    expiresAt: { type: 'string', format: 'date-time' },
  },
};

function sinkOf(ctx: AppContext, runId: string, secret: string, expiresAt: Date) {
  const url = `${ctx.services.config.publicUrl}/api/runs/${runId}/sink`;
  return { url, extendUrl: `${url}/extend`, secret, expiresAt: expiresAt.toISOString() };
}

export default defineRoute<RemoteBody, { version?: string }>({
  method: 'post',
  path: '/api/runs/remote',
  operationId: 'launchRemoteRun',
  summary: 'Create a run executed outside the service, and its sink',
  description: SINK_PROTOCOL,
  tag: 'Runs',
  auth: 'any',
  context: 'space',
  scope: 'agents:run',
  // SPEC 8.2: `per_org_global_rate_per_min` per identity (the organization's own launch count is admitRun's).
  rateLimit: configuredRateLimit({ points: 200, duration: 60, by: 'identity' }, (c) => c.platformRunLimits.per_org_global_rate_per_min),
  idempotent: true,
  shownOnce: ['sink.secret'],
  // A replay carries the sink as first answered, and the run as the replaying caller may see it now.
  async shapeReplay(ctx, stored) {
    const first = JSON.parse(stored);
    return JSON.stringify({ ...runDto(await findVisibleRun(ctx, first.id)), sink: first.sink });
  },
  query: launchVersionQuery,
  body: {
    type: 'object',
    additionalProperties: false,
    required: ['packageId'],
    properties: {
      packageId: { type: 'string', pattern: '^@[a-z0-9][a-z0-9-]*/[a-z0-9][a-z0-9-]*$', description: 'The agent, `@scope/name`' },
      version: launchVersionBody,
      input: launchInputBody,
      sinkTtlSeconds: { type: 'integer', minimum: SINK_TTL.min, maximum: SINK_TTL.max, default: SINK_TTL.default },
      connections: launchConnectionsBody,
    },
  },
  responses: {
    201: {
      description: 'The pending run and its sink (the secret is shown once)',
      schema: { ...runSchema, required: [...runSchema.required, 'sink'], properties: { ...runSchema.properties, sink: sinkSchema } },
    },
  },
  async handler(ctx, { body, query }) {
    const [scope, name] = body.packageId.split('/');
    const { agent, input, files } = await launchable(ctx, scope, name, body.version ?? query.version, body.input);
    const { secret, hash } = newSinkSecret();
    const expiresAt = new Date(Date.now() + (body.sinkTtlSeconds ?? SINK_TTL.default) * 1000);
    // Like every launch (SPEC 3.1): no usable connection, no run (the runner calls through the credential proxy).
    const connections = await launchConnections(ctx, agent, body.connections);
    const run = await launchFromRequest(ctx, { agent, input, files, remote: { sinkSecretHash: hash, sinkExpiresAt: expiresAt }, connections });
    ctx.status = 201;
    ctx.body = { ...runDto({ ...run, package_full_name: agent.fullName }), sink: sinkOf(ctx, run.id, secret, expiresAt) };
  },
});
