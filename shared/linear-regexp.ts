// Regular expressions written by tenants (schema `pattern` and `patternProperties` keys,
// `authorized_uris` wildcards) run on RE2 (re2js, pure JavaScript): its matching time is linear
// in the input, whatever the pattern, where V8's backtracking engine can take minutes on one
// string (`^(a+)+$` against 31 `a`s and a `!`) and freeze the event loop for every tenant.
//
// Patterns keep their ECMAScript meaning: a pattern must first be valid for `new RegExp(p, 'u')`
// (what ajv used), then the constructs whose JavaScript meaning differs in RE2 are rewritten
// (`.`, `\s`, `\S`, `[` and `\b` inside a class) before re2js translates the rest of the syntax.
// What RE2 cannot run in linear time (backreferences, lookaround) is refused, as are inline
// modifiers and patterns too large to compile cheaply (RE2 expands `x{n}` into n copies).
//
// Linear is not free: a match costs about (input length) x (program size). Validations that
// run tenant patterns (shared/validation.ts) meter that product and stop at
// PATTERN_WORK_BUDGET, and afterwards drop the DFA state the patterns cached (up to 8 MB each).
import { RE2JS } from 're2js';

/** Program instructions (an estimate made before compiling) a pattern may have. */
export const MAX_PATTERN_SIZE = 10_000;
/** Characters a pattern may have: a bound on the work of checking it at all. */
const MAX_PATTERN_LENGTH = 65_536;
/**
 * Work units (input length x program size, summed over every match) one validation may spend.
 * Measured worst case for re2js on one core: ~130 ns a unit (a Unicode class in a large program
 * whose DFA overflows), so the budget keeps one validation well under a second; matching
 * ordinary patterns (tens of instructions) against inputs of hundreds of kilobytes stays below it.
 */
export const PATTERN_WORK_BUDGET = 5_000_000;

/** A pattern that cannot run here: `syntax` (not a valid ECMAScript pattern) or `unsupported`. */
export class UnusablePattern extends Error {
  readonly pattern: string;
  readonly kind: 'syntax' | 'unsupported';
  readonly reason: string;

  constructor(pattern: string, kind: 'syntax' | 'unsupported', reason: string) {
    const shown = JSON.stringify(pattern.length > 80 ? `${pattern.slice(0, 80)}…` : pattern);
    super(`pattern ${shown} ${kind === 'syntax' ? 'is not a valid regular expression' : 'cannot be used'}: ${reason}`);
    this.pattern = pattern;
    this.kind = kind;
    this.reason = reason;
  }
}

/** Thrown by a match once a validation's budget is spent; `subject` is the string it was to test. */
export class PatternBudgetExceeded extends Error {
  readonly subject: string;

  constructor(subject: string) {
    super(`matching the schema's patterns would take more than ${PATTERN_WORK_BUDGET} work units`);
    this.subject = subject;
  }
}

interface Meter {
  left: number;
  used: Set<RE2JS>;
}
let meter: Meter | undefined;

/** A compiled pattern with RegExp's `test` (a search, as `RegExp.prototype.test`). */
export class LinearRegExp {
  readonly source: string;
  private readonly re: RE2JS;
  /** RE2 program size: the cost of one input character. */
  readonly size: number;
  /** Whether matches count against the budget (tenant patterns do; this service's own do not). */
  private readonly metered: boolean;

  constructor(source: string, re: RE2JS, size: number, metered: boolean) {
    this.source = source;
    this.re = re;
    this.size = size;
    this.metered = metered;
  }

  test(s: string): boolean {
    if (meter && this.metered) {
      meter.left -= (s.length + 1) * this.size;
      if (meter.left < 0) throw new PatternBudgetExceeded(s);
      meter.used.add(this.re);
    }
    return this.re.test(s);
  }

  /** ajv keys compiled patterns by this. */
  toString(): string {
    return `/${this.source}/u`;
  }
}

/**
 * Runs `fn` (synchronous) with the pattern work budget; matches beyond it throw
 * PatternBudgetExceeded. The patterns' cached DFA states are released afterwards.
 */
