// The sidecar's `api_call` tool (DESIGN.md 7, issue 13): the model asks for one HTTP call to an
// integration's API; the worker loads the run's connection (chosen at launch, runs.connections),
// decrypts it here and injects it per the auth's delivery.http. The sandbox sees the tool's
// result only: status, headers without set-cookie, the body cut at 100 KiB, and every echoed
// credential value replaced by `[redacted]`. A refused call is a tool result and a `warn` log
// entry, never a failed run. Programs in the sandbox make the same calls through `api-call`
// (DESIGN.md 9), carried out by the same code: `apiCallForProgram`.
import type { Knex } from 'knex';
import type { Config } from '../../shared/config.ts';
import { type ConnectionRow, openCredentials } from '../../shared/integrations/connections.ts';
import { callWithCredential, type DeliveryAnswer, DeliveryRefused, redact, secretsOf, TEXTUAL } from '../../shared/integrations/deliver.ts';
import { findIntegration, type Integration } from '../../shared/integrations/auths.ts';
import { integrationDependencies } from '../../shared/integrations/readiness.ts';
import type { ResolvedAgent } from '../../shared/packages/resolve-agent.ts';
import { vendorMeta } from '../../shared/packages/vendor-meta.ts';
import type { LogLevel } from '../../shared/runs/logs.ts';
import type { RunRow } from '../../shared/runs/model.ts';
import type { ProgramApiAnswer, ProgramApiCall } from './protocol.ts';
import type { ToolDef } from './providers.ts';

/** What the model is shown of a body at most. */
export const MODEL_BODY_LIMIT = 100 * 1024;
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** One integration the run may call: what the worker knows, never sent to the sandbox. */
export interface ApiIntegration {
  id: string;
  integration: Integration;
  /** `integrations_configuration[id].auth_key`, else null (the connection's own). */
  authKey: string | null;
  /** The agent's narrower `integrations_configuration[id].authorized_uris`, if set. */
  narrowerUris?: string[];
}

export interface ApiCallContext {
  knex: Knex;
  config: Pick<Config, 'secretsKey' | 'egressAllowInternalHosts' | 'extraCaCertsPath' | 'credentialProxyLimits'>;
  run: RunRow;
  integrations: ApiIntegration[];
  log(level: LogLevel, type: string, message: string): Promise<void>;
  signal?: AbortSignal;
}

/**
 * The agent's integration dependencies that offer `api_call`: the integration's manifest has
 * `_meta["dev.service/api"]` (or `dev.appstrate/api`) and `integrations_configuration[id].tools`, when present, names
 * `api_call`. Looked up in the run's space, like the launch's readiness check.
 */
export async function apiIntegrations(knex: Knex, run: Pick<RunRow, 'org_id' | 'space_id'>, agent: ResolvedAgent): Promise<ApiIntegration[]> {
  const out: ApiIntegration[] = [];
  for (const id of integrationDependencies(agent.manifest)) {
    const cfg = (agent.manifest.integrations_configuration?.[id] ?? {}) as { tools?: unknown; auth_key?: unknown; authorized_uris?: unknown };
    if (Array.isArray(cfg.tools) && !cfg.tools.includes('api_call')) continue;
    const m = /^@([^/]+)\/(.+)$/.exec(id);
    const integration = m ? await findIntegration(knex, run.org_id, run.space_id, `@${m[1]}`, m[2]).catch(() => undefined) : undefined;
    if (!integration || vendorMeta(integration.manifest._meta, 'api') === undefined) continue;
    out.push({
      id,
      integration,
      authKey: typeof cfg.auth_key === 'string' ? cfg.auth_key : null,
      narrowerUris: Array.isArray(cfg.authorized_uris) && cfg.authorized_uris.length ? cfg.authorized_uris.map(String) : undefined,
    });
  }
  return out;
}

export function apiCallTool(integrations: ApiIntegration[]): ToolDef | undefined {
  if (!integrations.length) return undefined;
  return {
    name: 'api_call',
    description:
      "Make one HTTP request to an integration's API with the run's connection: its credential is added for you (never put one in headers). " +
      'Answers {status, headers, body}; the body is cut at 100 KiB; redirects are not followed.',
    parameters: {
      type: 'object',
      required: ['integration', 'method', 'url'],
      properties: {
        integration: { enum: integrations.map((i) => i.id), description: 'The integration whose connection to use.' },
        method: { enum: METHODS },
        url: { type: 'string', description: "Absolute URL within the integration's authorized URLs." },
        headers: { type: 'object', additionalProperties: { type: 'string' } },
        body: { type: 'string', description: 'The request body (a JSON value is sent as JSON).' },
      },
    },
  };
}

/** One call to an integration, as the `api_call` tool and `api-call` both ask for it. */
interface ApiRequest {
  integration: unknown;
  method: string;
  url: unknown;
  headers: Record<string, string>;
  body?: string | Buffer;
}

/**
 * Carries out one call for the tool and for programs alike (DESIGN.md 9: one implementation):
 * the run's connection loaded and decrypted here, the credential injected per delivery.http, only
 * to authorized_uris, the answer redacted; each outcome is a log line. A refusal says why.
 */
