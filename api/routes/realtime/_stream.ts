// What the three realtime routes share (SPEC 4.5, 6.4): query parameters, frame schemas for
// OpenAPI, and subscribing a connection to the run events hub.
import type { AppContext } from '../../context.ts';
import type { JsonSchema, RouteDef } from '../../route.ts';
import { chatSessionSchema } from '../../../shared/chat/model.ts';
import { connectionSchema } from '../../../shared/integrations/connections.ts';
import { runLogSchema } from '../../../shared/runs/logs.ts';
import { runSchema } from '../../../shared/runs/model.ts';
import { RUN_VISIBILITY_COLUMNS, type RealtimeSubscriber } from '../../run-events-hub.ts';
import { parseChannels, SseStream, SSE_KEEPALIVE_MS, SSE_MAX_QUEUED_FRAMES } from '../../sse.ts';
import { problem } from '../../../shared/errors.ts';
import { StaleAccess } from '../../access-cache.ts';
import { grantOf } from '../../request-grant.ts';
import { credentialIdentity } from '../../middleware/authenticate.ts';
import { canReadRun, type RunAudience } from '../../../shared/runs/visibility.ts';
import { audienceOf, runAudience } from '../../resources/runs.ts';
import { connectionOwner } from '../../resources/connections.ts';

export interface RealtimeQuery {
  token?: string;
  orgId?: string;
  spaceId?: string;
  channels?: string;
  verbose?: boolean;
}

export const realtimeQuery: JsonSchema = {
  type: 'object',
  properties: {
    token: { type: 'string', description: 'API key (`svc_...`), for clients that cannot send headers. API keys only: an OIDC access token here is 401.' },
    orgId: {
      type: 'string',
      description: 'Organization (a UUID), with a session cookie (stands in for X-Org-Id); ignored with an API key, whatever it holds (SPEC 5.2)',
    },
    spaceId: { type: 'string', description: 'Space, with a session cookie (stands in for X-Space-Id); an API key is pinned to its own space' },
    channels: {
      type: 'string',
      description:
        'Comma-separated event names to receive (run_update, run_log, run_metric, connection_update, chat_session_update, ping). ' +
        'Unknown names are ignored; none left means every event. `ping` is always sent.',
    },
    verbose: { type: 'boolean', default: false, description: '`true`: log entries carry their `data` payload' },
  },
};

const usageSchema = {
  type: 'object',
  required: ['inputTokens', 'outputTokens', 'costUsd'],
  properties: { inputTokens: { type: 'integer' }, outputTokens: { type: 'integer' }, costUsd: { type: 'number' } },
};

/** Frame data by event name, published as `x-sse-frames`. */
export const realtimeFrames: NonNullable<RouteDef['sseFrames']> = {
  run_update: { description: "A run's status or timing changed: the run as `GET /api/runs/{id}` returns it.", schema: runSchema },
  run_log: {
    description:
      "One log entry of a run, as GET /api/runs/{id}/logs shows it (its own `id` equals `seq`; the frame's `id:` line stays per " +
      'connection), without `data` unless `verbose=true`. Debug-level entries need `runs:delete`.',
    schema: runLogSchema("Only with verbose=true: a tool call's details (`tool` among them), or the output when the entry was written with it"),
  },
  run_metric: {
    description: "The run's running totals of tokens and cost, after each model call.",
    schema: { type: 'object', required: ['runId', 'usage'], properties: { runId: { type: 'string', pattern: '^run_' }, usage: usageSchema } },
  },
  connection_update: {
    description:
      "One of the caller's integration connections changed outside a request of its own (a token refresh failed and it needs reconnecting, " +
      "a hosted form or OAuth callback made or renewed it): the connection as `GET /api/connections` lists it. Sent to its owner's " +
      'space-wide and agent streams.',
    schema: { type: 'object', required: ['object', 'connection'], properties: { object: { const: 'connection_update' }, connection: connectionSchema } },
  },
  chat_session_update: {
    description:
      "One of the caller's chat sessions changed (a message stored, a reply written or failed): the session as `GET /api/chat/sessions` " +
      'lists it; read new messages with `GET /api/chat/sessions/{id}/messages?since=`. Chat module only; session credentials only ' +
      "(the person who opened the session), on the space-wide stream and on the stream of the session's agent.",
    schema: { type: 'object', required: ['object', 'session'], properties: { object: { const: 'chat_session_update' }, session: chatSessionSchema } },
  },
  error: {
    description:
      'The last frame before the server closes the stream: `credential_revoked` when the API key was revoked or expired or the ' +
      'session ended; `access_changed` when the caller left the organization or space, or no longer holds `runs:read`. Sent whatever ' +
      "`channels` says. Losing `runs:read-all` does not end a stream: it narrows it to the caller's own runs at once.",
    schema: { type: 'object', required: ['code'], properties: { code: { enum: ['credential_revoked', 'access_changed'] } } },
  },
  ping: {
    description: `Keep-alive: on connect (after the snapshot of a single-run stream) and after every ${SSE_KEEPALIVE_MS / 1000} s without another frame.`,
    schema: { type: 'object', required: ['time'], properties: { time: { type: 'string', format: 'date-time' } } },
  },
};

