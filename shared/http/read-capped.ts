// Reading what an upstream answers (a model provider, a token endpoint, an integration's API,
// GitHub, an MCP server) with a ceiling. An upstream is a third party, often one a tenant
// configured: a body that never ends must fail the call, not grow this process's memory until
// it dies. Every upstream read goes through here; the caller says what an answer over the
// ceiling becomes (a tool result, a problem, a run's error), naming the limit.

/** An answer over the ceiling; the message names the limit. */
export class AnswerTooLarge extends Error {
  override name = 'AnswerTooLarge';
  readonly limit: number;
  constructor(limit: number, message = `The answer is over ${limit} bytes`) {
    super(message);
    this.limit = limit;
  }
}

/** A response body as undici's request() and Node streams give it. */
type Body = AsyncIterable<Uint8Array> & { destroy?: (err?: Error) => unknown };

/**
 * The whole body, at most `limit` bytes. Past the limit the body is destroyed (the connection
 * goes, the rest is never read) and `tooLarge()` is thrown.
 */
export async function readCapped(body: Body, limit: number, tooLarge: () => Error = () => new AnswerTooLarge(limit)): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > limit) {
      body.destroy?.();
      throw tooLarge();
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

/** Statuses whose responses have no body (the Response constructor refuses one). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/**
 * `res` with a body that errors with `tooLarge()` past `limit` bytes (and cancels the
 * upstream), for answers read by code we do not control (an SDK reading a fetch Response).
 */
export function cappedResponse(res: Response, limit: number, tooLarge: () => Error = () => new AnswerTooLarge(limit)): Response {
  if (!res.body || NULL_BODY.has(res.status)) return res;
  let size = 0;
  const body = res.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        size += chunk.byteLength;
        if (size > limit) controller.error(tooLarge());
        else controller.enqueue(chunk);
      },
    }),
  );
  return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
}
