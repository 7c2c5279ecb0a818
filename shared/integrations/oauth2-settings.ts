// How an OAuth 2 auth describes its provider. Two shapes are read (shared/integrations/README.md,
// "OAuth 2 connections"):
// - the package format's own, as the OAuth integrations in the field ship it (first-class):
//   `authorization_endpoint`, `token_endpoint`, `default_scopes`, `token_endpoint_auth_method`,
//   `code_challenge_methods_supported`, `authorization_params`, and the scope separator under
//   `_meta["dev.appstrate/oauth"].scope_separator` (or `dev.service/oauth`);
// - DESIGN.md 7's `oauth2: {authorization_url, token_url, scopes, scope_separator, pkce}`, written
//   before there were real packages (client_secret_basic, PKCE unless `pkce: false`).
// An auth declares one of them; import refuses both at once.
import type { ProblemFieldError } from '../errors.ts';
import { vendorMeta } from '../packages/vendor-meta.ts';

/** How the client authenticates at the token endpoint (RFC 8414 names). */
export const TOKEN_ENDPOINT_AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'none'] as const;
export type TokenEndpointAuthMethod = (typeof TOKEN_ENDPOINT_AUTH_METHODS)[number];

/** Authorization request parameters the service sets itself: `authorization_params` may not name them. */
export const AUTHORIZATION_PARAMS_RESERVED = [
  'response_type',
  'client_id',
  'redirect_uri',
  'scope',
  'state',
  'code_challenge',
  'code_challenge_method',
] as const;

/** The provider of an auth with `type: 'oauth2'`, whichever shape described it. */
export interface OAuth2Settings {
  authorizationUrl: string;
  tokenUrl: string;
  /** Asked for on every connection (`default_scopes`, `oauth2.scopes`). */
  scopes: string[];
  /** Joins scopes in the authorization request; default ' '. */
  scopeSeparator: string;
  /** PKCE S256. */
  pkce: boolean;
  /** Default client_secret_basic (RFC 6749 2.3.1, and what the format assumes when unsaid). */
  tokenEndpointAuthMethod: TokenEndpointAuthMethod;
  /** Added to the authorization request (e.g. Google's `access_type: offline`). */
  authorizationParams: Record<string, string>;
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : []);

/** The scope separator the auth names under `_meta`, else undefined. */
function metaScopeSeparator(a: Record<string, any>): string | undefined {
  const meta = vendorMeta(a._meta, 'oauth') as { scope_separator?: unknown } | undefined;
  return typeof meta?.scope_separator === 'string' ? meta.scope_separator : undefined;
}

/**
 * The provider settings of a (validated) auth, or undefined when it is not `oauth2` or names no
 * endpoints (an auth that only gives an `issuer` for discovery: not supported, it cannot connect).
 */
export function oauth2SettingsOf(a: Record<string, any>): OAuth2Settings | undefined {
  if (a?.type !== 'oauth2') return undefined;
  if (typeof a.authorization_endpoint === 'string' && typeof a.token_endpoint === 'string') {
    const methods = a.code_challenge_methods_supported;
    return {
      authorizationUrl: a.authorization_endpoint,
      tokenUrl: a.token_endpoint,
      scopes: strings(a.default_scopes),
      scopeSeparator: metaScopeSeparator(a) ?? ' ',
      // As the format's runtime: S256 unless the provider lists methods without it.
      pkce: !Array.isArray(methods) || methods.includes('S256'),
      tokenEndpointAuthMethod: (a.token_endpoint_auth_method as TokenEndpointAuthMethod | undefined) ?? 'client_secret_basic',
      authorizationParams: { ...(a.authorization_params ?? {}) },
    };
  }
  if (a.oauth2) {
    return {
      authorizationUrl: String(a.oauth2.authorization_url),
      tokenUrl: String(a.oauth2.token_url),
      scopes: strings(a.oauth2.scopes),
      scopeSeparator: typeof a.oauth2.scope_separator === 'string' ? a.oauth2.scope_separator : (metaScopeSeparator(a) ?? ' '),
      pkce: a.oauth2.pkce !== false,
      tokenEndpointAuthMethod: 'client_secret_basic',
      authorizationParams: {},
    };
  }
  return undefined;
}

/** What import refuses in an auth's provider description, beyond the schema. */
export function oauth2ManifestErrors(key: string, a: Record<string, any>): ProblemFieldError[] {
  const errors: ProblemFieldError[] = [];
  const at = `manifest.auths.${key}`;
  const hasAuthorization = a.authorization_endpoint !== undefined;
  const hasToken = a.token_endpoint !== undefined;
  if (hasAuthorization !== hasToken) {
    const field = `${at}.${hasAuthorization ? 'token_endpoint' : 'authorization_endpoint'}`;
    errors.push({ field, code: 'required', message: `${field} is required: authorization_endpoint and token_endpoint go together` });
  }
  if (a.oauth2 !== undefined && (hasAuthorization || hasToken)) {
    errors.push({
      field: `${at}.oauth2`,
      code: 'invalid_value',
      message: `${at} describes its provider twice: keep authorization_endpoint and token_endpoint (the package format's shape) or oauth2, not both`,
    });
  }
  for (const name of Object.keys(a.authorization_params ?? {})) {
    if ((AUTHORIZATION_PARAMS_RESERVED as readonly string[]).includes(name)) {
      const field = `${at}.authorization_params.${name}`;
      errors.push({ field, code: 'invalid_value', message: `${field} is set by the service itself and cannot be given` });
    }
  }
  return errors;
}
