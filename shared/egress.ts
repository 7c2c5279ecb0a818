// SSRF policy for every outbound URL: the destination is resolved and each address checked
// against private, loopback, link-local and reserved ranges. A host may reach internal
// addresses only when listed in EGRESS_ALLOW_INTERNAL_HOSTS.
import { type LookupAddress, type LookupOptions, lookup as dnsLookup } from 'node:dns';
import { lookup } from 'node:dns/promises';
import fs from 'node:fs';
import { createSecureContext, getCACertificates, type SecureContext } from 'node:tls';
import ipaddr from 'ipaddr.js';
import { Agent, ProxyAgent } from 'undici';

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string, family: number) => void;

export class EgressError extends Error {
  override name = 'EgressError';
  readonly reason: 'not_https' | 'blocked_address' | 'unresolvable' | 'invalid_url';
  constructor(reason: EgressError['reason'], message: string) {
    super(message);
    this.reason = reason;
  }
}

export function isPublicAddress(address: string): boolean {
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  return parsed.range() === 'unicast';
}

function isLocalhostName(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost');
}

/**
 * Resolves the URL's host and returns its addresses; throws EgressError when the destination
 * is not allowed. `requireHttps` for webhook-style destinations.
 */
export async function checkDestination(
  rawUrl: string,
  opts: { allowInternalHosts: readonly string[]; requireHttps?: boolean },
): Promise<{ url: URL; addresses: string[] }> {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw new EgressError('invalid_url', `${rawUrl} is not a URL`);
  }
  if (opts.requireHttps && url.protocol !== 'https:') throw new EgressError('not_https', 'Only https URLs are allowed');
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new EgressError('invalid_url', `Unsupported scheme ${url.protocol}`);
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const allowInternal = opts.allowInternalHosts.includes(host);
  if (isLocalhostName(host) && !allowInternal) throw new EgressError('blocked_address', `${host} is a loopback name`);
  let addresses: string[];
  if (ipaddr.isValid(host)) {
    addresses = [host];
  } else {
    try {
      addresses = (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
    } catch (err) {
      throw new EgressError('unresolvable', `${host} does not resolve (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  }
  if (!allowInternal) {
    const blocked = addresses.find((a) => !isPublicAddress(a));
    if (blocked) throw new EgressError('blocked_address', `${host} resolves to ${blocked}, a private or reserved address`);
  }
  return { url, addresses };
}

/**
 * Node's default trust store plus the PEM file of NODE_EXTRA_CA_CERTS, read explicitly so that
 * the setting holds for a dispatcher even when the process did not start with it.
 */
function trustedCas(file: string): string[] {
  return [...getCACertificates('default'), fs.readFileSync(file, 'utf8')];
}

const secureContexts = new Map<string, SecureContext>();
/**
 * The same trust as a TLS context made once per file: given as `ca`, every new connection would
 * parse the whole store again (tens of milliseconds of CPU each).
 */
function trustedContext(file: string): SecureContext {
  const context = secureContexts.get(file) ?? createSecureContext({ ca: trustedCas(file) });
  secureContexts.set(file, context);
  return context;
}

/**
 * A `lookup` for sockets that re-checks every address at connect time, so a name that resolves
 * to a public address during the check and to a private one later (DNS rebinding) is refused.
 */
function egressLookup(allowInternalHosts: readonly string[]) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = addresses as unknown as LookupAddress[];
      const internalOk = allowInternalHosts.includes(hostname.toLowerCase());
      const blocked = internalOk ? undefined : list.find((a) => !isPublicAddress(a.address));
      if (blocked) return callback(new EgressError('blocked_address', `${hostname} resolves to ${blocked.address}`), '', 0);
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      callback(null, list[0].address, list[0].family);
    });
  };
}

/** An undici dispatcher whose every connection passes `egressLookup`. */
export function egressDispatcher(allowInternalHosts: readonly string[], connectTimeoutMs = 10_000, extraCaCertsPath?: string): Agent {
  return new Agent({
    connect: {
      timeout: connectTimeoutMs,
      ...(extraCaCertsPath ? { secureContext: trustedContext(extraCaCertsPath) } : {}),
      lookup: egressLookup(allowInternalHosts),
    },
  });
}

/**
 * A dispatcher through an HTTP(S) forward proxy (an organization's outbound proxy): the
 * connection to the proxy passes `egressLookup`; the target is resolved by the proxy, so the
 * caller checks it with `checkDestination` before each use. Credentials in `proxyUrl` become
 * `Proxy-Authorization`.
 */
export function egressProxyAgent(proxyUrl: string, allowInternalHosts: readonly string[], connectTimeoutMs = 10_000, extraCaCertsPath?: string): ProxyAgent {
  const ca = extraCaCertsPath ? { ca: trustedCas(extraCaCertsPath) } : {};
  return new ProxyAgent({
    uri: proxyUrl,
    proxyTls: { timeout: connectTimeoutMs, ...ca, lookup: egressLookup(allowInternalHosts) } as ProxyAgent.Options['proxyTls'],
    requestTls: { timeout: connectTimeoutMs, ...ca },
  });
}
