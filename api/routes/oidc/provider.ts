// The authorization server (SPEC 4.2, 5.5; DESIGN.md section 7): oidc-provider configured once
// per API process, its state in Postgres (shared/oidc/adapter.ts), its keys sealed in Postgres
// (shared/oidc/keys.ts). Every option that differs from the library's default is set and
// explained here.
import { createHmac } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type Provider from 'oidc-provider';
import type { Configuration, KoaContextWithOIDC } from 'oidc-provider';
import { SCOPES } from '../../../shared/permissions.ts';
import { accountClaims } from '../../../shared/oidc/accounts.ts';
import { postgresAdapter } from '../../../shared/oidc/adapter.ts';
import { DEVICE_CODE_GRANT, OIDC_SCOPES } from '../../../shared/oidc/clients.ts';
import { loadSigningKeys } from '../../../shared/oidc/keys.ts';
import { ACCESS_TOKEN_TTL_SECONDS, apiAudience } from '../../../shared/oidc/tokens.ts';
import type { Services } from '../../services.ts';
import { unstorable, unstorableField } from '../../middleware/storable-text.ts';
import { INTERACTION_PATH, ROUTES } from './_paths.ts';
import { deviceSuccessPage, deviceUserCodeConfirmPage, deviceUserCodeInputPage, errorPage, logoutPage, signedOutPage } from './pages.ts';

/** The authorization server's own sign-in session (not a dashboard session). */
export const SESSION_COOKIE = 'svc.oidc_session';

export interface OidcServer {
  provider: Provider;
  /** oidc-provider's own Koa app as a node handler: our routes hand it the request. */
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
}

type Errors = typeof import('oidc-provider').errors;

/**
 * What dynamic registration takes as a redirect URI (published by endpoints.ts): http(s), a host
 * that is an ASCII name whose last label holds a letter, an IPv4 address or [::1], a port up to
 * 65535, a path or query without a fragment. Every such string is a web URI oidc-provider takes;
 * the URL parser alone also takes hosts no pattern can describe exactly (IDNs, `*`), which a
 * client's published contract would then disagree with (issue 30).
 */
export const REGISTERED_REDIRECT_URI =
  '^https?://(([A-Za-z0-9-]{1,63}\\.)*[A-Za-z0-9-]{0,62}[A-Za-z][A-Za-z0-9-]{0,62}' +
  '|((25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\\.){3}(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])|\\[::1\\])' +
  '(:([0-9]{1,4}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))?([/?][^#\\s\\x00]*)?$';
const REGISTERED_REDIRECT = new RegExp(REGISTERED_REDIRECT_URI);

/**
 * The storage refusing text Postgres cannot store (issue 30; api/middleware/storable-text.ts):
 * oidc-provider reads its requests itself, so what reaches the adapter was not checked by the
 * router. Stored metadata or parameters holding it are a 400 (`invalid_client_metadata` for a
 * registered client, else `invalid_request`), where they were a 500; an id holding it names
 * nothing. A registered client's redirect URIs must also be ones `REGISTERED_REDIRECT_URI` takes.
 */
function storableAdapter(Base: ReturnType<typeof postgresAdapter>, errors: Errors) {
  return class StorableAdapter extends Base {
    override async upsert(id: string, payload: Record<string, any>, expiresIn?: number): Promise<void> {
      const found = unstorableField(payload);
      if (found) {
        const message = `${found.field} holds ${found.what}, which cannot be stored`;
        throw this.model === 'Client' ? new errors.InvalidClientMetadata(message) : new errors.InvalidRequest(message);
      }
      const uris: unknown[] = this.model === 'Client' && Array.isArray(payload.redirect_uris) ? payload.redirect_uris : [];
      const at = uris.findIndex((uri) => typeof uri !== 'string' || !REGISTERED_REDIRECT.test(uri));
      if (at >= 0)
        throw new errors.InvalidClientMetadata(`redirect_uris.${at} must be an http(s) URL with an ASCII host name, an IPv4 address or [::1], and no fragment`);
      return super.upsert(id, payload, expiresIn);
    }

    override async find(id: string) {
      return unstorable(id) ? undefined : super.find(id);
    }

    override async findByUserCode(userCode: string) {
      return unstorable(userCode) ? undefined : super.findByUserCode(userCode);
    }

    override async findByUid(uid: string) {
      return unstorable(uid) ? undefined : super.findByUid(uid);
    }
  };
}

