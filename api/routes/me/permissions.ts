import { defineRoute } from '../../route.ts';

export default defineRoute({
  method: 'get',
  path: '/api/me',
  operationId: 'getCallerContext',
  summary: 'Who the caller is here and what it may do',
  description:
    'The credential, organization, space and the effective permissions in that space: for an API key, its scopes intersected ' +
    'with what its creator holds there now.',
  tag: 'Identity',
  auth: 'any',
  context: 'space',
  responses: {
    200: {
      description: 'Caller context',
      schema: {
        type: 'object',
        required: ['credential', 'userId', 'orgId', 'spaceId', 'scopes'],
        properties: {
          credential: {
            type: 'object',
            properties: {
              type: { enum: ['session', 'api_key', 'oidc'] },
              id: { type: 'string' },
              keyPrefix: { type: 'string' },
              level: { enum: ['instance', 'org', 'space'] },
            },
          },
          userId: { type: 'string' },
          orgId: { type: 'string' },
          spaceId: { type: 'string' },
          orgRole: { type: 'string' },
          scopes: { type: 'array', items: { type: 'string' } },
          endUserId: { type: ['string', 'null'] },
          viewAs: { type: ['string', 'null'] },
        },
      },
    },
  },
  handler(ctx) {
    const auth = ctx.state.auth!;
    const t = ctx.state.tenancy!;
    ctx.body = {
      credential:
        auth.kind === 'api_key'
          ? { type: 'api_key', id: auth.key.id, keyPrefix: auth.key.key_prefix }
          : auth.kind === 'oidc'
            ? { type: 'oidc', id: auth.clientId, level: auth.level }
            : { type: 'session', id: auth.session.id },
      userId: auth.userId,
      orgId: t.org!.id,
      spaceId: t.space!.id,
      orgRole: t.orgRole,
      scopes: [...t.scopes].sort(),
      endUserId: t.endUserId ?? null,
      viewAs: t.viewAs ?? null,
    };
  },
});
