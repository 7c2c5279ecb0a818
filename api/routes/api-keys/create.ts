import { withoutDisabledScopes } from '../../../shared/modules.ts';
import { problem } from '../../../shared/errors.ts';
import { grantableBy, insertApiKey, keyScopesFor } from '../../../shared/identity/api-keys.ts';
import { orgScopes } from '../../../shared/identity/tenancy.ts';
import { defineRoute } from '../../route.ts';
import { dateTime, name } from '../../schemas.ts';
import { apiKeyDto, apiKeySchema } from '../../../shared/identity/model.ts';

export default defineRoute<{ name: string; scopes?: string[]; expiresAt?: string | null }>({
  method: 'post',
  path: '/api/api-keys',
  operationId: 'createApiKey',
  summary: 'Create an API key in the selected space',
  description:
    'Session only (an API key cannot create a key), with `api-keys:create`. Scopes the caller does not hold are dropped silently; a scope no key can carry is 400 `invalid_request`; omitted or empty = every grantable scope the caller holds. The full `key` is returned once.',
  tag: 'API keys',
  auth: 'session',
  context: 'space',
  scope: 'api-keys:create',
  body: {
    type: 'object',
    additionalProperties: false,
    required: ['name'],
    properties: {
      name,
      scopes: { type: 'array', items: { type: 'string' }, uniqueItems: true },
      expiresAt: { anyOf: [dateTime, { type: 'null' }] },
    },
  },
  responses: { 201: { description: 'Created; `key` is shown this once', schema: apiKeySchema } },
  async handler(ctx, { body }) {
    const { space, scopes: held, org, orgRole } = ctx.state.tenancy!;
    if (space!.kind === 'personal') throw problem('personal_space_takes_no_keys', 'API keys cannot be created in a personal space');
    const expiresAt = body.expiresAt ? new Date(body.expiresAt) : null;
    if (expiresAt && expiresAt.getTime() <= Date.now()) {
      throw problem('validation_failed', {
        detail: 'expiresAt must be in the future',
        errors: [{ field: 'expiresAt', code: 'out_of_range', message: 'expiresAt must be in the future' }],
      });
    }
    const scopes = keyScopesFor(body.scopes, grantableBy(held, withoutDisabledScopes(orgScopes(orgRole), ctx.services.config.modules)));
    const { key, row } = await insertApiKey(ctx.services.knex, {
      orgId: org!.id,
      spaceId: space!.id,
      userId: ctx.state.auth!.userId,
      name: body.name,
      scopes,
      expiresAt,
    });
    ctx.status = 201;
    ctx.body = { ...apiKeyDto(row), key };
  },
});
