// Markup built from template literals that escape what they interpolate: `html` escapes every
// value except markup made by `html` itself (or `trusted`), so a page cannot forget to escape a
// run's input, an agent's name or an error message.
import { escapeHtml } from '../html/page.ts';

/** Markup that is safe to write as is. */
export class Html {
  readonly value: string;
  constructor(value: string) {
    this.value = value;
  }
  toString(): string {
    return this.value;
  }
}

type Part = Html | string | number | boolean | null | undefined | Part[];

function render(part: Part): string {
  if (part === null || part === undefined || part === false) return '';
  if (part instanceof Html) return part.value;
  if (Array.isArray(part)) return part.map(render).join('');
  return escapeHtml(part);
}

/** `html\`<p>${text}</p>\``: values are escaped, nested `html` and arrays of it are kept. */
export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1];
  return new Html(out);
}

/** Markup this code built itself (an SVG from numbers and escaped text): written as is. */
export function trusted(markup: string): Html {
  return new Html(markup);
}

/** An attribute only when the condition holds: `<input${when(bad, ' aria-invalid="true"')}>`. */
export function when(condition: unknown, markup: Html | string): Html {
  return condition ? (markup instanceof Html ? markup : new Html(markup)) : new Html('');
}
