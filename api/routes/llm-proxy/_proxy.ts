// The LLM proxy (DESIGN.md section 7, SPEC 4.7 and 8.5): a caller outside the service (a remote
// runner, a script) calls the organization's model without holding its key. The body is
// forwarded as sent, but for `model` (the configured model's own name); the key is injected
// here and the caller's credentials never leave. Streamed answers are passed through chunk by
// chunk; usage is read from the answer (or the stream's usage frames) and recorded. Answers are
// read at most MODEL_MAX_ANSWER_BYTES, streamed ones too; the provider's error answers reach the
// caller with the model's key and proxy credentials redacted.
import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import getRawBody from 'raw-body';
import { type Dispatcher, request } from 'undici';
import { EgressError } from '../../../shared/egress.ts';
import { ProblemError, problem } from '../../../shared/errors.ts';
import { readCapped } from '../../../shared/http/read-capped.ts';
import { redact } from '../../../shared/integrations/deliver.ts';
import { modelDispatcher, modelSecrets } from '../../../shared/models/outbound.ts';
import { type ModelConfig, type ModelProvider, NO_MODEL_CONFIGURED, resolveNamedModel } from '../../../shared/models/resolve.ts';
import { addUsage, pricedUsage, type ReportedUsage, usageOf } from '../../../shared/models/usage.ts';
import { notifyRunEvent } from '../../../shared/runs/events.ts';
import { isTerminal, type RunRow } from '../../../shared/runs/model.ts';
import { grantOf } from '../../request-grant.ts';
import { configuredRateLimit } from '../../rate-limits.ts';
import type { AppContext } from '../../context.ts';
import type { RateLimitRule } from '../../rate-limiters.ts';
import type {} from '../../route.ts';
import { canReadRun } from '../../../shared/runs/visibility.ts';
import { audienceOf } from '../../resources/runs.ts';
import { assertStorableJson } from '../../middleware/storable-text.ts';

const TIMEOUT_MS = 120_000;

/** SPEC 8.5: `LLM_PROXY_LIMITS.rate_per_min` per identity; one rule per route (separate counters). */
export function llmProxyRateLimit(): RateLimitRule {
  return configuredRateLimit({ points: 60, duration: 60, by: 'identity' }, (c) => c.llmProxyLimits.rate_per_min);
}

export const proxyHeaders = {
  runId: 'X-Run-Id',
};

export const proxyResponses = {
  200: { description: "The provider's answer as it sent it: JSON, or with `stream: true` its Server-Sent Events passed through as they arrive" },
};

/** The body, capped by `LLM_PROXY_LIMITS.max_request_bytes` (and `API_BODY_LIMIT_BYTES`). */
async function readBody(ctx: AppContext): Promise<Record<string, unknown>> {
  const { config } = ctx.services;
  const limit = Math.min(config.llmProxyLimits.max_request_bytes, config.apiBodyLimitBytes);
  const tooLarge = () => problem('payload_too_large', `The body exceeds LLM_PROXY_LIMITS.max_request_bytes (${limit} bytes)`);
  if (Number(ctx.get('Content-Length') || 0) > limit) throw tooLarge();
  if (!ctx.is('application/json', '+json')) {
    throw problem('unsupported_media_type', `Send the body as application/json, not ${ctx.get('Content-Type') || 'no content type'}`);
  }
  let raw: Buffer;
  try {
    raw = await getRawBody(ctx.req, { limit });
  } catch (err) {
    if ((err as { type?: string }).type === 'entity.too.large') throw tooLarge();
    throw err;
  }
  const text = raw.toString('utf8');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw problem('invalid_json', `The body is not valid JSON: ${(err as Error).message}`);
  }
  assertStorableJson(body, text);
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    throw problem('validation_failed', { detail: 'The body must be a JSON object', errors: [{ field: '', code: 'invalid_type', message: 'must be object' }] });
  }
  return body as Record<string, unknown>;
}

/** `X-Run-Id`: a remote run the caller itself launched (not merely one it may read), still live. */
async function usageRun(ctx: AppContext): Promise<RunRow | undefined> {
  const id = ctx.get(proxyHeaders.runId);
  if (!id) return undefined;
  const run = await ctx.services.knex<RunRow>('runs').where({ id }).first();
  // Ownership, not visibility: `runs:read-all` does not let a caller charge another's run.
  if (run?.executor !== 'remote' || !canReadRun(audienceOf(grantOf(ctx), new Set()), run)) {
    throw problem('not_found', { detail: `No remote run ${id} of yours`, param: proxyHeaders.runId });
  }
  if (isTerminal(run.status)) throw problem('run_finished', { detail: `Run ${id} already ended (${run.status})`, param: proxyHeaders.runId });
  return run;
}

