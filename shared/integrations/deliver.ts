// Credential delivery (SPEC 1, 2.12, 8.5; DESIGN.md 5, 7): one HTTP call to a third-party API
// with a connection's credential injected, for the sidecar's `api_call` tool and the credential
// proxy alike. The URL must match the auth's `authorized_uris`, those the connection was granted
// when made (a newer version reaching further needs a reconnect), and a narrower list when the
// agent sets one; the egress policy is applied at every call (and again at connect time, so DNS
// rebinding gains nothing); no redirect is followed; request and response bytes and the time are
// capped; credential values the target echoes are replaced by `[redacted]`.
import { request } from 'undici';
import type { Config, CredentialProxyLimits } from '../config.ts';
import { checkDestination, EgressError, pooledEgressDispatcher } from '../egress.ts';
import { readCapped } from '../http/read-capped.ts';
import type { IntegrationAuth } from './auths.ts';
import { type ConnectionRow, grantedUris } from './connections.ts';
import { internalHostsAllowed, matchesAuthorizedUri } from './uris.ts';

export const REDACTED = '[redacted]';
export const DELIVERY_TIMEOUT_MS = 30_000;
/** Shorter values are too likely to occur by chance to be worth hiding. */
const MIN_REDACTED_LENGTH = 4;

export type DeliveryRefusal =
  | 'unauthorized_target'
  | 'blocked_address'
  | 'request_too_large'
  | 'response_too_large'
  | 'target_unreachable'
  | 'no_delivery'
  /** An answer that could carry the credential unseen: compressed, or binary echoing it. */
  | 'response_withheld';

/** Why a call was not made or not answered; `message` names no credential. */
export class DeliveryRefused extends Error {
  override name = 'DeliveryRefused';
  readonly reason: DeliveryRefusal;
  constructor(reason: DeliveryRefusal, message: string) {
    super(message);
    this.reason = reason;
  }
}

