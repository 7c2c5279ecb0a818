// What a source file loads at run time: the specifiers of its static imports and re-exports, of
// `import('...')`, `require('...')`, `require.resolve('...')` and `createRequire(...)('...')` with
// a literal. TypeScript is first stripped by Node's own stripper, so what remains is what Node
// runs: `import type`, `export type` and `typeof import('...')` are gone (they load nothing),
// while `import { type A, b }` still loads its module. Comments, and code quoted in strings or
// regular expressions, name nothing.
import { builtinModules, stripTypeScriptTypes } from 'node:module';

export interface ImportSite {
  specifier: string;
  line: number;
}

// A `/` after one of these starts a regular expression, not a division.
const REGEX_AFTER_WORD = new Set(['return', 'typeof', 'case', 'do', 'else', 'in', 'of', 'new', 'delete', 'void', 'throw', 'instanceof', 'yield', 'await']);

function endOfQuoted(src: string, i: number, quote: string): number {
  let j = i + 1;
  while (j < src.length && src[j] !== quote && src[j] !== '\n') j += src[j] === '\\' ? 2 : 1;
  return j + 1;
}

function endOfRegex(src: string, i: number): number {
  let j = i + 1;
  let inClass = false;
  while (j < src.length && src[j] !== '\n') {
    const c = src[j];
    if (c === '\\') j++;
    else if (c === '[') inClass = true;
    else if (c === ']') inClass = false;
    else if (c === '/' && !inClass) break;
    j++;
  }
  j++;
  while (j < src.length && /[a-z]/i.test(src[j])) j++;
  return j;
}

const blank = (text: string) => text.replace(/[^\n]/g, ' ');

/**
 * The code with comments, regular expressions and the text of template literals blanked, and
 * each string literal (quotes, or a template without `${}`) replaced by `"<n>"`, its text in
 * `literals[n]`. Line breaks stay where they were.
 */
export function codeSkeleton(src: string): { code: string; literals: string[] } {
  const literals: string[] = [];
  let out = '';
  let i = 0;
  let lastChar = ''; // the last character of code that was not blank
  let lastWord = '';
  const templateDepths: number[] = []; // brace depth at which each open `${` returns to its template
  let depth = 0;
  const code = (text: string) => {
    out += text;
    const t = text.trimEnd();
    if (t) {
      lastChar = t[t.length - 1];
      lastWord = /[\w$]+$/.exec(t)?.[0] ?? '';
    }
  };
  const literal = (text: string) => {
    literals.push(text);
    code(`"${literals.length - 1}"${text.replace(/[^\n]/g, '')}`);
  };
  /** From inside a template literal at `j`: to its closing backtick (true), or into a `${` (false). */
  const template = (j: number): [number, boolean] => {
    while (j < src.length) {
      if (src[j] === '\\') j += 2;
      else if (src[j] === '`') return [j + 1, true];
      else if (src[j] === '$' && src[j + 1] === '{') {
        templateDepths.push(depth++);
        return [j + 2, false];
      } else j++;
    }
    return [j, true];
  };
  while (i < src.length) {
    const c = src[i];
    const next = src[i + 1];
    if (c === '/' && next === '/') {
      const end = src.indexOf('\n', i);
      const stop = end < 0 ? src.length : end;
      out += blank(src.slice(i, stop));
      i = stop;
    } else if (c === '/' && next === '*') {
      const end = src.indexOf('*/', i + 2);
      const stop = end < 0 ? src.length : end + 2;
      out += blank(src.slice(i, stop));
      i = stop;
    } else if (c === '"' || c === "'") {
      const stop = endOfQuoted(src, i, c);
      literal(src.slice(i + 1, stop - 1));
      i = stop;
    } else if (c === '`') {
      const [stop, closed] = template(i + 1);
      if (closed) literal(src.slice(i + 1, stop - 1));
      else code(`\`${blank(src.slice(i + 1, stop - 2))}\${`);
      i = stop;
    } else if (c === '/' && (!/[\w$)\]}]/.test(lastChar) || REGEX_AFTER_WORD.has(lastWord))) {
      const stop = endOfRegex(src, i);
      code(`/${blank(src.slice(i + 1, stop))}`);
      i = stop;
    } else if (c === '}' && templateDepths.length && templateDepths[templateDepths.length - 1] === depth - 1) {
      templateDepths.pop();
      depth--;
      const [stop, closed] = template(i + 1);
      code(`}${blank(src.slice(i + 1, closed ? stop - 1 : stop - 2))}${closed ? '`' : '${'}`);
      i = stop;
    } else {
      if (c === '{') depth++;
      if (c === '}') depth--;
      code(c);
      i++;
    }
  }
  return { code: out, literals };
}

const LITERAL = `(["])(\\d+)\\1`;
const LOADS = [
  // import x from 'a'; import { b, c as d } from 'a'; import * as e from 'a'; import 'a'; export { f } from 'a'; export * from 'a'
  new RegExp(`(?<![\\w$.])(?:import|export)\\s*(?:[\\w$*{}\\s,]*?\\s*from\\s*)?${LITERAL}`, 'g'),
  // import('a'), require('a'), require.resolve('a')
  new RegExp(`(?<![\\w$.])(?:import|require|require\\.resolve)\\s*\\(\\s*${LITERAL}\\s*[,)]`, 'g'),
  // createRequire(import.meta.url)('a')
  new RegExp(`(?<![\\w$.])createRequire\\s*\\([^()]*\\)\\s*\\(\\s*${LITERAL}\\s*\\)`, 'g'),
];

/** The specifiers a source's code loads, each with its line. `typescript`: strip types first. */
export function importSpecifiers(source: string, typescript: boolean): ImportSite[] {
  const { code, literals } = codeSkeleton(typescript ? stripTypeScriptTypes(source, { mode: 'strip' }) : source);
  const found: ImportSite[] = [];
  for (const pattern of LOADS) {
    for (const m of code.matchAll(pattern)) {
      const at = m.index + m[0].length;
      found.push({ specifier: literals[Number(m[2])], line: code.slice(0, at).split('\n').length });
    }
  }
  return found.sort((a, b) => a.line - b.line);
}

/**
 * The npm package a specifier loads (`@scope/name` or `name`, without a subpath), or undefined
 * for relative and absolute paths, URLs, `#` imports and Node's built-in modules.
 */
export function packageOf(specifier: string): string | undefined {
  if (/^(\.|\/|#|[a-z][a-z0-9+.-]*:)/i.test(specifier)) return undefined; // ./x, /x, #x, node:x, file:x, data:x
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
  if (builtinModules.includes(specifier) || builtinModules.includes(name)) return undefined;
  return name;
}
