import { withoutDisabledScopes } from '../../../shared/modules.ts';
import { grantableBy } from '../../../shared/identity/api-keys.ts';
import { orgScopes } from '../../../shared/identity/tenancy.ts';
import { defineRoute } from '../../route.ts';

export default defineRoute({
  method: 'get',
  path: '/api/api-keys/available-scopes',
  operationId: 'listAvailableApiKeyScopes',
  summary: 'Scopes the caller can put on a key in this space',
  tag: 'API keys',
  auth: 'session',
  context: 'space',
  scope: 'api-keys:create',
  responses: {
    200: {
      description: 'Scopes',
      schema: { type: 'object', required: ['scopes'], properties: { scopes: { type: 'array', items: { type: 'string' } } } },
    },
  },
  async handler(ctx) {
    const { space, scopes, orgRole } = ctx.state.tenancy!;
    ctx.body = { scopes: space!.kind === 'personal' ? [] : grantableBy(scopes, withoutDisabledScopes(orgScopes(orgRole), ctx.services.config.modules)) };
  },
});
