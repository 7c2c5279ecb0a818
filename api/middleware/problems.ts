// The one place errors become responses: RFC 9457 problem documents (SPEC 7).
import type { Next } from 'koa';
import { ProblemError, kebab, problem } from '../../shared/errors.ts';
import type { AppContext } from '../context.ts';

export function problemBody(ctx: AppContext, err: ProblemError): Record<string, unknown> {
  const body: Record<string, unknown> = {
    type: `${ctx.services.config.publicUrl}/api/docs/errors/${kebab(err.code)}`,
    title: err.title,
    status: err.status,
    detail: err.detail,
    instance: `urn:request:${ctx.state.requestId}`,
    code: err.code,
    request_id: ctx.state.requestId,
  };
  if (err.param) body.param = err.param;
  if (err.retryAfter !== undefined) body.retry_after = err.retryAfter;
  if (err.errors) body.errors = err.errors;
  return body;
}

function toProblem(err: unknown): ProblemError {
  if (err instanceof ProblemError) return err;
  const e = err as { status?: number; expose?: boolean; message?: string; type?: string };
  // Errors raised by Koa or its body helpers carry an HTTP status.
  if (e?.status === 413 || e?.type === 'entity.too.large') return problem('payload_too_large');
  if (e?.status === 415) return problem('unsupported_media_type');
  if (e?.status === 404) return problem('not_found');
  if (e?.status === 405) return problem('method_not_allowed');
  return problem('internal_error', 'The server failed to handle the request; quote the request id when reporting it.');
}

export async function problems(ctx: AppContext, next: Next): Promise<void> {
  try {
    await next();
    if (ctx.status === 404 && ctx.body === undefined) {
      throw problem('not_found', `No route matches ${ctx.method} ${ctx.path}`);
    }
  } catch (err) {
    const p = toProblem(err);
    if (p.code === 'internal_error') {
      ctx.services.log.error({ err, requestId: ctx.state.requestId, method: ctx.method, path: ctx.path }, 'request failed');
    }
    renderProblem(ctx, p);
  }
}

/** Writes the problem as the response: status, headers and the RFC 9457 body. */
export function renderProblem(ctx: AppContext, p: ProblemError): void {
  ctx.status = p.status;
  for (const [k, v] of Object.entries(p.headers)) ctx.set(k, v);
  if (p.retryAfter !== undefined) ctx.set('Retry-After', String(p.retryAfter));
  if (p.status === 401) ctx.set('WWW-Authenticate', 'Bearer');
  ctx.type = 'application/problem+json';
  ctx.body = JSON.stringify(problemBody(ctx, p));
}