/** Logs the call's usage and adds it to the caller's run, counted and priced as a run's own calls are. */
async function recordUsage(ctx: AppContext, model: ModelConfig, run: RunRow | undefined, reported: Partial<ReportedUsage>): Promise<void> {
  const { knex, log } = ctx.services;
  const usage = pricedUsage(model, reported);
  const { org, space } = ctx.state.tenancy!;
  log.info({ requestId: ctx.state.requestId, orgId: org!.id, spaceId: space!.id, modelId: model.id, runId: run?.id, ...usage }, 'llm proxy usage');
  if (!run) return;
  await addUsage(knex, 'runs', run.id, usage);
  await notifyRunEvent(knex, { kind: 'usage', runId: run.id, orgId: run.org_id, spaceId: run.space_id });
}

/** Reads the `data:` lines of passing SSE bytes for usage. */
class UsageTap {
  private rest = '';
  private readonly decoder = new TextDecoder();
  private readonly provider: ModelProvider;
  usage: Partial<ReportedUsage> | undefined;

  constructor(provider: ModelProvider) {
    this.provider = provider;
  }

  read(chunk: Buffer): void {
    this.scan(this.decoder.decode(chunk, { stream: true }));
  }

  end(): void {
    this.scan(`${this.decoder.decode()}\n`);
  }

  private scan(text: string): void {
    const lines = (this.rest + text).split('\n');
    this.rest = lines.pop() ?? '';
    if (this.rest.length > 1_000_000) this.rest = ''; // not SSE: stop looking
    for (const line of lines) {
      if (!line.startsWith('data:')) continue;
      const payload = line.slice(5).trim();
      if (!payload || payload === '[DONE]') continue;
      try {
        const u = usageOf(this.provider, JSON.parse(payload));
        if (u) this.usage = { ...this.usage, ...u };
      } catch {
        // not JSON: passed through, not read
      }
    }
  }
}

const tooLarge = (limit: number) => `The model's answer is over ${limit} bytes (MODEL_MAX_ANSWER_BYTES)`;

/** The last event of a stream cut at the limit, in the provider's own error shape, so its SDKs raise it. */
function streamError(provider: ModelProvider, message: string): string {
  if (provider === 'anthropic') return `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'model_answer_too_large', message } })}\n\n`;
  return `data: ${JSON.stringify({ error: { message, type: 'model_answer_too_large', code: 'model_answer_too_large' } })}\n\n`;
}

/** Where the last event ending in `chunk` ends (a blank line), -1 when none does; `prev` is the byte before it. */
function lastEventEnd(chunk: Buffer, prev: number | undefined): number {
  const lf = chunk.lastIndexOf('\n\n');
  const crlf = chunk.lastIndexOf('\r\n\r\n');
  const end = Math.max(lf === -1 ? -1 : lf + 2, crlf === -1 ? -1 : crlf + 4);
  if (end !== -1) return end;
  return prev === 0x0a && chunk[0] === 0x0a ? 1 : -1;
}

/**
 * Relays a streamed answer to `out` event by event, each as soon as its last byte arrived; the
 * upstream is read at the caller's pace (backpressure). Past `limit` bytes the upstream is
 * dropped, the event it was in the middle of with it, and `out` ends with an error event
 * naming the limit (so the caller's SDK raises it): false then, true when the answer ended.
 */
async function relay(
  body: AsyncIterable<Buffer>,
  out: PassThrough,
  tap: UsageTap,
  provider: ModelProvider,
  limit: number,
  signal: AbortSignal,
): Promise<boolean> {
  let size = 0;
  /** Bytes of an event not complete yet. */
  let held: Buffer[] = [];
  for await (const chunk of body) {
    size += chunk.length;
    if (size > limit) {
      out.end(streamError(provider, tooLarge(limit)));
      return false;
    }
    tap.read(chunk);
    const last = held.at(-1);
    const end = lastEventEnd(chunk, last?.[last.length - 1]);
    if (end === -1) {
      held.push(chunk);
      continue;
    }
    const ready = held.length ? Buffer.concat([...held, chunk.subarray(0, end)]) : chunk.subarray(0, end);
    held = end < chunk.length ? [chunk.subarray(end)] : [];
    if (!out.write(ready)) await once(out, 'drain', { signal });
  }
  tap.end();
  out.end(Buffer.concat(held));
  return true;
}

interface Upstream {
  path: string;
  headers(model: ModelConfig, ctx: AppContext): Record<string, string>;
}