async function deliver(ctx: ApiCallContext, req: ApiRequest): Promise<{ answer: DeliveryAnswer } | { refused: string }> {
  const target = ctx.integrations.find((i) => i.id === req.integration);
  if (!target) return { refused: `api_call: "integration" must be one of ${ctx.integrations.map((i) => i.id).join(', ')}` };
  const { method, headers, body } = req;
  if (!METHODS.includes(method)) return { refused: `api_call: "method" must be one of ${METHODS.join(', ')}` };
  if (typeof req.url !== 'string' || !req.url) return { refused: 'api_call: "url" must be an absolute URL' };
  const url = req.url;

  const connId = ctx.run.connections?.[target.id];
  const row = connId
    ? ((await ctx.knex('connections').where({ id: connId, org_id: ctx.run.org_id, integration_package_id: target.id }).first()) as ConnectionRow | undefined)
    : undefined;
  const refuse = async (why: string, secrets: string[] = []) => {
    const line = `${method} ${redact(url, secrets)} refused: ${redact(why, secrets)}`;
    await ctx.log('warn', 'api_call', line);
    return { refused: `api_call refused: ${redact(why, secrets)}` };
  };
  if (!row) return refuse(`the run has no connection to ${target.id} (it was deleted or never chosen)`);
  if (row.needs_reconnection) return refuse(`the connection to ${target.id} needs reconnecting`);
  const authKey = target.authKey ?? row.auth_key;
  const auth = target.integration.auths.find((a) => a.key === authKey);
  if (!auth) return refuse(`${target.id} has no auth "${authKey}"`);
  let credential: Record<string, string>;
  try {
    credential = openCredentials(ctx.config.secretsKey, row);
  } catch {
    return refuse(`the connection to ${target.id} cannot be opened`);
  }
  const secrets = secretsOf(auth, credential);
  const shownUrl = redact(url, secrets);
  const started = Date.now();
  try {
    const answer = await callWithCredential(
      ctx.config,
      ctx.config.credentialProxyLimits,
      { auth, credential, connection: row, narrowerUris: target.narrowerUris },
      { method, url, headers, body },
      ctx.signal,
    );
    await ctx.log('info', 'api_call', `${method} ${shownUrl} -> ${answer.status} in ${Date.now() - started} ms`);
    return { answer };
  } catch (err) {
    const ms = Date.now() - started;
    if (err instanceof DeliveryRefused) {
      await ctx.log('warn', 'api_call', `${method} ${shownUrl} refused (${err.reason}) after ${ms} ms: ${redact(err.message, secrets)}`);
      return { refused: `api_call refused (${err.reason}): ${redact(err.message, secrets)}` };
    }
    await ctx.log('warn', 'api_call', `${method} ${shownUrl} failed after ${ms} ms`);
    return { refused: `api_call failed: ${redact((err as Error).message, secrets)}` };
  }
}

/** Carries out one `api_call`; every outcome is a tool result for the model. */
export async function apiCall(ctx: ApiCallContext, args: Record<string, unknown>): Promise<{ content: string }> {
  const headers: Record<string, string> = {};
  if (args.headers && typeof args.headers === 'object' && !Array.isArray(args.headers)) {
    for (const [k, v] of Object.entries(args.headers as Record<string, unknown>)) headers[k] = String(v);
  }
  let body: string | undefined;
  if (typeof args.body === 'string') body = args.body;
  else if (args.body !== undefined && args.body !== null) {
    body = JSON.stringify(args.body);
    if (!Object.keys(headers).some((k) => k.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
  }
  const delivered = await deliver(ctx, { integration: args.integration, method: String(args.method ?? 'GET').toUpperCase(), url: args.url, headers, body });
  if ('refused' in delivered) return { content: delivered.refused };
  const { answer } = delivered;
  // Delivery redacted a textual body and refused a binary one echoing the credential.
  const textual = TEXTUAL.test(answer.headers['content-type'] ?? 'text/plain');
  const full = textual ? answer.body.toString('utf8') : answer.body.toString('base64');
  const cut = Buffer.byteLength(full) > MODEL_BODY_LIMIT;
  // Cut on bytes, then drop a partial trailing character.
  const shown = cut
    ? Buffer.from(full)
        .subarray(0, MODEL_BODY_LIMIT)
        .toString('utf8')
        .replace(/\uFFFD$/, '')
    : full;
  const { 'set-cookie': _dropped, ...shownHeaders } = answer.headers;
  const result: Record<string, unknown> = { status: answer.status, headers: shownHeaders, body: shown };
  if (!textual) result.body_encoding = 'base64';
  if (cut) result.body_truncated = { shown_bytes: Buffer.byteLength(shown), total_bytes: answer.body.length };
  return { content: JSON.stringify(result) };
}

/**
 * `api-call` run by a program in the sandbox (DESIGN.md 9): the same delivery as the tool; the
 * program gets the whole answer (bounded by CREDENTIAL_PROXY_LIMITS.max_response_bytes), not the
 * model's cut of it.
 */
export async function apiCallForProgram(ctx: ApiCallContext, call: ProgramApiCall): Promise<ProgramApiAnswer> {
  const headers: Record<string, string> = {};
  if (call.headers && typeof call.headers === 'object') {
    for (const [k, v] of Object.entries(call.headers)) headers[String(k)] = String(v);
  }
  const body = typeof call.body === 'string' ? Buffer.from(call.body, 'base64') : undefined;
  const delivered = await deliver(ctx, { integration: call.integration, method: String(call.method ?? '').toUpperCase(), url: call.url, headers, body });
  if ('refused' in delivered) return { refused: delivered.refused };
  const { 'set-cookie': _dropped, ...shownHeaders } = delivered.answer.headers;
  return { status: delivered.answer.status, headers: shownHeaders, body: delivered.answer.body.toString('base64') };
}
