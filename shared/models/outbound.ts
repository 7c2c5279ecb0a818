// Outbound calls to model providers outside a run: the dispatcher every model call uses (the
// sidecar's, the LLM proxy's, and the test and discovery routes'), and the small probes those
// routes make. The egress policy holds whichever way a call leaves: directly, every connection
// re-checks its address; through the organization's proxy, the proxy's address is checked at
// connect, and the target's address before the call when the URL names one: a name is the
// proxy's to resolve (the service's own host often cannot, behind a corporate proxy).
import { type Dispatcher, request } from 'undici';
import type { Config } from '../config.ts';
import { borrowedEgressDispatcher, checkDestination, checkProxiedDestination, egressProxyAgent } from '../egress.ts';
import { AnswerTooLarge, readCapped } from '../http/read-capped.ts';
import { redact } from '../integrations/deliver.ts';
import type { ModelConfig, ModelProvider } from './resolve.ts';

const TIMEOUT_MS = 15_000;
/** Model lists (OpenRouter's is a few MiB) and probe answers are read at most this far. */
const MAX_ANSWER_BYTES = 20 * 1024 * 1024;

type EgressConfig = Pick<Config, 'egressAllowInternalHosts' | 'extraCaCertsPath'>;

/**
 * A dispatcher to `targetUrl`, through `proxyUrl` when given. `operatorHosts` are hosts the
 * operator configured (the instance default model, OpenRouter's URL) and so may be internal.
 * Throws EgressError when the target or the proxy is refused. Direct calls borrow the kept-alive
 * pool of their egress decision (closing the dispatcher leaves it open); a proxy's agent is the
 * caller's own, closed with it.
 */
export async function outboundDispatcher(
  config: EgressConfig,
  targetUrl: string,
  opts: { proxyUrl?: string; operatorHosts?: string[] } = {},
): Promise<Dispatcher> {
  const allow = [...config.egressAllowInternalHosts, ...(opts.operatorHosts ?? []).map((h) => h.toLowerCase())];
  if (!opts.proxyUrl) {
    await checkDestination(targetUrl, { allowInternalHosts: allow });
    return borrowedEgressDispatcher(allow, 10_000, config.extraCaCertsPath);
  }
  checkProxiedDestination(targetUrl, { allowInternalHosts: allow });
  await checkDestination(opts.proxyUrl, { allowInternalHosts: config.egressAllowInternalHosts });
  return egressProxyAgent(opts.proxyUrl, config.egressAllowInternalHosts, 10_000, config.extraCaCertsPath);
}

/** The dispatcher for a model's calls: its proxy if it has one; the instance default's host may be internal. */
export function modelDispatcher(config: EgressConfig, model: ModelConfig): Promise<Dispatcher> {
  return outboundDispatcher(config, model.baseUrl, {
    proxyUrl: model.proxyUrl,
    operatorHosts: model.source === 'instance' ? [new URL(model.baseUrl).hostname] : [],
  });
}

/**
 * What must never appear in a model call's error, wherever it is shown (a run's error, its log,
 * the sandbox, an LLM proxy caller): the key, and the credentials of the proxy the call goes through.
 */
export function modelSecrets(model: Pick<ModelConfig, 'apiKey' | 'proxyUrl'>): string[] {
  return [...(model.apiKey ? [model.apiKey] : []), ...proxySecrets(model.proxyUrl)];
}

/** A proxy URL's user and password, as written and decoded. */
export function proxySecrets(proxyUrl: string | undefined): string[] {
  if (!proxyUrl) return [];
  try {
    const { username, password } = new URL(proxyUrl);
    return [username, password, decodeURIComponent(username), decodeURIComponent(password)].filter(Boolean);
  } catch {
    return []; // not a URL: nothing of it to hide
  }
}

/** Authentication headers of a provider's API. */
export function providerHeaders(provider: ModelProvider, apiKey?: string): Record<string, string> {
  if (provider === 'anthropic') return { ...(apiKey ? { 'x-api-key': apiKey } : {}), 'anthropic-version': '2023-06-01' };
  return apiKey ? { authorization: `Bearer ${apiKey}` } : {};
}