export interface DeliveryCall {
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

export interface DeliveryAnswer {
  status: number;
  /** Lower-cased names; `set-cookie` removed; values redacted. */
  headers: Record<string, string>;
  /** Redacted when textual (text/*, JSON, XML, JavaScript, form); binary bodies unchanged. */
  body: Buffer;
}

const TEMPLATE = /\{\$credential\.([A-Za-z0-9_.-]+)\}/g;
/** Content types searched for echoed credentials (others are passed as bytes). */
export const TEXTUAL = /^\s*(text\/|application\/([\w.+-]*\+)?(json|xml|javascript|x-www-form-urlencoded)\b)/i;
/** Headers a caller may not set: they belong to the connection or to the transport. */
const HOP_BY_HOP = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive', 'upgrade', 'proxy-authorization', 'te', 'trailer']);

/** The header the auth's `delivery.http` makes of the credential. */
export function credentialHeader(auth: IntegrationAuth, credential: Record<string, string>): [name: string, value: string] {
  const d = auth.delivery;
  if (!d?.name) throw new DeliveryRefused('no_delivery', `The auth "${auth.key}" declares no delivery.http header`);
  const fields = Object.keys(credential);
  const template = d.value ?? (fields.length === 1 ? `{$credential.${fields[0]}}` : '');
  const value = template.replace(TEMPLATE, (_, f: string) => credential[f] ?? '');
  return [d.name, `${headerPrefix(d.name, d.prefix)}${value}`];
}

/** An HTTP token (RFC 9110 5.6.2): a bare auth scheme such as `Bearer`. */
const AUTH_SCHEME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * `prefix` is literal, except that a bare auth scheme before an Authorization header's value gets
 * the one space the header's grammar needs: packages in the field write `prefix: "Bearer"`, and
 * the format's own runtime sends `Bearer <token>` for it. Decided on the declared prefix alone,
 * never on the secret; composite prefixes (`Token token=`) and other headers stay as written.
 */
function headerPrefix(name: string, prefix = ''): string {
  const authorization = /^(proxy-)?authorization$/i.test(name);
  return authorization && AUTH_SCHEME.test(prefix) ? `${prefix} ` : prefix;
}

/** Every credential value (and the injected header value) replaced by `[redacted]` in `text`. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of [...secrets].sort((a, b) => b.length - a.length)) {
    if (s.length >= MIN_REDACTED_LENGTH) out = out.split(s).join(REDACTED);
  }
  return out;
}

/** The values to hide for a credential: each field and the header value built from them. */
export function secretsOf(auth: IntegrationAuth, credential: Record<string, string>): string[] {
  const values = Object.values(credential).map(String);
  try {
    values.push(credentialHeader(auth, credential)[1]);
  } catch {
    // no delivery header: the fields alone
  }
  return values;
}

/** What delivery reads of a connection: what it was granted. */
export type ConnectionGrant = Pick<ConnectionRow, 'integration_version' | 'authorized_uris'>;

/**
 * Why the connection's credential may not go to `url`, or undefined when it may: the URL must
 * match the auth's authorized_uris as now published, those the connection was granted, and the
 * agent's narrower list when it sets one.
 */
export function refusedTarget(url: string, auth: IntegrationAuth, connection: ConnectionGrant, narrowerUris?: readonly string[]): string | undefined {
  if (!matchesAuthorizedUri(url, auth.authorizedUris) || (narrowerUris?.length && !matchesAuthorizedUri(url, narrowerUris))) {
    return `${url} is outside the URLs this integration may reach`;
  }
  if (!matchesAuthorizedUri(url, grantedUris(connection))) {
    const version = connection.integration_version ? `version ${connection.integration_version}` : 'the draft';
    return `${url} is outside the URLs this connection was granted (made under ${version} of the integration); its \
owner reconnects it to allow the current version's`;
  }
  return undefined;
}

/** Private hosts a delivery may reach: named literally by the auth and by the connection's grant, and allowed by the instance. */
export function deliveryInternalHosts(auth: IntegrationAuth, connection: ConnectionGrant, configured: readonly string[]): string[] {
  return internalHostsAllowed(grantedUris(connection), internalHostsAllowed(auth.authorizedUris, configured));
}

/**
 * Makes the call with the credential injected. Throws DeliveryRefused when the target is not
 * allowed, a cap is exceeded or the target cannot be reached.
 */
export async function callWithCredential(
  config: Pick<Config, 'egressAllowInternalHosts' | 'extraCaCertsPath'>,
  limits: Pick<CredentialProxyLimits, 'max_request_bytes' | 'max_response_bytes'>,
  target: { auth: IntegrationAuth; credential: Record<string, string>; connection: ConnectionGrant; narrowerUris?: readonly string[] },
  call: DeliveryCall,
  signal?: AbortSignal,
): Promise<DeliveryAnswer> {
  const { auth, credential, connection, narrowerUris } = target;
  let url: string;
  try {
    url = new URL(call.url).href;
  } catch {
    throw new DeliveryRefused('unauthorized_target', `${call.url} is not an absolute URL`);
  }
  const refused = refusedTarget(url, auth, connection, narrowerUris);
  if (refused) throw new DeliveryRefused('unauthorized_target', refused);
  const body = call.body === undefined ? undefined : Buffer.from(call.body);
  if (body && body.length > limits.max_request_bytes)
    throw new DeliveryRefused('request_too_large', `The request body is over ${limits.max_request_bytes} bytes`);
  const allowInternal = deliveryInternalHosts(auth, connection, config.egressAllowInternalHosts);
  try {
    await checkDestination(url, { allowInternalHosts: allowInternal });
  } catch (err) {
    if (err instanceof EgressError) throw new DeliveryRefused('blocked_address', `The target is not allowed: ${err.message}`);
    throw err;
  }
  const [name, value] = credentialHeader(auth, credential);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(call.headers ?? {})) {
    const lower = k.toLowerCase();
    if (!HOP_BY_HOP.has(lower) && lower !== name.toLowerCase()) headers[lower] = v;
  }
  headers[name.toLowerCase()] = value;
  // Answers are searched for echoed credentials: they must come uncompressed.
  headers['accept-encoding'] = 'identity';
  const secrets = secretsOf(auth, credential);
  try {
    const res = await request(url, {
      method: call.method.toUpperCase() as never,
      headers,
      body,
      // Kept-alive connections of this call's egress decision (shared/egress.ts), each made
      // through the egress lookup; request() follows no redirect: a 3xx is handed back as it is.
      dispatcher: pooledEgressDispatcher(allowInternal, DELIVERY_TIMEOUT_MS, config.extraCaCertsPath),
      headersTimeout: DELIVERY_TIMEOUT_MS,
      bodyTimeout: DELIVERY_TIMEOUT_MS,
      signal,
    });
    const raw = await readCapped(
      res.body,
      limits.max_response_bytes,
      () => new DeliveryRefused('response_too_large', `The target's answer is over ${limits.max_response_bytes} bytes`),
    );
    const answerHeaders: Record<string, string> = {};
    for (const [k, v] of Object.entries(res.headers)) {
      if (k === 'set-cookie' || v === undefined) continue;
      answerHeaders[k] = redact(Array.isArray(v) ? v.join(', ') : v, secrets);
    }
    const encoding = (answerHeaders['content-encoding'] ?? 'identity').trim().toLowerCase();
    if (encoding !== 'identity') {
      throw new DeliveryRefused(
        'response_withheld',
        `The target answered ${encoding}-encoded although asked for identity; it cannot be searched for echoed credentials`,
      );
    }
    // Text is redacted; a binary body passes as it is unless it echoes a credential, then it is withheld.
    if (TEXTUAL.test(answerHeaders['content-type'] ?? 'text/plain')) {
      return { status: res.statusCode, headers: answerHeaders, body: Buffer.from(redact(raw.toString('utf8'), secrets)) };
    }
    if (secrets.some((s) => s.length >= MIN_REDACTED_LENGTH && raw.includes(s))) {
      throw new DeliveryRefused('response_withheld', 'The target answered a binary body that contains the credential');
    }
    return { status: res.statusCode, headers: answerHeaders, body: raw };
  } catch (err) {
    if (err instanceof DeliveryRefused) throw err;
    throw new DeliveryRefused('target_unreachable', `The target could not be reached: ${redact((err as Error).message, secrets)}`);
  }
}
