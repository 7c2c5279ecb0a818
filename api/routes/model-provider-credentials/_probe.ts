// The provider calls of the credential routes: its models endpoint, the cheapest call that
// needs the key, through the organization's default proxy.
import { testResult, testResultSchema } from '../../../shared/models/model.ts';
import { type CallResult, listModels, type ProviderTarget } from '../../../shared/models/outbound.ts';
import { orgProxyUrl } from '../../../shared/models/resolve.ts';
import type { AppContext } from '../../context.ts';
import { callOut } from '../../resources/models.ts';

export const credentialTestSchema = testResultSchema('credential_test', {
  modelCount: { type: ['integer', 'null'], description: 'How many models the provider listed; null when the test failed' },
});

export async function listProviderModels(ctx: AppContext, target: ProviderTarget): Promise<CallResult> {
  const { knex, config } = ctx.services;
  const proxyUrl = await orgProxyUrl(knex, config, ctx.state.tenancy!.org!.id);
  const r = await callOut(ctx, target.baseUrl, { proxyUrl }, (d) => listModels(d, target));
  if (!r.error && !Array.isArray(r.json?.data)) return { ...r, json: undefined, error: 'The answer has no `data` list of models' };
  return r;
}

export function credentialTestResult(r: CallResult) {
  return testResult('credential_test', r, { modelCount: r.error ? null : (r.json.data as unknown[]).length });
}
