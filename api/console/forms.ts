// Forms of the console: the CSRF value every form carries, fields with their label, help text and
// the error beside them, and one-button forms for actions (cancel, sign out). A page that
// refuses a form renders itself again with `FieldErrors`, each shown beside its field and listed
// at the top with links to the fields (README.md, "Forms").
import { type CsrfScope, csrfValid, issueCsrf } from '../html/csrf.ts';
import type { AppContext } from '../context.ts';
import { type Html, html, trusted, when } from './html.ts';
import type { PageContext } from './page.ts';

/** Field name -> what is wrong with it; `''` for the form as a whole. */
export type FieldErrors = Record<string, string>;

/**
 * The console's CSRF cookie (api/html/csrf.ts, double submit), kept as long as a session and
 * `Lax` (see CsrfScope.sameSite). Values are bound to the session, or to `sign-in` before one.
 */
export const CONSOLE_CSRF: CsrfScope = {
  cookie: 'svc.console_csrf',
  path: '/console',
  purpose: 'console forms',
  maxAgeSeconds: 7 * 24 * 3600,
  sameSite: 'Lax',
};

export function csrfBinding(sessionId: string | undefined): string {
  return sessionId ?? 'sign-in';
}

export function consoleCsrf(ctx: AppContext, sessionId: string | undefined): string {
  return issueCsrf(ctx, CONSOLE_CSRF, csrfBinding(sessionId));
}

export function consoleCsrfValid(ctx: AppContext, sessionId: string | undefined, submitted: string | null): boolean {
  return csrfValid(ctx, CONSOLE_CSRF, csrfBinding(sessionId), submitted ?? undefined);
}

export function csrfField(page: PageContext<unknown>): Html {
  return html`<input type="hidden" name="csrf" value="${page.csrf()}">`;
}

interface FieldBase {
  /** The element's id; also the key of its error in FieldErrors (defaults to `name`). */
  id?: string;
  name: string;
  label: string;
  help?: string;
  error?: string;
  required?: boolean;
}

/** The label, the help text and the error of a field, tied to its control by ids. */
function fieldParts(f: FieldBase) {
  const id = f.id ?? f.name;
  const described = [f.help ? `${id}-help` : '', f.error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return {
    id,
    label: html`<label for="${id}">${f.label}${when(f.required, html` <span class="req" aria-hidden="true">*</span>`)}</label>`,
    attrs: html`${when(described, html` aria-describedby="${described}"`)}${when(f.error, ' aria-invalid="true"')}${when(f.required, ' required')}`,
    after: html`${f.help ? html`<span class="help" id="${id}-help">${f.help}</span>` : ''}${
      f.error
        ? html`<span \
class="field-error" id="${id}-error">${f.error}</span>`
        : ''
    }`,
  };
}

/** More attributes of a control (`min`, `step`, `list`), escaped; undefined ones left out. */
export type ExtraAttrs = Record<string, string | number | undefined>;

function extraAttrs(attrs: ExtraAttrs | undefined): Html[] {
  return Object.entries(attrs ?? {})
    .filter(([k, v]) => v !== undefined && /^[a-z][a-z-]*$/.test(k))
    .map(([k, v]) => html` ${trusted(k)}="${v}"`);
}

/** `extra`: markup after the control, inside the field (a file picker beside an id field). */
export function textField(
  f: FieldBase & { value?: string; type?: string; autocomplete?: string; placeholder?: string; inputmode?: string; attrs?: ExtraAttrs; extra?: Html },
): Html {
  const p = fieldParts(f);
  return html`<div class="field">${p.label}<input type="${f.type ?? 'text'}" id="${p.id}" name="${f.name}" \
value="${f.value ?? ''}"${when(
    f.autocomplete,
    html` \
autocomplete="${f.autocomplete ?? ''}"`,
  )}${when(
    f.placeholder,
    html` \
placeholder="${f.placeholder ?? ''}"`,
  )}${when(
    f.inputmode,
    html` \
inputmode="${f.inputmode ?? ''}"`,
  )}${extraAttrs(f.attrs)}${p.attrs}>${f.extra ?? ''}${p.after}</div>`;
}

export function textareaField(f: FieldBase & { value?: string; rows?: number; spellcheck?: boolean; className?: string; attrs?: ExtraAttrs }): Html {
  const p = fieldParts(f);
  return html`<div class="field${f.className ? ` ${f.className}` : ''}">${p.label}<textarea id="${p.id}" name="${f.name}" rows="${f.rows ?? 8}"${when(
    f.spellcheck === false,
    ' spellcheck="false"',
  )}${extraAttrs(f.attrs)}${p.attrs}>${f.value ?? ''}</textarea>${p.after}</div>`;
}

export interface Option {
  value: string;
  label: string;
}

export function selectField(f: FieldBase & { options: Option[]; value?: string }): Html {
  const p = fieldParts(f);
  const options = f.options.map((o) => html`<option value="${o.value}"${when(o.value === (f.value ?? ''), ' selected')}>${o.label}</option>`);
  return html`<div class="field">${p.label}<select id="${p.id}" name="${f.name}"${p.attrs}>${options}</select>${p.after}</div>`;
}

/** Checkboxes under one legend (a key's scopes): the fieldset carries the id its error links to. */
export function checkboxesField(f: Omit<FieldBase, 'label' | 'required'> & { legend: string; options: Option[]; checked: ReadonlySet<string> }): Html {
  const id = f.id ?? f.name;
  const described = [f.help ? `${id}-help` : '', f.error ? `${id}-error` : ''].filter(Boolean).join(' ');
  const boxes = f.options.map(
    (o, i) =>
      html`<label class="check" for="${id}-${i}"><input type="checkbox" id="${id}-${i}" name="${f.name}" \
value="${o.value}"${when(f.checked.has(o.value), ' checked')}> <span>${o.label}</span></label>`,
  );
  return html`<fieldset class="field checks" id="${id}" tabindex="-1"${when(
    described,
    html` \
aria-describedby="${described}"`,
  )}${when(f.error, ' aria-invalid="true"')}><legend>${f.legend}</legend><div \
class="check-grid">${boxes}</div>${
    f.help
      ? html`<span class="help" \
id="${id}-help">${f.help}</span>`
      : ''
  }${
    f.error
      ? html`<span class="field-error" \
id="${id}-error">${f.error}</span>`
      : ''
  }</fieldset>`;
}

/** The errors of a refused form, at its top: each links to its field (`''`: the form as a whole). */
export function errorSummary(errors: FieldErrors | undefined, heading = 'This could not be done'): Html {
  const entries = Object.entries(errors ?? {});
  if (!entries.length) return html``;
  const items = entries.map(([field, message]) => (field ? html`<li><a href="#${field}">${message}</a></li>` : html`<li>${message}</li>`));
  return html`<div class="alert" role="alert" tabindex="-1" id="form-errors"><p><strong>${heading}</strong></p><ul>${items}</ul></div>`;
}

/** A form of one button (an action on a resource): POSTs `action` with the CSRF value and `fields`. */
export function actionButton(
  page: PageContext<unknown>,
  o: { action: string; label: string; fields?: Record<string, string>; className?: string; describedBy?: string; formClass?: string },
): Html {
  const hidden = Object.entries(o.fields ?? {}).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`);
  return html`<form method="post" action="${o.action}" \
class="inline-form${o.formClass ? ` ${o.formClass}` : ''}">${csrfField(page)}${hidden}<button type="submit" \
class="${o.className ?? 'secondary'}"${when(
    o.describedBy,
    html` \
aria-describedby="${o.describedBy ?? ''}"`,
  )}>${o.label}</button></form>`;
}