async function createServer(services: Services): Promise<OidcServer> {
  const { config, knex } = services;
  // The library loads with the first OAuth request, not with the API (issue 18).
  const { default: Provider, errors } = await import('oidc-provider');
  const audience = apiAudience(config.publicUrl);
  const keys = await loadSigningKeys(knex, config.secretsKey);
  // Cookie signing keys derived from SECRETS_KEY: stable across restarts and replicas.
  const cookieKey = createHmac('sha256', config.secretsKey ?? Buffer.alloc(32))
    .update('oidc-cookies')
    .digest('base64url');
  // The API's access tokens also say which identity scopes were granted: UserInfo reads them
  // (endpoints.ts), as oidc-provider's own serves only tokens without an audience.
  const resourceScopes = ['openid', 'email', 'profile', ...SCOPES].join(' ');
  const configuration: Configuration = {
    adapter: storableAdapter(postgresAdapter(knex, config.secretsKey), errors),
    jwks: { keys: keys as never },
    routes: ROUTES,
    // Clients come from `oauth_clients` through the adapter; none is configured statically.
    clients: [],
    extraClientMetadata: { properties: ['level', 'org_id', 'space_id', 'allow_signup'] },
    findAccount: async (_ctx, sub) => {
      const claims = await accountClaims(knex, sub);
      if (!claims) return undefined;
      return { accountId: sub, claims: async () => claims };
    },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    // Every scope a client may register: OpenID's and the service's permissions (which the API
    // resource's access tokens carry, below).
    scopes: [...OIDC_SCOPES, ...SCOPES],
    interactions: { url: (_ctx, interaction) => `${INTERACTION_PATH}/${interaction.uid}` },
    cookies: {
      keys: [cookieKey],
      names: { session: SESSION_COOKIE, interaction: 'svc.oidc_interaction', resume: 'svc.oidc_resume' },
      long: { signed: true, httpOnly: true, sameSite: 'lax' },
      short: { signed: true, httpOnly: true, sameSite: 'lax' },
    },
    // OAuth 2.1: PKCE for every authorization code, S256 only.
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: false }, // our sign-in and consent pages (interaction routes)
      deviceFlow: {
        enabled: true,
        userCodeInputSource: deviceUserCodeInputPage,
        userCodeConfirmSource: deviceUserCodeConfirmPage,
        successSource: deviceSuccessPage,
      },
      // A client introspects only its own tokens (the library's default lets any confidential
      // client read any token's claims, and anyone may register a client).
      introspection: { enabled: true, allowedPolicy: (_ctx, client, token) => token.clientId === client.clientId },
      revocation: { enabled: true },
      // SPEC 4.2: dynamic registration needs no session; such clients are instance level.
      registration: { enabled: true, initialAccessToken: false },
      rpInitiatedLogout: { enabled: true, logoutSource: logoutPage, postLogoutSuccessSource: signedOutPage },
      userinfo: { enabled: true },
      // Access tokens are ES256 JWTs for the API (SPEC 5.1), carrying the service's permissions.
      resourceIndicators: {
        enabled: true,
        defaultResource: () => audience,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => {
          if (resource !== audience) throw new errors.InvalidTarget(`the only resource is ${audience}`);
          return { scope: resourceScopes, audience, accessTokenTTL: ACCESS_TOKEN_TTL_SECONDS, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'ES256' } } };
        },
      },
    },
    // The token says which client level issued it and what it is bound to (SPEC 5.5).
    extraTokenClaims: async (ctx, token) => {
      const client = ctx.oidc.client ?? (token.clientId ? await ctx.oidc.provider.Client.find(token.clientId) : undefined);
      if (!client) return undefined;
      const meta = client.metadata() as Record<string, unknown>;
      return { lvl: meta.level, ...(meta.level !== 'instance' ? { org_id: meta.org_id } : {}), ...(meta.level === 'space' ? { space_id: meta.space_id } : {}) };
    },
    // A refresh token for every client allowed the grant (a CLI keeps working without offline_access).
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: true,
    ttl: {
      AccessToken: ACCESS_TOKEN_TTL_SECONDS,
      AuthorizationCode: 60,
      IdToken: 3600,
      DeviceCode: 600,
      Interaction: 3600,
      Grant: 30 * 24 * 3600,
      Session: 14 * 24 * 3600,
      RefreshToken: 30 * 24 * 3600,
    },
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token', DEVICE_CODE_GRANT],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
      id_token_signed_response_alg: 'ES256', // the only key type we hold
    },
    renderError: errorPage,
    // No `enableHttpPostMethods`: oidc-provider refuses it unless the session cookie is
    // SameSite=None, which a plain-http PUBLIC_URL cannot set. The POST forms of authorize and
    // sign-out reach it as the equivalent GET instead (endpoints.ts).
    // A browser client may call the token endpoint from the origins of its redirect URIs.
    clientBasedCORS: (_ctx, origin, client) => (client.redirectUris ?? []).some((uri) => new URL(uri).origin === origin),
  };
  const provider = new Provider(config.publicUrl, configuration);
  provider.proxy = config.trustProxy > 0;
  // The provider's own failures go to our log (with the request id), not to Koa's stderr printer.
  (provider as unknown as { silent: boolean }).silent = true; // v9: the provider is its own Koa app
  provider.on('server_error', (ctx, err) => {
    services.log.error({ err, requestId: ctx.res.getHeader('request-id'), path: ctx.path }, 'authorization server error');
  });
  const callback = provider.callback();
  return {
    provider,
    handle: (req, res) =>
      new Promise<void>((resolve) => {
        res.once('finish', resolve);
        res.once('close', resolve);
        callback(req, res);
      }),
  };
}

const servers = new WeakMap<Services, Promise<OidcServer>>();

/** The authorization server of this API process, created on first use (it reads its keys from Postgres). */
export function oidcServer(services: Services): Promise<OidcServer> {
  let server = servers.get(services);
  if (!server) {
    server = createServer(services);
    server.catch(() => servers.delete(services)); // a failed start is retried by the next request
    servers.set(services, server);
  }
  return server;
}

export type { KoaContextWithOIDC };
