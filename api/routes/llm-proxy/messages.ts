import { defineRoute } from '../../route.ts';
import { llmProxyRateLimit, proxyModelCall, proxyResponses } from './_proxy.ts';

export default defineRoute({
  method: 'post',
  path: '/api/llm-proxy/v1/messages',
  operationId: 'llmProxyMessages',
  summary: "Call the organization's model, Anthropic messages style",
  description:
    "An Anthropic `messages` body, forwarded to the organization's default model, or to its configured model whose `name` equals " +
    "`model` (DESIGN.md section 7). `model` is replaced by the configured model's own name and the model's key is injected as " +
    "`x-api-key` (`anthropic-version` and `anthropic-beta` are passed on; the caller's credentials never are). With `stream: " +
    "true` the provider's Server-Sent Events are passed through as they arrive. The target must be an `anthropic` model (else " +
    '409 `model_provider_mismatch`). Usage is recorded as for chat completions (`X-Run-Id`). Body capped by `LLM_PROXY_LIMITS.max_request_bytes` ' +
    '(413). An answer over `MODEL_MAX_ANSWER_BYTES` is 502 `model_answer_too_large` (a stream already under way ends with a last ' +
    "error event naming the limit); the provider's error answers are returned with the model's key redacted.",
  tag: 'LLM proxy',
  auth: 'any',
  context: 'space',
  scope: 'llm-proxy:call',
  rateLimit: llmProxyRateLimit(),
  streamBody: {
    contentType: 'application/json',
    schema: {
      type: 'object',
      description: 'Anthropic messages request (`messages`, `max_tokens`, `model`?, `stream`?, ...)',
      properties: { model: { type: 'string' }, stream: { type: 'boolean' } },
    },
  },
  responses: proxyResponses,
  async handler(ctx) {
    await proxyModelCall(ctx, 'anthropic');
  },
});
