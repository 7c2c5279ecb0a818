// Outbound calls made by the model, credential and proxy routes (tests, discovery): each with
// its own dispatcher under the egress policy, closed afterwards.
import type { Dispatcher } from 'undici';
import { EgressError } from '../../../shared/egress.ts';
import { type CallResult, outboundDispatcher, proxySecrets } from '../../../shared/models/outbound.ts';
import { problem } from '../../../shared/errors.ts';
import { redact } from '../../../shared/integrations/deliver.ts';
import { decryptSecret, SecretsUnavailableError } from '../../../shared/secrets.ts';
import type { AppContext } from '../../context.ts';

/**
 * `call` through a dispatcher to `targetUrl` (through `proxyUrl` when given). A destination the
 * egress policy refuses is a failed result naming the reason, not an exception.
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

/** A test result body (see `testResultSchema`). */
export function testResult(object: string, r: CallResult, extra: Record<string, unknown> = {}) {
  return { object, ok: !r.error, latencyMs: r.latencyMs, status: r.status, error: r.error ?? null, ...extra };
}

/** A stored secret, decrypted for one outbound call. */
export function unseal(ctx: AppContext, sealed: string): string {
  try {
    return decryptSecret(ctx.services.config.secretsKey, sealed);
  } catch (err) {
    if (err instanceof SecretsUnavailableError) throw problem('service_unavailable', err.message);
    throw err;
  }
}
