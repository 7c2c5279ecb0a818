// Usage and cost of model calls have one owner (issue 29): what an answer says it used
// (`usageOf`), what that costs (`pricedUsage`), and how it is added to a run's or a chat
// session's totals (`addUsage`). A run's sidecar, a chat turn and the LLM proxy all count here,
// so the same answer counts the same whichever way it went (shared/models/README.md "Usage").
import type { Knex } from 'knex';
import type { RunUsage } from '../runs/model.ts';
import type { ModelConfig, ModelProvider } from './resolve.ts';

/** What an answer (or one event of a streamed answer) reports; `costUsd` is the provider's own figure. */
export interface ReportedUsage {
  inputTokens: number;
  outputTokens: number;
  /** The provider's cost when it reports one (OpenRouter's `usage.cost`), else null: priced from the model. */
  costUsd: number | null;
}

export const NO_USAGE: RunUsage = Object.freeze({ inputTokens: 0, outputTokens: 0, costUsd: 0 });

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;
/** A provider's token count; anything but a whole non-negative number counts 0 (a total never shrinks). */
const tokens = (v: unknown): number => (Number.isSafeInteger(v) && (v as number) >= 0 ? (v as number) : 0);
const reportedCost = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null);

/**
 * The usage in a whole answer or in one event of a stream, undefined when it carries none.
 * Fields an event does not carry are absent: a stream's usage is its events' merged in order.
 * - OpenAI-compatible: `prompt_tokens` in, `completion_tokens` out. Cached prompt tokens
 *   (`prompt_tokens_details.cached_tokens`) are already inside `prompt_tokens`.
 * - Anthropic: in = `input_tokens` + `cache_creation_input_tokens` + `cache_read_input_tokens`
 *   (`input_tokens` is only what is neither written to nor read from the prompt cache; all three
 *   are billed as input), out = `output_tokens`. A stream's `message_start` carries the usage in
 *   its `message`; `message_delta` carries running totals.
 */
export function usageOf(provider: ModelProvider, data: unknown): Partial<ReportedUsage> | undefined {
  if (!isObject(data)) return undefined;
  if (provider === 'openai-compatible') {
    const u = data.usage;
    if (!isObject(u)) return undefined;
    return { inputTokens: tokens(u.prompt_tokens), outputTokens: tokens(u.completion_tokens), costUsd: reportedCost(u.cost) };
  }
  const u = data.type === 'message_start' && isObject(data.message) ? data.message.usage : data.usage;
  if (!isObject(u)) return undefined;
  const out: Partial<ReportedUsage> = {};
  const inputs = [u.input_tokens, u.cache_creation_input_tokens, u.cache_read_input_tokens];
  if (inputs.some((v) => typeof v === 'number')) out.inputTokens = inputs.reduce<number>((sum, v) => sum + tokens(v), 0);
  if (typeof u.output_tokens === 'number') out.outputTokens = tokens(u.output_tokens);
  return out;
}

/** Rounded to a billionth of a dollar: float sums would otherwise show noise like 0.000040000000000000003. */
const nanoUsd = (usd: number): number => Math.round(usd * 1e9) / 1e9;

/**
 * Tokens and cost of one call: the provider's own cost when it reports one, else the model's
 * per-million prices (`inputCostPerMTok` applies to every input token, cache reads and writes too).
 */
export function pricedUsage(model: Pick<ModelConfig, 'inputCostPerMTok' | 'outputCostPerMTok'>, u: Partial<ReportedUsage>): RunUsage {
  const inputTokens = u.inputTokens ?? 0;
  const outputTokens = u.outputTokens ?? 0;
  const costUsd = u.costUsd ?? (inputTokens * model.inputCostPerMTok + outputTokens * model.outputCostPerMTok) / 1e6;
  return { inputTokens, outputTokens, costUsd: nanoUsd(costUsd) };
}

/** `a` and `b` together: the calls of one chat turn, kept in memory until its reply is stored. */
export function sumUsage(a: RunUsage, b: RunUsage): RunUsage {
  return { inputTokens: a.inputTokens + b.inputTokens, outputTokens: a.outputTokens + b.outputTokens, costUsd: nanoUsd(a.costUsd + b.costUsd) };
}

/**
 * The `usage` column with a call's usage added, over the named bindings `:inputTokens`,
 * `:outputTokens` and `:costUsd`: `addUsage`'s, and a journaled step's (activities/sidecar/journal.ts).
 * Postgres adds in `numeric`, so the totals carry no float noise.
 */
export const USAGE_PLUS_CALL = `jsonb_build_object(
       'inputTokens', coalesce((usage->>'inputTokens')::numeric, 0) + cast(:inputTokens as numeric),
       'outputTokens', coalesce((usage->>'outputTokens')::numeric, 0) + cast(:outputTokens as numeric),
       'costUsd', coalesce((usage->>'costUsd')::numeric, 0) + cast(:costUsd as numeric))`;

/**
 * Adds `usage` to the totals of the run or chat session `id`, in one statement: concurrent
 * callers (LLM proxy calls for one run) never lose each other's counts, and inside a
 * transaction it commits with what the usage came with (a stored reply).
 */
export async function addUsage(db: Knex | Knex.Transaction, table: 'runs' | 'chat_sessions', id: string, usage: RunUsage): Promise<void> {
  await db.raw(`update :table: set usage = ${USAGE_PLUS_CALL} where id = :id`, {
    table,
    id,
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    costUsd: usage.costUsd,
  });
}