export function withPatternBudget<T>(fn: () => T): T {
  const outer = meter;
  const mine: Meter = { left: PATTERN_WORK_BUDGET, used: new Set() };
  meter = mine;
  try {
    return fn();
  } finally {
    meter = outer;
    for (const re of mine.used) re.reset();
  }
}

// JavaScript's \s (WhiteSpace and LineTerminator), as ranges for an RE2 class, and its complement.
const SPACE: Array<[number, number]> = [
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
];
const hex = (n: number) => `\\x{${n.toString(16)}}`;
const ranges = (rs: Array<[number, number]>) => rs.map(([a, b]) => (a === b ? hex(a) : `${hex(a)}-${hex(b)}`)).join('');
const complement = (rs: Array<[number, number]>) => {
  const out: Array<[number, number]> = [];
  let next = 0;
  for (const [a, b] of rs) {
    if (a > next) out.push([next, a - 1]);
    next = b + 1;
  }
  out.push([next, 0x10ffff]);
  return out;
};
const SPACE_RANGES = ranges(SPACE);
const NON_SPACE_RANGES = ranges(complement(SPACE));
/** JavaScript's `.` without the `s` flag: anything but a line terminator. */
const DOT = `[^${ranges([
  [0x0a, 0x0a],
  [0x0d, 0x0d],
  [0x2028, 0x2029],
])}]`;

/** One escape sequence of a `u` pattern, from its backslash. */
const ESCAPE = /\\(?:[pP]\{[^}]*\}|u\{[0-9a-fA-F]+\}|u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|c[A-Za-z]|.)/suy;

// ECMAScript's long General_Category names; RE2 knows the short ones (and script names as such).
const CATEGORIES: Record<string, string> = {
  Letter: 'L',
  Cased_Letter: 'LC',
  Uppercase_Letter: 'Lu',
  Lowercase_Letter: 'Ll',
  Titlecase_Letter: 'Lt',
  Modifier_Letter: 'Lm',
  Other_Letter: 'Lo',
  Mark: 'M',
  Combining_Mark: 'M',
  Nonspacing_Mark: 'Mn',
  Spacing_Mark: 'Mc',
  Enclosing_Mark: 'Me',
  Number: 'N',
  Decimal_Number: 'Nd',
  digit: 'Nd',
  Letter_Number: 'Nl',
  Other_Number: 'No',
  Punctuation: 'P',
  punct: 'P',
  Connector_Punctuation: 'Pc',
  Dash_Punctuation: 'Pd',
  Open_Punctuation: 'Ps',
  Close_Punctuation: 'Pe',
  Initial_Punctuation: 'Pi',
  Final_Punctuation: 'Pf',
  Other_Punctuation: 'Po',
  Symbol: 'S',
  Math_Symbol: 'Sm',
  Currency_Symbol: 'Sc',
  Modifier_Symbol: 'Sk',
  Other_Symbol: 'So',
  Separator: 'Z',
  Space_Separator: 'Zs',
  Line_Separator: 'Zl',
  Paragraph_Separator: 'Zp',
  Other: 'C',
  Control: 'Cc',
  cntrl: 'Cc',
  Format: 'Cf',
  Surrogate: 'Cs',
  Private_Use: 'Co',
  Unassigned: 'Cn',
};

/** `\p{...}` in the names RE2 knows: `gc=`/`General_Category=` and `sc=`/`Script=` dropped, long categories shortened. */
function property(seq: string): string {
  const m = /^\\([pP])\{(?:(?:General_Category|gc|Script|sc)=)?(\w+)\}$/.exec(seq);
  return m ? `\\${m[1]}{${CATEGORIES[m[2]] ?? m[2]}}` : seq;
}

/** The escape at `i`, a surrogate pair of `\u` escapes written as one code point, and its length in `p`. */
function escapeAt(p: string, i: number): { text: string; length: number } {
  ESCAPE.lastIndex = i;
  const first = ESCAPE.exec(p)![0];
  const pair = surrogatePair(first, p.slice(i + first.length, i + first.length + 6));
  return pair ? { text: pair, length: first.length + 6 } : { text: property(first), length: first.length };
}

