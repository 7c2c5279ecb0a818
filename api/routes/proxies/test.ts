import { testResult, testResultSchema } from '../../../shared/models/model.ts';
import { callProvider } from '../../../shared/models/outbound.ts';
import { callOut } from '../../resources/models.ts';
import { orgProxy } from '../../resources/proxies.ts';
import { unseal } from '../../resources/secrets.ts';
import { defineRoute } from '../../route.ts';
import { idParams } from './_shared.ts';

export default defineRoute<{ url?: string }, unknown, { id: string }>({
  method: 'post',
  path: '/api/proxies/:id/test',
  operationId: 'testProxy',
  summary: 'Test a proxy: one real GET through it',
  description:
    "Sends `GET url` (default: OpenRouter's public model list, `{OPENROUTER_API_URL}/models`) through the proxy, under the egress " +
    'policy. `ok: true` when the target answered through the proxy, whatever its status (`status`); `ok: false` names why not ' +
    '(the proxy refused the tunnel, e.g. 407, or did not answer). 200 either way.',
  tag: 'Proxies',
  auth: 'any',
  context: 'org',
  scope: 'proxies:write',
  rateLimit: { points: 5, duration: 60, by: 'identity' },
  params: idParams,
  body: {
    type: 'object',
    additionalProperties: false,
    properties: { url: { type: 'string', format: 'uri', maxLength: 2000, description: 'The target to reach through the proxy' } },
  },
  responses: {
    200: { description: 'The test result', schema: testResultSchema('proxy_test', { url: { type: 'string', description: 'The target reached' } }) },
  },
  async handler(ctx, { body, params }) {
    const proxy = await orgProxy(ctx, params.id);
    const fallback = `${ctx.services.config.openrouterApiUrl}/models`;
    const url = body?.url ?? fallback;
    // The default target is the operator's setting: its host may be internal.
    const operatorHosts = body?.url ? [] : [new URL(fallback).hostname];
    const r = await callOut(ctx, url, { proxyUrl: unseal(ctx, proxy.url_enc), operatorHosts }, (d) => callProvider(d, url, { method: 'GET' }));
    // Any HTTP answer from the target means the proxy carried the request.
    ctx.body = testResult('proxy_test', r.status === null ? r : { ...r, error: undefined }, { url });
  },
});