export const realtimeResponses: RouteDef['responses'] = {
  200: {
    description:
      `An event stream. Each frame: \`event: <name>\`, \`id: <subscriber>:<n>\` (unique per connection, for deduplication only), ` +
      `\`data: <JSON>\` (shapes in x-sse-frames). No replay: Last-Event-ID is ignored. A client with about ${SSE_MAX_QUEUED_FRAMES} ` +
      `frames queued is disconnected.`,
    contentType: 'text/event-stream',
    schema: { type: 'string' },
  },
};

export const REALTIME_DESCRIPTION =
  'Credentials: `Authorization: Bearer svc_...`, query `token=<API key>`, or the session cookie with query `orgId` and `spaceId` ' +
  '(or the X-Org-Id / X-Space-Id headers). ' +
  'A caller receives only the runs it may read: every run of the space with `runs:read-all`, otherwise the runs it launched ' +
  '(an impersonated end-user: its own). ' +
  'Errors before the stream starts are problem documents. ' +
  'One identity (API key, session user, end-user) holds at most `REALTIME_MAX_STREAMS_PER_IDENTITY` open streams (default 100) ' +
  'on one API process; one more is 429 `rate_limited`.';

/** What a refused stream is told to wait: a slot frees only when one of the caller's streams closes. */
const STREAM_RETRY_AFTER_SECONDS = 5;

/**
 * Takes one of the caller's stream slots (DESIGN.md 5), or refuses with 429 naming the limit.
 * Counted per API process, like the long-polls of SPEC 8.6.
 */
function holdStreamSlot(ctx: AppContext): () => void {
  const { runEvents, config } = ctx.services;
  const holder = credentialIdentity(ctx.state.auth!);
  const max = config.realtimeMaxStreamsPerIdentity;
  if (!runEvents.streamSlots.tryAcquire(holder, max)) {
    throw problem('rate_limited', {
      detail: `This identity already holds ${max} open realtime streams, the most REALTIME_MAX_STREAMS_PER_IDENTITY allows; close one before opening another`,
      retryAfter: STREAM_RETRY_AFTER_SECONDS,
      headers: { RateLimit: `limit=${max}, remaining=0, reset=${STREAM_RETRY_AFTER_SECONDS}`, 'RateLimit-Policy': String(max) },
    });
  }
  return () => runEvents.streamSlots.release(holder);
}

async function endUnlessReadable(ctx: AppContext, stream: SseStream, runId: string, audience: RunAudience): Promise<void> {
  const run = await ctx.services.knex('runs as r').where('r.id', runId).select(RUN_VISIBILITY_COLUMNS).first();
  if (!run || !canReadRun(audience, run)) stream.endWith('error', JSON.stringify({ code: 'access_changed' }));
}

/**
 * Subscribes the connection to the hub, holding frames until `open` (so a snapshot can go
 * first while nothing published meanwhile is lost). `discard` when the request fails before
 * the stream starts.
 */