/** `\uD83D` followed by `\uDE00` is one code point with the `u` flag: written as `\u{1f600}` for RE2. */
function surrogatePair(seq: string, next: string): string | undefined {
  const hi = /^\\u([dD][89abAB][0-9a-fA-F]{2})$/.exec(seq);
  const lo = /^\\u([dD][c-fC-F][0-9a-fA-F]{2})$/.exec(next);
  if (!hi || !lo) return undefined;
  const cp = ((Number.parseInt(hi[1], 16) - 0xd800) << 10) + (Number.parseInt(lo[1], 16) - 0xdc00) + 0x10000;
  return `\\u{${cp.toString(16)}}`;
}

/** A counted repetition, `{n}`, `{n,}` or `{n,m}`, lazy or not. */
const QUANTIFIER = /\{(\d+)(?:(,)(\d*))?\}\??/y;

const BACKTRACKING = 'needs backtracking, which the linear-time pattern engine (RE2) cannot do';

interface Scan {
  /** The pattern with the constructs whose meaning differs in RE2 rewritten. */
  rewritten: string;
  /** An upper estimate of the RE2 program size. */
  size: number;
  unsupported?: string;
}

/**
 * One pass over a pattern already known to be valid with the `u` flag (so every `{` outside a
 * class is a quantifier, and escapes are the ECMAScript ones).
 */
function scan(p: string): Scan {
  let out = '';
  // Size estimate, per group: the alternatives so far, the current one, and the last atom (what a quantifier repeats).
  const frames: Array<{ done: number; current: number; last: number }> = [{ done: 0, current: 0, last: 0 }];
  const top = () => frames[frames.length - 1];
  const atom = (size: number) => {
    top().current += size;
    top().last = size;
  };
  let i = 0;
  while (i < p.length) {
    const c = p[i];
    if (c === '\\') {
      const e = p[i + 1];
      if (/[1-9]/.test(e)) return { rewritten: out, size: 0, unsupported: `a backreference (\\${e}) ${BACKTRACKING}` };
      if (e === 'k') return { rewritten: out, size: 0, unsupported: `a backreference (\\k<name>) ${BACKTRACKING}` };
      if (e === 's' || e === 'S') {
        out += `[${e === 's' ? SPACE_RANGES : NON_SPACE_RANGES}]`;
        i += 2;
      } else {
        const esc = escapeAt(p, i);
        out += esc.text;
        i += esc.length;
      }
      atom(1);
    } else if (c === '[') {
      let j = i + 1;
      let cls = '[';
      if (p[j] === '^') {
        cls += '^';
        j++;
      }
      while (p[j] !== ']') {
        if (p[j] === '\\') {
          const e = p[j + 1];
          if (e === 's') cls += SPACE_RANGES;
          else if (e === 'S') cls += NON_SPACE_RANGES;
          else if (e === 'b')
            cls += '\\x{8}'; // backspace in a JavaScript class
          else {
            const esc = escapeAt(p, j);
            cls += esc.text;
            j += esc.length;
            continue;
          }
          j += 2;
        } else if (p[j] === '[') {
          cls += '\\['; // literal in a JavaScript class; RE2 would read `[:alpha:]` as a POSIX class
          j++;
        } else {
          const cp = p.codePointAt(j)!;
          const ch = String.fromCodePoint(cp);
          cls += ch;
          j += ch.length;
        }
      }
      out += `${cls}]`;
      i = j + 1;
      atom(1);
    } else if (c === '(') {
      if (p.startsWith('(?=', i) || p.startsWith('(?!', i)) return { rewritten: out, size: 0, unsupported: `a lookahead ${BACKTRACKING}` };
      if (p.startsWith('(?<=', i) || p.startsWith('(?<!', i)) return { rewritten: out, size: 0, unsupported: `a lookbehind ${BACKTRACKING}` };
      if (p[i + 1] === '?' && p[i + 2] !== ':' && p[i + 2] !== '<')
        return { rewritten: out, size: 0, unsupported: 'inline modifiers such as (?i:...) are not supported by the linear-time pattern engine' };
      const head = p[i + 1] === '?' ? (p[i + 2] === ':' ? '(?:' : p.slice(i, p.indexOf('>', i) + 1)) : '(';
      out += head;
      i += head.length;
      frames.push({ done: 0, current: 0, last: 0 });
    } else if (c === ')') {
      const f = frames.pop()!;
      out += ')';
      i++;
      atom(f.done + f.current + 1);
    } else if (c === '|') {
      top().done += top().current + 1;
      top().current = 0;
      top().last = 0;
      out += '|';
      i++;
    } else if (c === '{') {
      QUANTIFIER.lastIndex = i;
      const m = QUANTIFIER.exec(p)!;
      const n = Number(m[3] || m[1]);
      top().current += top().last * Math.max(n - 1, 0) + 1;
      top().last *= n;
      out += m[0];
      i += m[0].length;
    } else if (c === '*' || c === '+' || c === '?') {
      top().current += 1;
      out += c;
      i++;
    } else if (c === '.') {
      out += DOT;
      i++;
      atom(1);
    } else {
      const ch = String.fromCodePoint(p.codePointAt(i)!);
      out += ch;
      i += ch.length;
      atom(1);
    }
  }
  const f = frames[0];
  return { rewritten: out, size: f.done + f.current + 2 };
}

