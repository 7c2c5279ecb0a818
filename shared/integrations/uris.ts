// `authorized_uris` patterns (DESIGN.md 7): `**` matches anything, `*` matches within one host
// label or one path segment; scheme and host are literal unless wildcarded.

const cache = new Map<string, RegExp>();

function escapeRegExp(s: string): string {
  return s.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
}

function compile(pattern: string, star: string): string {
  return pattern
    .split('**')
    .map((part) => part.split('*').map(escapeRegExp).join(star))
    .join('.*');
}

function toRegExp(pattern: string): RegExp {
  let re = cache.get(pattern);
  if (!re) {
    const scheme = pattern.indexOf('://');
    const pathStart = scheme < 0 ? -1 : pattern.indexOf('/', scheme + 3);
    const authority = pathStart < 0 ? pattern : pattern.slice(0, pathStart);
    const path = pathStart < 0 ? '' : pattern.slice(pathStart);
    re = new RegExp(`^${compile(authority, '[^./:]*')}${compile(path, '[^/?#]*')}$`);
    cache.set(pattern, re);
  }
  return re;
}

/** True when `url` matches one of `patterns`. */
export function matchesAuthorizedUri(url: string, patterns: readonly string[]): boolean {
  return patterns.some((p) => toRegExp(p).test(url));
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
