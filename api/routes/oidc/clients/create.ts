import { problem } from '../../../../shared/errors.ts';
import { newId, newToken, randomBase62 } from '../../../../shared/ids.ts';
import { type ClientLevel, type OAuthClientRow, permissionScopes } from '../../../../shared/oidc/clients.ts';
import { clientDto, clientSchema } from '../../../../shared/oidc/model.ts';
import { boundSpaceId } from '../../../middleware/authenticate.ts';
import { SPACE_ID } from '../../../middleware/tenancy.ts';
import type { AppContext } from '../../../context.ts';
import { sealKey } from '../../../resources/secrets.ts';
import { defineRoute } from '../../../route.ts';
import { assertMayManageInstanceClients, assertRedirectUris, assertScopesForLevel, canActInSpace, clientFields } from './_access.ts';

interface Body {
  name: string;
  level?: ClientLevel;
  redirect_uris?: string[];
  scopes?: string[];
  allowSignup?: boolean;
  public?: boolean;
}

/** The space of a space-level client, once `assertClientSpace` let the request through. */
function clientSpace(ctx: AppContext): string {
  return boundSpaceId(ctx.state.auth!) ?? ctx.get('X-Space-Id');
}

/**
 * The route's context is the organization, so X-Space-Id is checked here with the rules of
 * space-scoped routes (SPEC 5.2): an API key is pinned to its space, a session (or an instance-
 * or org-level token) must name one it holds a role in.
 */
async function assertClientSpace(ctx: AppContext): Promise<void> {
  const pinned = boundSpaceId(ctx.state.auth!);
  const header = ctx.get('X-Space-Id');
  if (pinned) {
    if (header && header !== pinned) throw problem('forbidden', { detail: 'This credential is pinned to another space', param: 'X-Space-Id' });
  } else if (!header) {
    throw problem('space_required', { detail: 'A space-level client needs X-Space-Id', param: 'X-Space-Id' });
  } else if (!SPACE_ID.test(header)) {
    const message = 'X-Space-Id must be a space id (spc_ and 24 letters or digits)';
    throw problem('validation_failed', { detail: message, param: 'X-Space-Id', errors: [{ field: 'X-Space-Id', code: 'invalid_format', message }] });
  }
  const spaceId = pinned ?? header;
  if (!(await canActInSpace(ctx, spaceId))) throw problem('not_a_space_member', { detail: `You hold no role in space ${spaceId}`, param: 'X-Space-Id' });
}

export default defineRoute<Body>({
  method: 'post',
  path: '/api/oauth/clients',
  operationId: 'createOAuthClient',
  summary: 'Register an OAuth client; its secret is returned once',
  description:
    'Level `org` (default): tokens act for a platform user in this organization. Level `space`: tokens act for one end-user in ' +
    'the space named by `X-Space-Id` (an API key: its own space), with at most the space allowlist of scopes (others: `invalid_request`). ' +
    "Level `instance`: tokens act for any platform user; an organization owner's session only. `public: true` makes a client " +
    'without secret (PKCE, `token_endpoint_auth_method` none).',
  tag: 'OAuth clients',
  auth: 'any',
  context: 'org',
  scope: 'oauth-clients:write',
  idempotent: true,
  shownOnce: ['client_secret'],
  // Declared, so an Idempotency-Key is kept per space (api/middleware/idempotency.ts).
  headers: {
    'X-Space-Id': {
      description: 'The space of a space-level client (sessions); an API key is pinned to its own space',
      schema: { type: 'string', pattern: '^spc_[0-9A-Za-z]{24}$' },
    },
  },
  body: {
    type: 'object',
    additionalProperties: false,
    required: ['name'],
    properties: {
      ...clientFields,
      level: { enum: ['instance', 'org', 'space'], default: 'org' },
      public: { type: 'boolean', default: false, description: 'No client secret: PKCE only' },
    },
  },
  responses: { 201: { description: 'Created, with `client_secret` unless public', schema: clientSchema } },
  // Who may register a client depends on its level: a hook, so an Idempotency-Key replay checks it too.
  async authorize(ctx, { body }) {
    if (body.level === 'instance') assertMayManageInstanceClients(ctx);
    if (body.level === 'space') await assertClientSpace(ctx);
  },
  async handler(ctx, { body }) {
    const level = body.level ?? 'org';
    const redirectUris = body.redirect_uris ?? [];
    const scopes = permissionScopes(body.scopes ?? []);
    const spaceId = level === 'space' ? clientSpace(ctx) : null;
    assertRedirectUris(redirectUris);
    assertScopesForLevel(level, scopes);
    const secret = body.public ? undefined : newToken(32);
    const [row] = await ctx.services
      .knex('oauth_clients')
      .insert({
        id: newId('oac'),
        client_id: randomBase62(32),
        client_secret_sealed: secret ? sealKey(ctx, secret) : null,
        name: body.name,
        level,
        org_id: ctx.state.tenancy!.org!.id,
        space_id: spaceId,
        redirect_uris: JSON.stringify(redirectUris),
        scopes: JSON.stringify(scopes),
        allow_signup: body.allowSignup ?? false,
        created_by: ctx.state.auth!.userId,
      })
      .returning('*');
    ctx.status = 201;
    ctx.body = { ...clientDto(row as OAuthClientRow), ...(secret ? { client_secret: secret } : {}) };
  },
});