const UPSTREAM: Record<ModelProvider, Upstream> = {
  'openai-compatible': {
    path: '/chat/completions',
    headers: (model): Record<string, string> => (model.apiKey ? { authorization: `Bearer ${model.apiKey}` } : {}),
  },
  anthropic: {
    path: '/v1/messages',
    headers: (model, ctx) => ({
      'x-api-key': model.apiKey ?? '',
      'anthropic-version': ctx.get('anthropic-version') || '2023-06-01',
      ...(ctx.get('anthropic-beta') ? { 'anthropic-beta': ctx.get('anthropic-beta') } : {}),
    }),
  },
};

/** One proxied call: `provider` is the protocol the route speaks. */
export async function proxyModelCall(ctx: AppContext, provider: ModelProvider): Promise<void> {
  const { knex, config, log } = ctx.services;
  const body = await readBody(ctx);
  const run = await usageRun(ctx);
  const orgId = ctx.state.tenancy!.org!.id;
  const model = await resolveNamedModel(knex, config, orgId, body.model);
  if (!model) throw problem('no_model_configured', NO_MODEL_CONFIGURED);
  if (model.provider !== provider) {
    throw problem('model_provider_mismatch', `The model${model.id ? ` ${model.id}` : ''} is ${model.provider}; this route speaks ${provider}`);
  }
  // As for runs: directly or through the model's proxy; the instance default model's host may be internal.
  const url = `${model.baseUrl.replace(/\/+$/, '')}${UPSTREAM[provider].path}`;
  let dispatcher: Dispatcher;
  try {
    dispatcher = await modelDispatcher(config, model);
  } catch (err) {
    if (err instanceof EgressError) throw problem('model_unreachable', `The model's base URL is refused: ${err.message}`);
    throw err;
  }
  const abort = new AbortController();
  ctx.res.once('close', () => abort.abort());
  const secrets = modelSecrets(model);
  let res: Dispatcher.ResponseData<unknown>;
  try {
    res = await request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: ctx.get('Accept') || 'application/json', ...UPSTREAM[provider].headers(model, ctx) },
      body: JSON.stringify({ ...body, model: model.model }),
      dispatcher,
      signal: abort.signal,
      headersTimeout: TIMEOUT_MS,
      bodyTimeout: TIMEOUT_MS,
      maxRedirections: 0,
    } as Parameters<typeof request>[1]);
  } catch (err) {
    await dispatcher.close().catch(() => {});
    throw problem('model_unreachable', redact(`The model did not answer: ${(err as Error).message}`, secrets));
  }
  const contentType = String(res.headers['content-type'] ?? 'application/json');
  const ok = res.statusCode >= 200 && res.statusCode < 300;
  const limit = model.maxAnswerBytes;

  // An error answer, streamed or not, is read whole to be redacted.
  if (ok && contentType.startsWith('text/event-stream')) {
    ctx.status = res.statusCode;
    ctx.type = contentType;
    ctx.set('Cache-Control', 'no-cache');
    ctx.set('X-Accel-Buffering', 'no');
    ctx.req.socket.setNoDelay(true);
    const tap = new UsageTap(provider);
    const out = new PassThrough();
    ctx.body = out;
    relay(res.body as AsyncIterable<Buffer>, out, tap, provider, limit, abort.signal)
      .then(
        async (ended) => {
          if (!ended) log.warn({ requestId: ctx.state.requestId, modelId: model.id, limit }, 'llm proxy: streamed answer cut at MODEL_MAX_ANSWER_BYTES');
          else if (tap.usage) await recordUsage(ctx, model, run, tap.usage);
        },
        () => out.destroy(), // the caller left, or the upstream broke off
      )
      .catch((e) => log.error({ err: e, requestId: ctx.state.requestId }, 'llm proxy usage not recorded'))
      .finally(() => dispatcher.close().catch(() => {}));
    return;
  }

  let text: string;
  try {
    text = (await readCapped(res.body, limit, () => problem('model_answer_too_large', tooLarge(limit)))).toString('utf8');
  } catch (err) {
    if (err instanceof ProblemError) throw err;
    throw problem('model_unreachable', redact(`The model's answer broke off: ${(err as Error).message}`, secrets));
  } finally {
    await dispatcher.close().catch(() => {});
  }
  ctx.status = res.statusCode;
  ctx.type = contentType;
  // A provider's error may echo the key it was sent: the caller must never read it.
  ctx.body = ok ? text : redact(text, secrets);
  if (!ok) return;
  let usage: Partial<ReportedUsage> | undefined;
  try {
    usage = usageOf(provider, JSON.parse(text));
  } catch {
    usage = undefined;
  }
  if (usage) await recordUsage(ctx, model, run, usage);
}
