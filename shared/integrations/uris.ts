// `authorized_uris` patterns (DESIGN.md 7): `**` matches anything, `*` matches within one host
// label or one path segment; scheme and host are literal unless wildcarded. The URL is parsed
// and each part compared on its own, so a wildcard in one part can never reach into another
// (`https://**.example.com/**` does not match `https://evil.com/.example.com/`), and a URL
// carrying credentials of its own (`https://x@host/`) matches nothing. A pattern that does not
// mention a query allows any query.
//
// The expressions run on the linear-time engine (shared/linear-regexp.ts): with V8's, a few `**`
// in one pattern made a long path take O(n^k) (`/**a**a**a**a**b` against 200 `a`s: 20 s, the
// API's event loop stalled for everyone). A pattern too large for it matches nothing; so does a
// URL too long to check against the patterns within the work budget.
import { compileLinear, type LinearRegExp, PatternBudgetExceeded, UnusablePattern, withPatternBudget } from '../linear-regexp.ts';

interface CompiledPattern {
  scheme: string;
  host: LinearRegExp;
  /** Literal port, `*` for any, or '' for the scheme's default. */
  port: string;
  path: LinearRegExp;
  /** Whether the path pattern speaks of the query; if not, any query is allowed. */
  query: boolean;
}

const PATTERN = /^([a-z][a-z0-9+.-]*):\/\/([^/?#]+)(.*)$/i;
const cache = new Map<string, CompiledPattern | null>();

function escapeRegExp(s: string): string {
  return s.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
}

function compile(part: string, star: string, doubleStar: string): LinearRegExp {
  return compileLinear(
    `^${part
      .split('**')
      .map((p) => p.split('*').map(escapeRegExp).join(star))
      .join(doubleStar)}$`,
  );
}

function parsePattern(pattern: string): CompiledPattern | null {
  const m = PATTERN.exec(pattern);
  if (!m) return null;
  const [, scheme, rawAuthority, rawRest] = m;
  // `https://api.example.com**`: a wildcard right after the host means any path, not more host.
  const tail = /^(.*[^.*])(\*\*)$/.exec(rawAuthority);
  const authority = tail ? tail[1] : rawAuthority;
  const rest = tail ? `/**${rawRest}` : rawRest;
  const colon = authority.lastIndexOf(':');
  const hasPort = colon > -1 && !authority.endsWith(']') && /^(\d+|\*)$/.test(authority.slice(colon + 1));
  const host = (hasPort ? authority.slice(0, colon) : authority).toLowerCase();
  const port = hasPort ? authority.slice(colon + 1) : '';
  const defaultPort = { http: '80', https: '443' }[scheme.toLowerCase()];
  // A host wildcard stands for whole labels only (`*.example.com`, `**.example.com`): one glued to
  // other characters (`api*.example.com`, `example.com*`) could reach another domain.
  if (host.split('.').some((label) => label.includes('*') && label !== '*' && label !== '**')) return null;
  return {
    scheme: `${scheme.toLowerCase()}:`,
    query: rest.includes('?'),
    // Host labels: `*` within one label, `**` across labels; never `/`, `@`, `:` or `?`.
    host: compile(host, '[a-z0-9_-]*', '[a-z0-9_.-]*'),
    port: port === defaultPort ? '' : port,
    // Without a path the pattern names the root only.
    path: compile(rest || '/', '[^/?#]*', '.*'),
  };
}

function compiled(pattern: string): CompiledPattern | null {
  if (!cache.has(pattern)) {
    try {
      cache.set(pattern, parsePattern(pattern));
    } catch (err) {
      if (!(err instanceof UnusablePattern)) throw err;
      cache.set(pattern, null);
    }
  }
  return cache.get(pattern)!;
}

/** True when `url` matches one of `patterns`. */
export function matchesAuthorizedUri(url: string, patterns: readonly string[]): boolean {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  if (u.username || u.password) return false;
  const host = u.hostname.toLowerCase();
  try {
    return withPatternBudget(() =>
      patterns.some((p) => {
        const c = compiled(p);
        const path = c?.query ? `${u.pathname}${u.search}` : u.pathname;
        return !!c && c.scheme === u.protocol && c.host.test(host) && (c.port === '*' || c.port === u.port) && c.path.test(path);
      }),
    );
  } catch (err) {
    if (err instanceof PatternBudgetExceeded) return false;
    throw err;
  }
}

/**
 * The instance's EGRESS_ALLOW_INTERNAL_HOSTS narrowed to hosts the patterns name literally: a
 * private address is reachable only when both say so (SPEC 2.12).
 */
export function internalHostsAllowed(patterns: readonly string[], configured: readonly string[]): string[] {
  const literal = patterns.flatMap((p) => {
    try {
      return [new URL(p).hostname.toLowerCase()]; // a wildcard host does not parse
    } catch {
      return [];
    }
  });
  return configured.filter((h) => literal.includes(h));
}
