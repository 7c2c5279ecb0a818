// Prompts are logic-less Mustache templates (DESIGN.md 5), rendered as the package format's own
// runtime renders them: the `mustache` package, HTML escaping off, no partials, the view plain
// JSON data (no lambdas). A value that is an object renders as plain Mustache renders it
// ("[object Object]"); an array in `{{name}}` as its items joined by commas; a missing name as
// nothing. A template that does not parse is refused where it enters (import, inline runs), naming
// its line. SKILL.md files are not templates.
import Mustache from 'mustache';
import type { ProblemFieldError } from '../errors.ts';

/** What a run's prompt is rendered with (DESIGN.md 5); times are epoch milliseconds, as the format's runtime has them. */
export interface PromptView {
  runId: string;
  input: Record<string, unknown>;
  /** The agent's notes, most recent first. */
  memories: Array<{ content: string; createdAt: number }>;
  /** Its pins, oldest first; null when it has none. */
  checkpoint: string[] | null;
  /** Its recent successful runs, most recent first. */
  history: Array<{ runId: string; timestamp: number; output: unknown }>;
  /** Seconds. */
  timeout: number;
  /** The run's file inputs as the sandbox holds them. */
  uploads: Array<{ name: string; path: string; size: number; type: string }>;
  platform: Record<string, never>;
}

export type PromptViewName = keyof PromptView;

// A writer of our own per call: the default writer caches every template it ever parsed, without
// bound, for the life of the process (every inline prompt would stay in memory).
function writer(): Mustache.Writer {
  const w = new Mustache.Writer();
  (w as unknown as { templateCache: undefined }).templateCache = undefined;
  return w;
}

// [type, value, start, end, children of a section | a partial's indentation, ...]
type Token = [type: string, value: string, start: number, end: number, children?: Token[] | string];

/** The template's tokens; throws mustache's own error when it does not parse. */
function parse(template: string): Token[] {
  return writer().parse(template) as Token[];
}

/** 1-based line and column of character `pos`. */
function lineOf(text: string, pos: number): { line: number; column: number } {
  const before = text.slice(0, Math.max(0, Math.min(pos, text.length)));
  const lastBreak = before.lastIndexOf('\n');
  return { line: before.split('\n').length, column: pos - lastBreak };
}

/**
 * Where a parse error is: mustache says "... at <pos>". An unclosed section is reported at the end
 * of the template; its opening tag (with the default delimiters) is the line worth naming.
 */
function errorPosition(template: string, message: string): number | undefined {
  const at = /\bat (\d+)$/.exec(message);
  if (!at) return undefined;
  const pos = Number(at[1]);
  const unclosed = /^Unclosed section "([^"]*)"/.exec(message);
  if (unclosed && pos >= template.length) {
    const name = unclosed[1].replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const opens = [...template.matchAll(new RegExp(`\\{\\{\\s*[#^]\\s*${name}\\s*\\}\\}`, 'g'))];
    if (opens.length) return opens[opens.length - 1].index;
  }
  return pos;
}

/**
 * The template's parse error as a field error naming the line (`field` is where the template came
 * from: `prompt.md`, `prompt`), or none when it parses.
 */
export function promptTemplateErrors(template: string, field: string): ProblemFieldError[] {
  try {
    parse(template);
    return [];
  } catch (err) {
    const reason = (err as Error).message;
    const pos = errorPosition(template, reason);
    const where = pos === undefined ? undefined : lineOf(template, pos);
    const what = reason.replace(/ at \d+$/, '');
    const message = where
      ? `${field} is not a valid Mustache template: line ${where.line}, column ${where.column}: ${what}`
      : `${field} is not a valid Mustache template: ${what}`;
    return [{ field, code: 'invalid_template', message, ...(where ?? {}) }];
  }
}

/**
 * The names of the view a template reads (the first segment of every name it uses, at any
 * depth: a name inside a section may resolve at the root), so that only those are loaded.
 */
export function promptNamesUsed(template: string): Set<string> {
  const names = new Set<string>();
  const walk = (tokens: Token[]) => {
    for (const t of tokens) {
      if (t[0] === 'name' || t[0] === '&' || t[0] === '#' || t[0] === '^') names.add(t[1].split('.')[0]);
      if (Array.isArray(t[4])) walk(t[4]);
    }
  };
  walk(parse(template));
  return names;
}

/**
 * What one render may cost: characters produced, summed over every (nested) token list rendered,
 * and token lists rendered. Sections nest over the view's lists, so a short template can ask for
 * an exponential amount of output (`{{#history}}` six deep over ten runs is a million copies);
 * without a bound one tenant's prompt would hold a worker's memory and CPU.
 */
export const PROMPT_RENDER_BUDGET = { chars: 8 * 1024 * 1024, lists: 100_000 };

/** The render went past PROMPT_RENDER_BUDGET. */
export class PromptTooLarge extends Error {
  override name = 'PromptTooLarge';
}

/** The rendered prompt; HTML escaping off, values as plain Mustache writes them. */
export function renderPrompt(template: string, view: PromptView): string {
  // JSON data only, as the format's runtime renders it: nothing in the view can run.
  const data = JSON.parse(JSON.stringify(view)) as Record<string, unknown>;
  const w = writer();
  const renderTokens = w.renderTokens.bind(w);
  let chars = 0;
  let lists = 0;
  // Sections render their content through this method, once per item: the budget sees all of it.
  w.renderTokens = (...args: Parameters<Mustache.Writer['renderTokens']>) => {
    if (++lists > PROMPT_RENDER_BUDGET.lists) throw new PromptTooLarge(`The prompt template renders more than ${PROMPT_RENDER_BUDGET.lists} sections`);
    const out = renderTokens(...args);
    chars += out.length;
    if (chars > PROMPT_RENDER_BUDGET.chars) throw new PromptTooLarge(`The prompt template renders more than ${PROMPT_RENDER_BUDGET.chars} characters`);
    return out;
  };
  return w.render(template, data, undefined, { escape: (value: unknown) => String(value) });
}
