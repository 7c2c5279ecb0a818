import type { Next } from 'koa';
import { newId } from '../../shared/ids.ts';
import type { AppContext } from '../context.ts';

/** Every response, errors and unknown routes included, carries `Request-Id: req_...`. */
export async function requestId(ctx: AppContext, next: Next): Promise<void> {
  ctx.state.requestId = newId('req');
  ctx.set('Request-Id', ctx.state.requestId);
  await next();
}
