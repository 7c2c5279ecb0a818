// SSRF policy for every outbound URL: the destination is resolved and each address checked
// against private, loopback, link-local and reserved ranges. A host may reach internal
// addresses only when listed in EGRESS_ALLOW_INTERNAL_HOSTS.
import { type LookupAddress, type LookupOptions, lookup as dnsLookup } from 'node:dns';
import { lookup } from 'node:dns/promises';
import fs from 'node:fs';
import { createSecureContext, getCACertificates, type SecureContext } from 'node:tls';
import ipaddr from 'ipaddr.js';
import { Agent, Dispatcher, ProxyAgent } from 'undici';

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

/** The URL parsed, its scheme checked and loopback names refused: what holds whoever resolves the host. */
function parseDestination(
  rawUrl: string,
  opts: { allowInternalHosts: readonly string[]; requireHttps?: boolean },
): { url: URL; host: string; allowInternal: boolean } {
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
  return { url, host, allowInternal };
}

function blockedAddress(host: string, address: string): EgressError {
  return new EgressError(
    'blocked_address',
    host === address ? `${host} is a private or reserved address` : `${host} resolves to ${address}, a private or reserved address`,
  );
}

/**
 * Resolves the URL's host and returns its addresses; throws EgressError when the destination
 * is not allowed. `requireHttps` for webhook-style destinations.
 */
export async function checkDestination(
  rawUrl: string,
  opts: { allowInternalHosts: readonly string[]; requireHttps?: boolean },
): Promise<{ url: URL; addresses: string[] }> {
  const { url, host, allowInternal } = parseDestination(rawUrl, opts);
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
    if (blocked) throw blockedAddress(host, blocked);
  }
  return { url, addresses };
}

/**
 * The target of a call through a forward proxy. The proxy resolves its name (behind a corporate
 * proxy the service's own host often cannot), so a name is left to it; an address written in
 * the URL is checked here, as are the scheme and loopback names. The proxy's own address is
 * checked with `checkDestination`, and again at connect by `egressProxyAgent`.
 */
export function checkProxiedDestination(rawUrl: string, opts: { allowInternalHosts: readonly string[] }): URL {
  const { url, host, allowInternal } = parseDestination(rawUrl, opts);
  if (!allowInternal && ipaddr.isValid(host) && !isPublicAddress(host)) throw blockedAddress(host, host);
  return url;
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

/** Pooled dispatchers kept at most, one per egress decision; past it the least recently used closes (its open requests finish). */
export const EGRESS_POOLS_MAX = 64;
/** Connections a pooled dispatcher keeps to one origin at most (more requests wait for one). */
export const EGRESS_POOL_CONNECTIONS = 32;
/** An idle kept-alive connection closes after this, whatever the server's Keep-Alive hint. */
const EGRESS_POOL_IDLE_MS = 30_000;

const pools = new Map<string, Agent>();

/**
 * The kept-alive `egressDispatcher` of one egress decision (issue 33: a new connection per call
 * cost a TCP and TLS handshake each time), for calls made direct, never through a forward proxy
 * (`egressProxyAgent` is per proxy and never pooled here). Keyed by everything the connect-time
 * check depends on (the private hosts allowed, the CA file) and the connect timeout, so a
 * connection is reused only by calls whose policy admitted it: a call with a stricter decision
 * gets a pool of its own, and every call still passes `checkDestination` before it is made (a
 * name now resolving to a refused address is refused before any connection is reused). Within
 * a pool undici keeps one set of connections per origin (scheme, host, port). Take the
 * dispatcher just before the request, not across an await: an evicted pool closes.
 */
export function pooledEgressDispatcher(allowInternalHosts: readonly string[], connectTimeoutMs = 10_000, extraCaCertsPath?: string): Agent {
  const hosts = [...new Set(allowInternalHosts)].sort();
  const key = JSON.stringify([hosts, connectTimeoutMs, extraCaCertsPath ?? null]);
  const found = pools.get(key);
  if (found) {
    pools.delete(key); // most recently used last
    pools.set(key, found);
    return found;
  }
  const agent = new Agent({
    connections: EGRESS_POOL_CONNECTIONS,
    keepAliveMaxTimeout: EGRESS_POOL_IDLE_MS,
    connect: {
      timeout: connectTimeoutMs,
      ...(extraCaCertsPath ? { secureContext: trustedContext(extraCaCertsPath) } : {}),
      lookup: egressLookup(hosts),
    },
  });
  pools.set(key, agent);
  if (pools.size > EGRESS_POOLS_MAX) {
    const [oldest, evicted] = pools.entries().next().value!;
    pools.delete(oldest);
    void evicted.close().catch(() => undefined);
  }
  return agent;
}

/**
 * `pooledEgressDispatcher` for a holder that closes what it is given when done with it (a run's
 * model calls, a chat turn's, one LLM-proxy call): closing it leaves the pool open, and each
 * request takes the pool of its decision anew, so a pool evicted meanwhile is replaced rather
 * than used closed. A run's model calls then reuse kept-alive connections across runs instead of
 * a TCP and TLS handshake on each run's first call.
 */
export function borrowedEgressDispatcher(allowInternalHosts: readonly string[], connectTimeoutMs = 10_000, extraCaCertsPath?: string): Dispatcher {
  return new BorrowedDispatcher(() => pooledEgressDispatcher(allowInternalHosts, connectTimeoutMs, extraCaCertsPath));
}

class BorrowedDispatcher extends Dispatcher {
  private readonly pool: () => Dispatcher;

  constructor(pool: () => Dispatcher) {
    super();
    this.pool = pool;
  }

  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    return this.pool().dispatch(options, handler);
  }

  // The pool is not the holder's to close: its requests finish as they would.
  override close(callback: () => void): void;
  override close(): Promise<void>;
  override close(callback?: () => void): Promise<void> | void {
    if (callback) return void queueMicrotask(callback);
    return Promise.resolve();
  }

  override destroy(err: Error | null, callback: () => void): void;
  override destroy(callback: () => void): void;
  override destroy(err: Error | null): Promise<void>;
  override destroy(): Promise<void>;
  override destroy(a?: Error | null | (() => void), b?: () => void): Promise<void> | void {
    const callback = typeof a === 'function' ? a : b;
    if (callback) return void queueMicrotask(callback);
    return Promise.resolve();
  }
}

/**
 * A dispatcher through an HTTP(S) forward proxy (an organization's outbound proxy): the
 * connection to the proxy passes `egressLookup`; the target is resolved by the proxy, so the
 * caller checks it with `checkProxiedDestination` before each use. Credentials in `proxyUrl` become
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
