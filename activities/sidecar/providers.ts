// Model providers behind the sidecar. The runtime speaks OpenAI chat-completions messages;
// Anthropic messages are translated both ways. API keys are added here and nowhere else.
// An answer is read at most `model.maxAnswerBytes` (MODEL_MAX_ANSWER_BYTES): a provider that
// never stops answering fails the call, not the worker. What fails a call becomes the run's
// error (and reaches the sandbox): the model's key and other secrets are redacted from it first.
import { type Dispatcher, request } from 'undici';
import { readCapped } from '../../shared/http/read-capped.ts';
import { redact } from '../../shared/integrations/deliver.ts';
import { modelSecrets } from '../../shared/models/outbound.ts';
import type { ModelConfig } from '../../shared/models/resolve.ts';
import { pricedUsage, usageOf } from '../../shared/models/usage.ts';
import type { RunUsage } from '../../shared/runs/model.ts';
import type { ChatMessage, ToolCall } from './protocol.ts';

export interface ToolDef {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}
export interface Completion {
  message: ChatMessage;
  /** Tokens and cost of this call, counted and priced by shared/models/usage.ts. */
  usage: RunUsage;
}

export class ModelCallError extends Error {
  override name = 'ModelCallError';
}

const TIMEOUT_MS = 120_000;

async function postJson(url: string, headers: Record<string, string>, body: unknown, model: ModelConfig, dispatcher: Dispatcher, signal?: AbortSignal) {
  const maxBytes = model.maxAnswerBytes;
  const res = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    dispatcher,
    signal,
    headersTimeout: TIMEOUT_MS,
    bodyTimeout: TIMEOUT_MS,
    maxRedirections: 0,
  } as Parameters<typeof request>[1]);
  const raw = await readCapped(res.body, maxBytes, () => new ModelCallError(`The model provider's answer is over ${maxBytes} bytes (MODEL_MAX_ANSWER_BYTES)`));
  const text = raw.toString('utf8');
  if (res.statusCode < 200 || res.statusCode >= 300) {
    // Redacted before it is cut: a key across the cut would otherwise leave its first part.
    throw new ModelCallError(`The model provider answered HTTP ${res.statusCode}: ${redact(text, modelSecrets(model)).slice(0, 300)}`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new ModelCallError('The model provider answered with something that is not JSON');
  }
}

async function openAi(model: ModelConfig, messages: ChatMessage[], tools: ToolDef[], dispatcher: Dispatcher, signal?: AbortSignal): Promise<Completion> {
  const headers: Record<string, string> = model.apiKey ? { authorization: `Bearer ${model.apiKey}` } : {};
  const data = await postJson(
    `${model.baseUrl}/chat/completions`,
    headers,
    // A turn without tools (a chat turn) sends none: providers refuse an empty list.
    { model: model.model, messages, ...(tools.length ? { tools: tools.map((t) => ({ type: 'function', function: t })), tool_choice: 'auto' } : {}) },
    model,
    dispatcher,
    signal,
  );
  const message = data?.choices?.[0]?.message;
  if (!message) throw new ModelCallError('The model provider answered without a message');
  return {
    message: { role: 'assistant', content: message.content ?? null, tool_calls: message.tool_calls?.length ? message.tool_calls : undefined },
    usage: pricedUsage(model, usageOf(model.provider, data) ?? {}),
  };
}

function toAnthropic(messages: ChatMessage[]) {
  const system = messages
    .filter((m) => m.role === 'system')
    .map((m) => m.content ?? '')
    .join('\n\n');
  const out: Array<{ role: 'user' | 'assistant'; content: unknown[] }> = [];
  const push = (role: 'user' | 'assistant', block: unknown) => {
    const last = out[out.length - 1];
    if (last && last.role === role) last.content.push(block);
    else out.push({ role, content: [block] });
  };
  for (const m of messages) {
    if (m.role === 'user') push('user', { type: 'text', text: m.content ?? '' });
    if (m.role === 'tool') push('user', { type: 'tool_result', tool_use_id: m.tool_call_id, content: m.content ?? '' });
    if (m.role === 'assistant') {
      if (m.content) push('assistant', { type: 'text', text: m.content });
      for (const c of m.tool_calls ?? []) {
        push('assistant', { type: 'tool_use', id: c.id, name: c.function.name, input: JSON.parse(c.function.arguments || '{}') });
      }
    }
  }
  return { system, messages: out };
}

async function anthropic(model: ModelConfig, messages: ChatMessage[], tools: ToolDef[], dispatcher: Dispatcher, signal?: AbortSignal): Promise<Completion> {
  const { system, messages: converted } = toAnthropic(messages);
  const data = await postJson(
    `${model.baseUrl}/v1/messages`,
    { 'x-api-key': model.apiKey ?? '', 'anthropic-version': '2023-06-01' },
    {
      model: model.model,
      max_tokens: 8192,
      system,
      messages: converted,
      ...(tools.length ? { tools: tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.parameters })) } : {}),
    },
    model,
    dispatcher,
    signal,
  );
  const blocks: Array<{ type: string; text?: string; id?: string; name?: string; input?: unknown }> = data?.content ?? [];
  const text = blocks
    .filter((b) => b.type === 'text')
    .map((b) => b.text)
    .join('');
  const calls: ToolCall[] = blocks
    .filter((b) => b.type === 'tool_use')
    .map((b) => ({ id: b.id!, type: 'function', function: { name: b.name!, arguments: JSON.stringify(b.input ?? {}) } }));
  return {
    message: { role: 'assistant', content: text || null, tool_calls: calls.length ? calls : undefined },
    usage: pricedUsage(model, usageOf(model.provider, data) ?? {}),
  };
}

/** One model call. Every failure is a ModelCallError whose message names no secret of the model. */
export async function complete(
  model: ModelConfig,
  messages: ChatMessage[],
  tools: ToolDef[],
  dispatcher: Dispatcher,
  signal?: AbortSignal,
): Promise<Completion> {
  try {
    return await (model.provider === 'anthropic' ? anthropic(model, messages, tools, dispatcher, signal) : openAi(model, messages, tools, dispatcher, signal));
  } catch (err) {
    // Providers echo what they were sent (a 401 quoting the Authorization header), and a proxy's
    // refusal may quote its URL: the message is redacted before anyone stores or shows it.
    const message = err instanceof ModelCallError ? err.message : `The model call failed: ${(err as Error).message}`;
    throw new ModelCallError(redact(message, modelSecrets(model)));
  }
}