export interface CallResult {
  latencyMs: number;
  /** HTTP status, or null when nothing was answered. */
  status: number | null;
  json?: any;
  /** Why the call failed, naming the provider's answer; secrets redacted. Absent on success. */
  error?: string;
}

/**
 * One request through `dispatcher`, never following a redirect. A 2xx JSON answer is `json`;
 * anything else becomes `error` (with up to 300 characters of the answer). `secrets` are
 * replaced by `[redacted]` in that text, since providers sometimes echo a key.
 */
export async function callProvider(
  dispatcher: Dispatcher,
  url: string,
  init: { method: 'GET' | 'POST'; headers?: Record<string, string>; body?: unknown; secrets?: string[] },
): Promise<CallResult> {
  const started = performance.now();
  const latency = () => Math.round(performance.now() - started);
  const secrets = init.secrets ?? [];
  try {
    const res = await request(url, {
      method: init.method,
      headers: { accept: 'application/json', ...(init.body === undefined ? {} : { 'content-type': 'application/json' }), ...init.headers },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
      dispatcher,
      headersTimeout: TIMEOUT_MS,
      bodyTimeout: TIMEOUT_MS,
      maxRedirections: 0,
    } as Parameters<typeof request>[1]);
    let text: string;
    try {
      text = (await readCapped(res.body, MAX_ANSWER_BYTES)).toString('utf8');
    } catch (err) {
      if (!(err instanceof AnswerTooLarge)) throw err;
      return { latencyMs: latency(), status: res.statusCode, error: `The answer exceeds ${MAX_ANSWER_BYTES} bytes` };
    }
    if (res.statusCode < 200 || res.statusCode >= 300) {
      // Redacted before it is cut: a key across the cut would otherwise leave its first part.
      return { latencyMs: latency(), status: res.statusCode, error: `HTTP ${res.statusCode}: ${redact(text, secrets).slice(0, 300)}` };
    }
    try {
      return { latencyMs: latency(), status: res.statusCode, json: JSON.parse(text) };
    } catch {
      return { latencyMs: latency(), status: res.statusCode, error: 'The answer is not JSON' };
    }
  } catch (err) {
    const e = err as Error & { cause?: Error };
    const why = e.cause?.message ? `${e.message} (${e.cause.message})` : e.message;
    return { latencyMs: latency(), status: null, error: redact(`No answer: ${why}`, secrets) };
  }
}

export interface ProviderTarget {
  provider: ModelProvider;
  baseUrl: string;
  apiKey?: string;
}

/** The smallest real completion: one user word, at most one token back. */
export function testCompletion(dispatcher: Dispatcher, target: ProviderTarget, model: string): Promise<CallResult> {
  const base = target.baseUrl.replace(/\/+$/, '');
  const messages = [{ role: 'user', content: 'ping' }];
  const [url, body] =
    target.provider === 'anthropic'
      ? [`${base}/v1/messages`, { model, max_tokens: 1, messages }]
      : [`${base}/chat/completions`, { model, max_tokens: 1, messages }];
  return callProvider(dispatcher, url, {
    method: 'POST',
    headers: providerHeaders(target.provider, target.apiKey),
    body,
    secrets: target.apiKey ? [target.apiKey] : [],
  });
}

/** The provider's models endpoint: `GET /models` (OpenAI-compatible) or `GET /v1/models` (Anthropic). */
export function listModels(dispatcher: Dispatcher, target: ProviderTarget): Promise<CallResult> {
  const base = target.baseUrl.replace(/\/+$/, '');
  const url = target.provider === 'anthropic' ? `${base}/v1/models` : `${base}/models`;
  return callProvider(dispatcher, url, {
    method: 'GET',
    headers: providerHeaders(target.provider, target.apiKey),
    secrets: target.apiKey ? [target.apiKey] : [],
  });
}