/** Why `pattern` cannot run here, before compiling it: a syntax error or an unsupported construct. */
function precheck(pattern: string): { scan: Scan } | UnusablePattern {
  if (pattern.length > MAX_PATTERN_LENGTH) {
    return new UnusablePattern(pattern, 'unsupported', `it is too long: ${pattern.length} characters, at most ${MAX_PATTERN_LENGTH}`);
  }
  try {
    new RegExp(pattern, 'u');
  } catch (err) {
    // V8 repeats the whole pattern in its message: keep what it says about it.
    return new UnusablePattern(pattern, 'syntax', (err as Error).message.replace(/^Invalid regular expression: \/.*\/u: /s, ''));
  }
  const s = scan(pattern);
  if (s.unsupported) return new UnusablePattern(pattern, 'unsupported', s.unsupported);
  if (s.size > MAX_PATTERN_SIZE) {
    return new UnusablePattern(
      pattern,
      'unsupported',
      `it is too large: about ${s.size} instructions once repetitions are expanded, at most ${MAX_PATTERN_SIZE}`,
    );
  }
  return { scan: s };
}

/** An upper estimate of `pattern`'s program size, or the reason it cannot be used. */
export function patternCost(pattern: string): number | UnusablePattern {
  const checked = precheck(pattern);
  return checked instanceof UnusablePattern ? checked : checked.scan.size;
}

// Compiled patterns, shared by every schema and tenant (a pattern means the same everywhere);
// bounded, oldest dropped first.
const compiled = new Map<string, LinearRegExp>();
const COMPILED_CACHE = 2000;

/**
 * Compiles an ECMAScript pattern (`u` flag semantics) for linear-time matching; throws
 * UnusablePattern. `own`: a fixed pattern of this service, whose matches are not metered.
 */
export function compileLinear(pattern: string, opts: { own?: boolean } = {}): LinearRegExp {
  const hit = opts.own ? undefined : compiled.get(pattern);
  if (hit) return hit;
  const checked = precheck(pattern);
  if (checked instanceof UnusablePattern) throw checked;
  let re: RE2JS;
  try {
    re = RE2JS.compile(RE2JS.translateRegExp(checked.scan.rewritten));
  } catch (err) {
    throw new UnusablePattern(pattern, 'unsupported', `the linear-time pattern engine (RE2) cannot express it (${(err as Error).message})`);
  }
  const out = new LinearRegExp(pattern, re, re.programSize(), !opts.own);
  if (opts.own) return out;
  compiled.set(pattern, out);
  if (compiled.size > COMPILED_CACHE) compiled.delete(compiled.keys().next().value!);
  return out;
}

/**
 * ajv's `code.regExp` engine for schemas written by tenants. `code` is what ajv would print for
 * standalone validation code, which this service does not generate.
 */
export const linearRegExpEngine = Object.assign((pattern: string, _flags: string) => compileLinear(pattern), {
  code: 'require("shared/linear-regexp.ts").linearRegExpEngine',
});
