// Each provider's usage rule (shared/models/usage.ts, shared/models/README.md "Usage"): what a
// run's sidecar, a chat turn and the LLM proxy count for one answer.
import { expect } from 'chai';
import { pricedUsage, sumUsage, usageOf } from '../../shared/models/usage.ts';

const prices = { inputCostPerMTok: 3, outputCostPerMTok: 15 };

describe('model usage rules', () => {
  it('OpenAI-compatible: prompt_tokens in (cached tokens already inside), completion_tokens out', () => {
    const answer = {
      choices: [{ message: { role: 'assistant', content: 'hi' } }],
      usage: { prompt_tokens: 1200, completion_tokens: 30, total_tokens: 1230, prompt_tokens_details: { cached_tokens: 1000 } },
    };
    expect(usageOf('openai-compatible', answer)).to.deep.equal({ inputTokens: 1200, outputTokens: 30, costUsd: null });
    // Streams: chunks before the usage chunk carry `usage: null`.
    expect(usageOf('openai-compatible', { choices: [{ delta: { content: 'h' } }], usage: null })).to.equal(undefined);
    expect(usageOf('openai-compatible', { choices: [] })).to.equal(undefined);
  });

  it("OpenAI-compatible: the provider's own cost (OpenRouter's usage.cost) wins over the model's prices", () => {
    const reported = usageOf('openai-compatible', { usage: { prompt_tokens: 10, completion_tokens: 5, cost: 0.0042 } })!;
    expect(reported.costUsd).to.equal(0.0042);
    expect(pricedUsage(prices, reported)).to.deep.equal({ inputTokens: 10, outputTokens: 5, costUsd: 0.0042 });
  });

  it('Anthropic: cache writes and cache reads count as input tokens, with input_tokens', () => {
    const answer = {
      type: 'message',
      content: [{ type: 'text', text: 'hi' }],
      usage: { input_tokens: 5, cache_creation_input_tokens: 100, cache_read_input_tokens: 2000, output_tokens: 7 },
    };
    expect(usageOf('anthropic', answer)).to.deep.equal({ inputTokens: 2105, outputTokens: 7 });
    // Priced at the input price for every input token, cache reads and writes too.
    expect(pricedUsage(prices, usageOf('anthropic', answer)!)).to.deep.equal({ inputTokens: 2105, outputTokens: 7, costUsd: 0.00642 });
    // Without prompt caching the fields are absent (or null).
    expect(usageOf('anthropic', { usage: { input_tokens: 9, cache_creation_input_tokens: null, output_tokens: 4 } })).to.deep.equal({
      inputTokens: 9,
      outputTokens: 4,
    });
  });

  it('Anthropic streams: message_start names the input, message_delta the running output; each event only what it carries', () => {
    const start = { type: 'message_start', message: { usage: { input_tokens: 3, cache_read_input_tokens: 40, output_tokens: 1 } } };
    const delta = { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 6 } };
    expect(usageOf('anthropic', start)).to.deep.equal({ inputTokens: 43, outputTokens: 1 });
    expect(usageOf('anthropic', delta)).to.deep.equal({ outputTokens: 6 });
    expect(usageOf('anthropic', { type: 'content_block_delta', delta: { type: 'text_delta', text: 'x' } })).to.equal(undefined);
    // Merged in order, as the LLM proxy reads a stream.
    expect(pricedUsage(prices, { ...usageOf('anthropic', start), ...usageOf('anthropic', delta) })).to.deep.equal({
      inputTokens: 43,
      outputTokens: 6,
      costUsd: 0.000219,
    });
  });

  it('counts 0 for a token count that is not a whole non-negative number, and prices a cost that is not a number', () => {
    expect(usageOf('openai-compatible', { usage: { prompt_tokens: '12', completion_tokens: -4, cost: 'free' } })).to.deep.equal({
      inputTokens: 0,
      outputTokens: 0,
      costUsd: null,
    });
    expect(usageOf('openai-compatible', { usage: { prompt_tokens: 1.5, completion_tokens: 2, cost: -1 } })).to.deep.equal({
      inputTokens: 0,
      outputTokens: 2,
      costUsd: null,
    });
    expect(usageOf('anthropic', { usage: { input_tokens: 2, cache_read_input_tokens: -100, output_tokens: 1 } })).to.deep.equal({
      inputTokens: 2,
      outputTokens: 1,
    });
    expect(usageOf('anthropic', 'not an answer')).to.equal(undefined);
  });

  it('prices an answer without usage at nothing, and sums without float noise', () => {
    expect(pricedUsage(prices, {})).to.deep.equal({ inputTokens: 0, outputTokens: 0, costUsd: 0 });
    const call = pricedUsage({ inputCostPerMTok: 1, outputCostPerMTok: 2 }, { inputTokens: 10, outputTokens: 5 });
    expect(call).to.deep.equal({ inputTokens: 10, outputTokens: 5, costUsd: 0.00002 });
    let total = { inputTokens: 0, outputTokens: 0, costUsd: 0 };
    for (let i = 0; i < 3; i++) total = sumUsage(total, { ...call, costUsd: 0.1 });
    expect(total).to.deep.equal({ inputTokens: 30, outputTokens: 15, costUsd: 0.3 });
  });
});
