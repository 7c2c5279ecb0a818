// The `url` format of ajv-formats, in linear time. ajv-formats checks it with one expression,
// `^(?:https?|ftp):\/\/(?:\S+(?::\S*)?@)?(?:(?!private-ip)ip|host)(?::\d{2,5})?(?:\/[^\s]*)?$`
// (flags iu), whose overlapping `\S+` and `\S*` before the `@` make V8 quadratic:
// `http://` and 100 000 `:` take over ten seconds. Same language, decided piece by piece:
// the userinfo is any non-empty run of non-spaces ending in `@`, so the host starts right after
// `://` or right after an `@`; host and port run to the first `/`, which cannot hold an `@`.
import { compileLinear } from './linear-regexp.ts';

const SCHEME = /^(?:https?|ftp):\/\//i;
const SPACE = /\s/u;
// The negative lookaheads of ajv-formats guard its IP alternative only: a prefix test of the host.
const PRIVATE_PREFIX = compileLinear(
  '^(?:(?:10|127)(?:\\.\\d{1,3}){3}|(?:169\\.254|192\\.168)(?:\\.\\d{1,3}){2}|172\\.(?:1[6-9]|2\\d|3[0-1])(?:\\.\\d{1,3}){2})',
  { own: true },
);
const PORT = '(?::\\d{2,5})?$';
const IP_PORT = compileLinear(
  `^(?:[1-9]\\d?|1\\d\\d|2[01]\\d|22[0-3])(?:\\.(?:1?\\d{1,2}|2[0-4]\\d|25[0-5])){2}(?:\\.(?:[1-9]\\d?|1\\d\\d|2[0-4]\\d|25[0-4]))${PORT}`,
  { own: true },
);
const LABEL = '(?:[a-zA-Z0-9\\u{00a1}-\\u{ffff}]+-)*[a-zA-Z0-9\\u{00a1}-\\u{ffff}]+';
const NAME_PORT = compileLinear(`^${LABEL}(?:\\.${LABEL})*(?:\\.(?:[a-zA-Z\\u{00a1}-\\u{ffff}]{2,}))${PORT}`, { own: true });

export function isUrl(s: string): boolean {
  const scheme = SCHEME.exec(s);
  if (!scheme) return false;
  const rest = s.slice(scheme[0].length);
  if (SPACE.test(rest)) return false; // userinfo, host, port and path are all non-space
  // Hosts start at 0 (no userinfo) or after an `@` at index >= 1 (a non-empty userinfo before
  // it); each start is tried once, up to the first `/` after it, skipped when that stretch holds
  // another `@`: the stretches tried never overlap.
  let slash = -1;
  let at = rest.indexOf('@');
  for (let start = 0; start !== -1; ) {
    if (slash < start) {
      slash = rest.indexOf('/', start);
      if (slash === -1) slash = rest.length;
    }
    while (at !== -1 && at < start) at = rest.indexOf('@', at + 1);
    if (at === -1 || at > slash) {
      const hostPort = rest.slice(start, slash);
      if ((IP_PORT.test(hostPort) && !PRIVATE_PREFIX.test(hostPort)) || NAME_PORT.test(hostPort)) return true;
    }
    const next = rest.indexOf('@', Math.max(start, 1));
    start = next === -1 ? -1 : next + 1;
  }
  return false;
}
