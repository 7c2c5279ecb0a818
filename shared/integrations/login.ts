// The single login request of `connect.login` (SPEC 2.12): `{{field}}` placeholders replaced
// verbatim, one request, no cookie jar, no redirect followed, the egress policy at connect time,
// and only the declared `outputs` kept (cookies by name). The submitted fields are used once.
import { request } from 'undici';
import type { Config } from '../config.ts';
import { checkDestination, EgressError, egressDispatcher } from '../egress.ts';
import { failedCriterion, type LoginAnswer } from './criteria.ts';
import type { IntegrationAuth, LoginSpec } from './auths.ts';
import { internalHostsAllowed, matchesAuthorizedUri } from './uris.ts';

const LOGIN_TIMEOUT_MS = 15_000;
const MAX_BODY_BYTES = 1024 * 1024;

/** Why a login did not give a credential; the detail names the target's answer, never a field. */
export class LoginRefused extends Error {
  override name = 'LoginRefused';
}

const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}/g;

function fill(text: string, fields: Record<string, unknown>): string {
  return text.replace(PLACEHOLDER, (whole, name: string) => (name in fields ? String(fields[name]) : whole));
}

/** Replaces placeholders in every string of a JSON body (keys stay as written). */
function fillDeep(value: unknown, fields: Record<string, unknown>): unknown {
  if (typeof value === 'string') return fill(value, fields);
  if (Array.isArray(value)) return value.map((v) => fillDeep(v, fields));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fillDeep(v, fields)]));
  return value;
}

function encodeBody(spec: LoginSpec['request'], fields: Record<string, unknown>): { body?: string; contentType?: string } {
  if (spec.body === undefined || spec.body === null) return {};
  const contentType = spec.content_type ?? (typeof spec.body === 'string' ? 'text/plain' : 'application/json');
  if (typeof spec.body === 'string') return { body: fill(spec.body, fields), contentType };
  const filled = fillDeep(spec.body, fields) as Record<string, unknown>;
  if (contentType.startsWith('application/x-www-form-urlencoded')) {
    return { body: new URLSearchParams(Object.entries(filled).map(([k, v]): [string, string] => [k, String(v)])).toString(), contentType };
  }
  return { body: JSON.stringify(filled), contentType };
}

function cookiesOf(setCookie: string | string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of ([] as string[]).concat(setCookie ?? [])) {
    const [pair] = line.split(';');
    const eq = pair.indexOf('=');
    if (eq > 0) out[pair.slice(0, eq).trim()] = pair.slice(eq + 1).trim();
  }
  return out;
}

/**
 * Sends the login and returns the outputs (output name -> value). Throws LoginRefused when
 * the target refuses it or the destination is not allowed.
 */
export async function performLogin(
  config: Pick<Config, 'egressAllowInternalHosts' | 'extraCaCertsPath'>,
  auth: IntegrationAuth,
  fields: Record<string, unknown>,
): Promise<Record<string, string>> {
  const spec = auth.login!;
  let url: string;
  try {
    url = new URL(fill(spec.request.url, fields)).href; // normalized, as authorized_uris are matched
  } catch {
    throw new LoginRefused('The login URL is not a valid URL once its fields are filled in');
  }
  if (!matchesAuthorizedUri(url, auth.authorizedUris)) throw new LoginRefused(`The login URL is outside the auth's authorized_uris`);
  const allowInternal = internalHostsAllowed(auth.authorizedUris, config.egressAllowInternalHosts);
  try {
    await checkDestination(url, { allowInternalHosts: allowInternal });
  } catch (err) {
    if (err instanceof EgressError) throw new LoginRefused(`The login target is not allowed: ${err.message}`);
    throw err;
  }
  const { body, contentType } = encodeBody(spec.request, fields);
  const dispatcher = egressDispatcher(allowInternal, LOGIN_TIMEOUT_MS, config.extraCaCertsPath);
  let answer: LoginAnswer;
  try {
    const res = await request(url, {
      method: spec.request.method as never,
      headers: contentType ? { 'content-type': contentType } : {},
      body,
      dispatcher, // undici's request() follows no redirect: a 3xx is the answer judged below
      headersTimeout: LOGIN_TIMEOUT_MS,
      bodyTimeout: LOGIN_TIMEOUT_MS,
      // One deadline for the whole exchange: a target dripping its answer cannot outlive the attempt.
      signal: AbortSignal.timeout(LOGIN_TIMEOUT_MS),
    });
    // Enough of the body for `$body contains`; the rest is not waited for.
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= MAX_BODY_BYTES) {
        res.body.destroy();
        break;
      }
    }
    const text = Buffer.concat(chunks).subarray(0, MAX_BODY_BYTES).toString('utf8');
    answer = { status: res.statusCode, headers: res.headers, cookies: cookiesOf(res.headers['set-cookie']), body: text };
  } catch (err) {
    throw new LoginRefused(`The login request failed: ${(err as Error).message}`);
  } finally {
    await dispatcher.close().catch(() => undefined);
  }
  const failed = failedCriterion(spec.success_criteria, answer);
  if (failed) throw new LoginRefused(`The login was refused: the target answered ${answer.status} (condition not met: ${failed})`);
  const outputs: Record<string, string> = {};
  for (const [name, out] of Object.entries(spec.outputs ?? {})) {
    const value = answer.cookies[out.name];
    if (value === undefined) throw new LoginRefused(`The login answered ${answer.status} without the cookie ${out.name}`);
    outputs[name] = value;
  }
  return outputs;
}
