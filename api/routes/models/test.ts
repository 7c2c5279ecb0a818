import { problem } from '../../../shared/errors.ts';
import { testResult } from '../../../shared/models/model.ts';
import { testCompletion } from '../../../shared/models/outbound.ts';
import { resolveModelById } from '../../../shared/models/resolve.ts';
import { callOut } from '../../resources/models.ts';
import { defineRoute } from '../../route.ts';
import { modelTestSchema } from './test-unsaved.ts';

export default defineRoute<unknown, unknown, { id: string }>({
  method: 'post',
  path: '/api/models/:id/test',
  operationId: 'testModel',
  summary: 'Test a saved model: one real, minimal call to its provider',
  description:
    "As `POST /api/models/test`, with the model's saved key (or its credential's) and its proxy (else the organization's default " +
    'proxy). 200 either way; `ok: false` names what the provider answered.',
  tag: 'Models',
  auth: 'any',
  context: 'org',
  scope: 'models:write',
  rateLimit: { points: 5, duration: 60, by: 'identity' },
  params: { type: 'object', required: ['id'], properties: { id: { type: 'string' } } },
  responses: { 200: { description: 'The test result', schema: modelTestSchema } },
  async handler(ctx, { params }) {
    const model = await resolveModelById(ctx.services.knex, ctx.services.config, ctx.state.tenancy!.org!.id, params.id);
    if (!model) throw problem('not_found', 'No such model');
    const r = await callOut(ctx, model.baseUrl, { proxyUrl: model.proxyUrl }, (d) => testCompletion(d, model, model.model));
    ctx.body = testResult('model_test', r, { model: typeof r.json?.model === 'string' ? r.json.model : model.model });
  },
});
