// One delivery attempt (SPEC 6.2, 6.3): resolve and check the destination, sign with the
// current secret (and the previous one during a rotation window), POST with a 15 s limit and no
// redirects, record the attempt, and classify the answer for the ladder.
import { request } from 'undici';
import { checkDestination, EgressError, egressDispatcher } from '../../shared/egress.ts';
import { newId } from '../../shared/ids.ts';
import { webhookAttempts } from '../../shared/observability/metrics.ts';
import { decryptSecret } from '../../shared/secrets.ts';
import { envelopeBody, type StoredEvent } from '../../shared/webhooks/payload.ts';
import { signedHeaders } from '../../shared/webhooks/signature.ts';
import type { ActivityDeps } from '../deps.ts';

export type AttemptOutcome = 'success' | 'retry' | 'permanent' | 'unresolvable' | 'gone';

export const ATTEMPT_TIMEOUT_MS = 15_000;

export function classify(status: number): AttemptOutcome {
  if (status >= 200 && status < 300) return 'success';
  if (status === 408 || status === 429 || status >= 500 || (status >= 300 && status < 400)) return 'retry';
  return 'permanent';
}

export function createWebhookDeliveryActivity(deps: Omit<ActivityDeps, 'files'>) {
  const { knex, config } = deps;
  const dispatcher = egressDispatcher(config.egressAllowInternalHosts, ATTEMPT_TIMEOUT_MS, config.extraCaCertsPath);

  async function record(webhookId: string, event: StoredEvent, attempt: number, r: { ok: boolean; statusCode?: number; latencyMs: number; error?: string }) {
    await knex('webhook_deliveries')
      .insert({
        id: newId('whd'),
        webhook_id: webhookId,
        event_id: event.id,
        event_type: event.type,
        status: r.ok ? 'success' : 'failed',
        status_code: r.statusCode ?? null,
        latency_ms: Math.round(r.latencyMs),
        attempt,
        error: r.error ?? null,
      })
      .onConflict(['webhook_id', 'event_id', 'attempt'])
      .ignore();
  }

  const attempts = {
    async deliverWebhookAttempt(input: { eventId: string; webhookId: string; attempt: number }): Promise<AttemptOutcome> {
      const hook = await knex('webhooks').where({ id: input.webhookId }).first();
      const event = (await knex('events').where({ id: input.eventId }).first()) as StoredEvent | undefined;
      if (!hook || !event) return 'gone';
      if (!hook.enabled && event.type !== 'test.ping') return 'gone';
      const t0 = performance.now();
      try {
        await checkDestination(hook.url, { allowInternalHosts: config.egressAllowInternalHosts, requireHttps: true });
      } catch (err) {
        if (!(err instanceof EgressError)) throw err;
        await record(hook.id, event, input.attempt, { ok: false, latencyMs: performance.now() - t0, error: err.message });
        return err.reason === 'unresolvable' ? 'unresolvable' : 'permanent';
      }
      const secrets = [decryptSecret(config.secretsKey, hook.secret_enc)];
      if (hook.secret_previous_enc && hook.rotation_window_ends_at && hook.rotation_window_ends_at.getTime() > Date.now()) {
        secrets.push(decryptSecret(config.secretsKey, hook.secret_previous_enc));
      }
      const body = envelopeBody(event, hook.payload_mode);
      try {
        const res = await request(hook.url, {
          method: 'POST',
          headers: signedHeaders(secrets, event.id, input.attempt, body),
          body,
          dispatcher,
          signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
          maxRedirections: 0,
        } as Parameters<typeof request>[1]);
        await res.body.dump({ limit: 64 * 1024 }).catch(() => undefined); // response bodies are not stored
        const outcome = classify(res.statusCode);
        await record(hook.id, event, input.attempt, {
          ok: outcome === 'success',
          statusCode: res.statusCode,
          latencyMs: performance.now() - t0,
          error: outcome === 'success' ? undefined : `HTTP ${res.statusCode}`,
        });
        return outcome;
      } catch (err) {
        const e = err as Error & { code?: string; cause?: { code?: string } };
        const blocked = e instanceof EgressError || e.cause instanceof EgressError;
        const reason = e.name === 'TimeoutError' || e.name === 'AbortError' ? `no answer within ${ATTEMPT_TIMEOUT_MS / 1000} s` : e.message;
        await record(hook.id, event, input.attempt, { ok: false, latencyMs: performance.now() - t0, error: reason });
        // A name that now resolves to a private address is a permanent refusal (SPEC 6.3.6).
        return blocked ? 'permanent' : 'retry';
      }
    },
  };
  // Counted by outcome (webhook_delivery_attempts_total); `error`: the attempt itself failed (Temporal retries it).
  return {
    async deliverWebhookAttempt(input: { eventId: string; webhookId: string; attempt: number }): Promise<AttemptOutcome> {
      const outcome = await attempts.deliverWebhookAttempt(input).catch((err: unknown) => {
        webhookAttempts.inc({ outcome: 'error' });
        throw err;
      });
      webhookAttempts.inc({ outcome });
      return outcome;
    },
  };
}
