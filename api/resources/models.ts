// Models and model provider credentials as route slices use them (issue 17): the fields a model
// is written with, where its calls would go and whether the egress policy lets them, and the
// outbound calls of the test and discovery routes (models, credentials, proxies).
import type { Dispatcher } from 'undici';
import { EgressError, checkDestination, checkProxiedDestination } from '../../shared/egress.ts';
import { problem } from '../../shared/errors.ts';
import { redact } from '../../shared/integrations/deliver.ts';
import { type CallResult, outboundDispatcher, proxySecrets } from '../../shared/models/outbound.ts';
import { type CredentialRow, type ModelProvider, orgProxyUrl } from '../../shared/models/resolve.ts';
import type { AppContext } from '../context.ts';

export const modelFields = {
  name: { type: 'string', minLength: 1, maxLength: 100 },
  provider: { enum: ['openai-compatible', 'anthropic'] },
  baseUrl: { type: 'string', format: 'uri', maxLength: 2000 },
  model: { type: 'string', minLength: 1, maxLength: 200 },
  apiKey: { type: ['string', 'null'], maxLength: 4000 },
  credentialId: {
    type: ['string', 'null'],
    maxLength: 100,
    description: "Use this credential's provider, base URL and key (then send none of `provider`, `baseUrl`, `apiKey`)",
  },
  proxyId: { type: ['string', 'null'], maxLength: 100, description: "Send the model's calls through this proxy; null: the organization's default proxy" },
  isDefault: { type: 'boolean' },
  inputCostPerMTok: { type: ['number', 'null'], minimum: 0 },
  outputCostPerMTok: { type: ['number', 'null'], minimum: 0 },
};

/**
 * The base URL passes the egress policy (SSRF) now, as the calls would leave: through the proxy
 * that would carry them (`proxyId`, else the organization's default; a name is then the proxy's
 * to resolve), or directly. Every call checks again, the way it then goes.
 */
export async function assertModelUrl(ctx: AppContext, baseUrl: string, proxyId?: string | null): Promise<void> {
  const { knex, config } = ctx.services;
  const allow = { allowInternalHosts: config.egressAllowInternalHosts };
  try {
    if (await orgProxyUrl(knex, config, ctx.state.tenancy!.org!.id, proxyId)) checkProxiedDestination(baseUrl, allow);
    else await checkDestination(baseUrl, allow);
  } catch (err) {
    if (err instanceof EgressError) {
      throw problem('validation_failed', { detail: `baseUrl: ${err.message}`, errors: [{ field: 'baseUrl', code: 'invalid_value', message: err.message }] });
    }
    throw err;
  }
}

function invalid(field: string, code: string, message: string) {
  return problem('validation_failed', { detail: `${field}: ${message}`, errors: [{ field, code, message }] });
}

/** The organization's credential `id`; another organization's (or none) is 404. */
export async function orgCredential(ctx: AppContext, id: string): Promise<CredentialRow> {
  const row = await ctx.services.knex<CredentialRow>('model_provider_credentials').where({ id, org_id: ctx.state.tenancy!.org!.id }).first();
  if (!row) throw problem('not_found', { detail: 'No such model provider credential', param: 'credentialId' });
  return row;
}

/**
 * Where a model's calls go, from a body: its credential's provider, base URL and key, or its
 * own `provider`, `baseUrl`, `apiKey`. A key travels only to its credential's base URL, so a
 * model naming a credential cannot also name another base URL (or key).
 */
export async function modelTarget(
  ctx: AppContext,
  body: { credentialId?: string | null; provider?: ModelProvider; baseUrl?: string; apiKey?: string | null; proxyId?: string | null },
): Promise<{ provider: ModelProvider; baseUrl: string; apiKey?: string; credential?: CredentialRow }> {
  if (body.credentialId) {
    for (const f of ['provider', 'baseUrl', 'apiKey'] as const) {
      if (body[f] !== undefined) throw invalid(f, 'not_allowed', `comes from the credential; send either ${f} or credentialId`);
    }
    const credential = await orgCredential(ctx, body.credentialId);
    return { provider: credential.provider, baseUrl: credential.base_url, credential };
  }
  if (!body.provider) throw invalid('provider', 'required', 'is required (or credentialId)');
  if (!body.baseUrl) throw invalid('baseUrl', 'required', 'is required (or credentialId)');
  await assertModelUrl(ctx, body.baseUrl, body.proxyId);
  return { provider: body.provider, baseUrl: body.baseUrl.replace(/\/$/, ''), apiKey: body.apiKey ?? undefined };
}

/**
 * `call` through a dispatcher to `targetUrl` (through `proxyUrl` when given), closed afterwards.
 * A destination the egress policy refuses is a failed result naming the reason, not an exception.
 */
export async function callOut(
  ctx: AppContext,
  targetUrl: string,
  opts: { proxyUrl?: string; operatorHosts?: string[] },
  call: (dispatcher: Dispatcher) => Promise<CallResult>,
): Promise<CallResult> {
  let dispatcher: Dispatcher;
  try {
    dispatcher = await outboundDispatcher(ctx.services.config, targetUrl, opts);
  } catch (err) {
    if (err instanceof EgressError) return { latencyMs: 0, status: null, error: `Refused by the egress policy: ${err.message}` };
    throw err;
  }
  try {
    const r = await call(dispatcher);
    // A proxy's user and password never show, should an error quote them.
    return r.error ? { ...r, error: redact(r.error, proxySecrets(opts.proxyUrl)) } : r;
  } finally {
    await dispatcher.close().catch(() => {});
  }
}
