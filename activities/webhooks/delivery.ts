// Delivery attempts (SPEC 6.2, 6.3): resolve and check the destination, sign with the current
// secret (and the previous one during a rotation window), POST with a 15 s limit and no
// redirects, record the attempt, and classify the answer for the ladder.
// `deliverWebhookAttempt` makes one attempt for deliverWebhook (ladders, replays, test.ping);
// `deliverWebhookBatch` makes the first attempts of many events to one webhook for its outbox
// (workflows/webhooks/webhook-outbox.ts): one read of the webhook and of the events, one
// destination check, the requests side by side over the kept-alive connections of one
// dispatcher, one insert of the attempts, and a deliverWebhook for each one to retry. A
// publisher makes an event's first attempt itself with the same batch (first-attempt.ts).
import { Context } from '@temporalio/activity';
import { request } from 'undici';
import { checkDestination, EgressError, egressDispatcher } from '../../shared/egress.ts';
import { newId } from '../../shared/ids.ts';
import { webhookAttempts } from '../../shared/observability/metrics.ts';
import { decryptSecret } from '../../shared/secrets.ts';
import { envelopeBody, type StoredEvent } from '../../shared/webhooks/payload.ts';
import { signedHeaders } from '../../shared/webhooks/signature.ts';
import { startDeliverWebhookWorkflow } from '../../temporal/starters/deliver-webhook.ts';
import type { ActivityDeps } from '../deps.ts';

export type AttemptOutcome = 'success' | 'retry' | 'permanent' | 'unresolvable' | 'gone';

export const ATTEMPT_TIMEOUT_MS = 15_000;
/** Requests one batch has open at once (over as many kept-alive connections). */
export const BATCH_CONCURRENCY = 16;
/** A batch heartbeats this often while it runs (the outbox notices a lost worker). */
const HEARTBEAT_MS = 5_000;
/** The ladder's first wait (workflows/webhooks/deliver-webhook.ts RETRY_WAITS[0]). */
const FIRST_RETRY_WAIT_MS = 30_000;

export function classify(status: number): AttemptOutcome {
  if (status >= 200 && status < 300) return 'success';
  if (status === 408 || status === 429 || status >= 500 || (status >= 300 && status < 400)) return 'retry';
  return 'permanent';
}

interface HookRow {
  id: string;
  url: string;
  enabled: boolean;
  payload_mode: 'full' | 'summary';
  secret_enc: string;
  secret_previous_enc: string | null;
  rotation_window_ends_at: Date | null;
}

interface Attempted {
  outcome: AttemptOutcome;
  ok: boolean;
  statusCode?: number;
  latencyMs: number;
  error?: string;
  at: Date;
}

/** Counts of a batch's events by outcome; `skipped`: already attempted (a repeated publish or batch). */
export type BatchOutcomes = Partial<Record<AttemptOutcome | 'skipped', number>>;

/** Heartbeats until the returned function is called (nothing outside an activity). */
function heartbeating(): () => void {
  let ctx: Context;
  try {
    ctx = Context.current();
  } catch {
    return () => undefined;
  }
  const timer = setInterval(() => ctx.heartbeat(), HEARTBEAT_MS);
  return () => clearInterval(timer);
}

export type DeliveryDeps = Omit<ActivityDeps, 'files'>;

/** A batch of first attempts to one webhook: its events' outcomes. */
export type DeliverBatch = (input: { webhookId: string; eventIds: string[] }) => Promise<BatchOutcomes>;

const deliveries = new WeakMap<DeliveryDeps, ReturnType<typeof createDelivery>>();

/**
 * The attempts of one worker's deps, made once: the platform queue's activities and the
 * publishers' first attempts (first-attempt.ts) share its dispatcher, so its kept-alive
 * connections serve them all.
 */
export function webhookDelivery(deps: DeliveryDeps): ReturnType<typeof createDelivery> {
  let d = deliveries.get(deps);
  if (!d) {
    d = createDelivery(deps);
    deliveries.set(deps, d);
  }
  return d;
}

