import { defineRoute } from '../../route.ts';
import { llmProxyRateLimit, proxyModelCall, proxyResponses } from './_proxy.ts';

export default defineRoute({
  method: 'post',
  path: '/api/llm-proxy/v1/chat/completions',
  operationId: 'llmProxyChatCompletions',
  summary: "Call the organization's model, OpenAI chat-completions style",
  description:
    "An OpenAI-compatible `chat/completions` body, forwarded to the organization's default model, or to its configured model " +
    "whose `name` equals `model` (DESIGN.md section 7). `model` is replaced by the configured model's own name and the model's " +
    "key is injected; the caller's credentials are never forwarded. With `stream: true` the provider's Server-Sent Events are " +
    'passed through as they arrive. The target must be an `openai-compatible` model (else 409 `model_provider_mismatch`). Usage ' +
    "is recorded; with `X-Run-Id` (a remote run the caller launched, still live) it is added to that run's `usage`. Body capped " +
    'by `LLM_PROXY_LIMITS.max_request_bytes` (413). An answer over `MODEL_MAX_ANSWER_BYTES` is 502 `model_answer_too_large` (a ' +
    "stream already under way ends with a last error event naming the limit); the provider's error answers are returned with " +
    "the model's key redacted.",
  tag: 'LLM proxy',
  auth: 'any',
  context: 'space',
  scope: 'llm-proxy:call',
  rateLimit: llmProxyRateLimit(),
  streamBody: {
    contentType: 'application/json',
    schema: {
      type: 'object',
      description: 'OpenAI chat-completions request (`messages`, `model`?, `stream`?, ...)',
      properties: { model: { type: 'string' }, stream: { type: 'boolean' } },
    },
  },
  responses: proxyResponses,
  async handler(ctx) {
    await proxyModelCall(ctx, 'openai-compatible');
  },
});