export function subscribe(ctx: AppContext, query: RealtimeQuery, filter: { runId?: string; packageId?: string }) {
  const { space, scopes } = ctx.state.tenancy!;
  const { runEvents, log } = ctx.services;
  const requestId = ctx.state.requestId;
  let unsubscribe = () => {};
  let unwatch = () => {};
  // Released when the stream ends, whichever way: the client leaves, the server ends it, a slow
  // client is dropped, the request fails before streaming (discard, or the response's close).
  const releaseSlot = holdStreamSlot(ctx);
  const stream = new SseStream(ctx.res, {
    onClose: (reason) => {
      releaseSlot();
      unsubscribe();
      unwatch();
      if (reason === 'slow') log.info({ requestId, subscriber: stream.id }, 'realtime: slow client dropped');
      else log.debug({ requestId, subscriber: stream.id, reason }, 'realtime: stream closed');
    },
  });
  const sub: RealtimeSubscriber = {
    spaceId: space!.id,
    ...filter,
    audience: runAudience(ctx),
    channels: parseChannels(query.channels),
    verbose: query.verbose === true,
    debug: scopes.has('runs:delete'),
    owner: connectionOwner(ctx),
    chatUserId: ctx.services.config.modules.has('chat') && ctx.state.auth?.kind === 'session' ? ctx.state.auth.userId : undefined,
    stream,
  };
  let opened = false;
  let recheckOnOpen = false;
  const recheckRun = () =>
    endUnlessReadable(ctx, stream, filter.runId!, sub.audience).catch((err) => {
      log.error({ err, requestId, subscriber: stream.id }, 'realtime: re-checking a single-run stream failed; ending it');
      stream.endWith('error', JSON.stringify({ code: 'access_changed' }));
    });
  // An optimistic request (RouteDef.confirmsAccess) confirms its credential lookups with one epoch
  // read started after the watch registration below: the same read tells the watch that nothing
  // changed since authentication. Otherwise the watch reads the epoch itself.
  const { knex } = ctx.services;
  const access = ctx.state.access!;
  let confirmation: Promise<boolean> | undefined;
  const unchangedSinceAuth = (): Promise<boolean> => {
    if (!access.optimistic && !confirmation) return access.unchanged(knex);
    confirmation ??= access.settle(knex).then(
      () => true,
      (err: unknown) => {
        if (err instanceof StaleAccess) return false;
        throw err;
      },
    );
    return confirmation;
  };
  unsubscribe = runEvents.addStream(sub);
  // The stream follows its credential: revoked or out of the space, it ends with a last frame;
  // otherwise it is re-scoped (losing runs:read-all narrows it to the caller's own runs).
  const grant = grantOf(ctx);
  unwatch = runEvents.access.watch({
    grant,
    needs: 'runs:read',
    unchangedSinceAuth,
    onLoss: (code) => {
      log.info({ requestId, subscriber: stream.id, code }, 'realtime: stream ended, access lost');
      stream.endWith('error', JSON.stringify({ code }));
    },
    onScopes: (scopes) => {
      sub.audience = audienceOf(grant, scopes);
      sub.debug = scopes.has('runs:delete');
      // A single-run stream whose run is no longer the caller's to read ends like a lost grant.
      // Before it opens, the route is still reading the run itself (404 when it may not): the
      // check waits for the opening, so a change seen meanwhile cannot turn a 404 into a stream.
      if (filter.runId && sub.audience.only) {
        if (opened) recheckRun();
        else recheckOnOpen = true;
      }
    },
  });
  return {
    channels: sub.channels,
    /**
     * Starts the response: `first` frames (e.g. the snapshot), a ping, then what was held. Throws
     * StaleAccess (the router runs the request again) when an optimistic request's lookups were stale.
     */
    async open(first: Array<[event: string, data: string]> = []) {
      if (confirmation && !(await confirmation)) {
        stream.discard();
        throw new StaleAccess();
      }
      ctx.status = 200;
      ctx.respond = false;
      stream.open(first);
      opened = true;
      if (recheckOnOpen) recheckRun();
    },
    discard() {
      stream.discard();
    },
  };
}