function createDelivery(deps: DeliveryDeps) {
  const { knex, config, workflows } = deps;
  // One dispatcher for every attempt of this worker: connections to a destination are kept
  // alive and reused; each new one passes the egress lookup, and every attempt (or batch) is
  // preceded by checkDestination.
  const dispatcher = egressDispatcher(config.egressAllowInternalHosts, ATTEMPT_TIMEOUT_MS, config.extraCaCertsPath);

  function row(webhookId: string, event: StoredEvent, attempt: number, r: Attempted) {
    return {
      id: newId('whd'),
      webhook_id: webhookId,
      event_id: event.id,
      event_type: event.type,
      status: r.ok ? 'success' : 'failed',
      status_code: r.statusCode ?? null,
      latency_ms: Math.round(r.latencyMs),
      attempt,
      error: r.error ?? null,
      created_at: r.at,
    };
  }

  async function record(rows: ReturnType<typeof row>[]): Promise<void> {
    if (rows.length) await knex('webhook_deliveries').insert(rows).onConflict(['webhook_id', 'event_id', 'attempt']).ignore();
  }

  function secretsOf(hook: HookRow): string[] {
    const secrets = [decryptSecret(config.secretsKey, hook.secret_enc)];
    if (hook.secret_previous_enc && hook.rotation_window_ends_at && hook.rotation_window_ends_at.getTime() > Date.now()) {
      secrets.push(decryptSecret(config.secretsKey, hook.secret_previous_enc));
    }
    return secrets;
  }

  /** The destination check of SPEC 6.3.6: null when allowed, else the failed attempt. */
  async function refused(url: string): Promise<Attempted | null> {
    const t0 = performance.now();
    try {
      await checkDestination(url, { allowInternalHosts: config.egressAllowInternalHosts, requireHttps: true });
      return null;
    } catch (err) {
      if (!(err instanceof EgressError)) throw err;
      return {
        outcome: err.reason === 'unresolvable' ? 'unresolvable' : 'permanent',
        ok: false,
        latencyMs: performance.now() - t0,
        error: err.message,
        at: new Date(),
      };
    }
  }

  /** One signed POST, classified. */
  async function post(hook: HookRow, secrets: string[], event: StoredEvent, attempt: number, sinceMs = 0): Promise<Attempted> {
    const t0 = performance.now() - sinceMs;
    const body = envelopeBody(event, hook.payload_mode);
    try {
      const res = await request(hook.url, {
        method: 'POST',
        headers: signedHeaders(secrets, event.id, attempt, body),
        body,
        dispatcher,
        signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
        maxRedirections: 0,
      } as Parameters<typeof request>[1]);
      await res.body.dump({ limit: 64 * 1024 }).catch(() => undefined); // response bodies are not stored
      const outcome = classify(res.statusCode);
      return {
        outcome,
        ok: outcome === 'success',
        statusCode: res.statusCode,
        latencyMs: performance.now() - t0,
        error: outcome === 'success' ? undefined : `HTTP ${res.statusCode}`,
        at: new Date(),
      };
    } catch (err) {
      const e = err as Error & { code?: string; cause?: { code?: string } };
      const blocked = e instanceof EgressError || e.cause instanceof EgressError;
      const reason = e.name === 'TimeoutError' || e.name === 'AbortError' ? `no answer within ${ATTEMPT_TIMEOUT_MS / 1000} s` : e.message;
      // A name that now resolves to a private address is a permanent refusal (SPEC 6.3.6).
      return { outcome: blocked ? 'permanent' : 'retry', ok: false, latencyMs: performance.now() - t0, error: reason, at: new Date() };
    }
  }

  /** The rest of the ladder after a failed first attempt: deliverWebhook from attempt 2. */
  async function continueLadder(eventId: string, webhookId: string, failedAt: Date): Promise<void> {
    // A replay that ran before may have used the id; a running one already delivers it.
    await startDeliverWebhookWorkflow(workflows, { eventId, webhookId, firstAttempt: 2, continueAt: failedAt.getTime() + FIRST_RETRY_WAIT_MS }, 'again');
  }

  async function attempt(input: { eventId: string; webhookId: string; attempt: number }): Promise<AttemptOutcome> {
    const hook = (await knex('webhooks').where({ id: input.webhookId }).first()) as HookRow | undefined;
    const event = (await knex('events').where({ id: input.eventId }).first()) as StoredEvent | undefined;
    if (!hook || !event) return 'gone';
    if (!hook.enabled && event.type !== 'test.ping') return 'gone';
    const t0 = performance.now();
    const denied = await refused(hook.url);
    const r = denied ?? (await post(hook, secretsOf(hook), event, input.attempt, performance.now() - t0));
    await record([row(hook.id, event, input.attempt, r)]);
    return r.outcome;
  }

  async function batch(input: { webhookId: string; eventIds: string[] }): Promise<BatchOutcomes> {
    const counts: BatchOutcomes = {};
    const count = (o: AttemptOutcome | 'skipped', n = 1) => {
      counts[o] = (counts[o] ?? 0) + n;
    };
    // Both reads at once; events with an attempt recorded to this webhook were sent already (a
    // publish or a batch repeated).
    const [hook, found] = (await Promise.all([
      knex('webhooks').where({ id: input.webhookId }).first(),
      knex('events as e')
        .whereIn('e.id', input.eventIds)
        .select('e.*', knex.raw('exists (select 1 from webhook_deliveries d where d.webhook_id = ? and d.event_id = e.id) as attempted', [input.webhookId])),
    ])) as [HookRow | undefined, Array<StoredEvent & { attempted: boolean }>];
    if (!hook?.enabled) {
      count('gone', input.eventIds.length);
      return counts;
    }
    count('gone', input.eventIds.length - found.length);
    const events = found.filter((e) => !e.attempted);
    count('skipped', found.length - events.length);
    if (!events.length) return counts;

    const t0 = performance.now();
    const denied = await refused(hook.url);
    const checkMs = performance.now() - t0;
    const results: Attempted[] = new Array(events.length);
    if (denied) {
      results.fill(denied);
    } else {
      const secrets = secretsOf(hook);
      let next = 0;
      await Promise.all(
        Array.from({ length: Math.min(BATCH_CONCURRENCY, events.length) }, async () => {
          while (next < events.length) {
            const i = next++;
            results[i] = await post(hook, secrets, events[i], 1, checkMs);
          }
        }),
      );
    }
    // The ladder goes on before the attempt is recorded: a batch run again (a worker lost after
    // the insert) skips recorded events, so their retries must already be under way.
    await Promise.all(
      events.map((e, i) =>
        results[i].outcome === 'retry' || results[i].outcome === 'unresolvable' ? continueLadder(e.id, hook.id, results[i].at) : undefined,
      ),
    );
    await record(events.map((e, i) => row(hook.id, e, 1, results[i])));
    for (const r of results) count(r.outcome);
    return counts;
  }

  // Counted by outcome (webhook_delivery_attempts_total); `error`: the attempt itself failed (Temporal retries it, or the outbox).
  return {
    async deliverAttempt(input: { eventId: string; webhookId: string; attempt: number }): Promise<AttemptOutcome> {
      const outcome = await attempt(input).catch((err: unknown) => {
        webhookAttempts.inc({ outcome: 'error' });
        throw err;
      });
      webhookAttempts.inc({ outcome });
      return outcome;
    },
    deliverBatch: (async (input) => {
      const counts = await batch(input).catch((err: unknown) => {
        webhookAttempts.inc({ outcome: 'error' }, input.eventIds.length);
        throw err;
      });
      for (const [outcome, n] of Object.entries(counts)) if (outcome !== 'skipped') webhookAttempts.inc({ outcome }, n);
      return counts;
    }) satisfies DeliverBatch,
  };
}

export function createWebhookDeliveryActivity(deps: DeliveryDeps) {
  const delivery = webhookDelivery(deps);
  return {
    deliverWebhookAttempt: (input: { eventId: string; webhookId: string; attempt: number }): Promise<AttemptOutcome> => delivery.deliverAttempt(input),
    async deliverWebhookBatch(input: { webhookId: string; eventIds: string[] }): Promise<BatchOutcomes> {
      const stop = heartbeating();
      try {
        return await delivery.deliverBatch(input);
      } finally {
        stop();
      }
    },
  };
}
