// A form generated from an agent's input schema (SPEC 2.10: `input.schema`, `property_order`,
// `ui_hints`, `file_constraints`), and the input read back from it. Each property is one field
// of the kind its schema says (text, number, yes/no, a choice, a date, a file, a list, JSON),
// named `input.<property>`; what the person typed comes back as typed after a refusal, with the
// reason beside the field. The server's own validation (the launch's, the schedule's) stays the
// judge: this only turns form text into JSON values, and says so when it cannot.
import type { ProblemError } from '../../../shared/errors.ts';
import { FILE_INPUT_ID } from '../../../shared/files/run-inputs.ts';
import type { FieldErrors } from '../forms.ts';
import { selectField, textareaField, textField } from '../forms.ts';
import { type Html, html } from '../html.ts';

type Prop = Record<string, any>;

export interface InputSpec {
  schema: Record<string, any> | null;
  propertyOrder?: string[];
  uiHints?: Record<string, { placeholder?: string }>;
  fileConstraints?: Record<string, { accept?: string | string[]; max_size?: number }>;
  /** File fields get a file picker that uploads through the API (controllers/upload.js); else ids only. */
  uploads: boolean;
}

/** The manifest's `input` of an agent version as a spec. */
export function inputSpecOf(manifest: Record<string, any> | null | undefined, uploads: boolean): InputSpec {
  const input = manifest?.input ?? {};
  return { schema: input.schema ?? null, propertyOrder: input.property_order, uiHints: input.ui_hints, fileConstraints: input.file_constraints, uploads };
}

/** What a form field holds, as text: the person's typing, or a value written for the form. */
export type RawValues = Record<string, string>;

type Kind = 'text' | 'textarea' | 'number' | 'integer' | 'boolean' | 'enum' | 'date' | 'datetime' | 'email' | 'url' | 'file' | 'files' | 'list' | 'json';

const WHOLE_INPUT = '(input)';

function typeOf(p: Prop): string | undefined {
  return Array.isArray(p.type) ? p.type.find((t: string) => t !== 'null') : p.type;
}

function kindOf(p: Prop): Kind {
  const type = typeOf(p);
  if (Array.isArray(p.enum) && p.enum.every((v: unknown) => v === null || typeof v !== 'object')) return 'enum';
  if (type === 'boolean') return 'boolean';
  if (type === 'integer') return 'integer';
  if (type === 'number') return 'number';
  if (type === 'array') {
    const items = (p.items ?? {}) as Prop;
    if (items.format === 'file') return 'files';
    return ['string', 'number', 'integer'].includes(typeOf(items) ?? '') && !Array.isArray(items.enum) ? 'list' : 'json';
  }
  if (type === 'string' || (type === undefined && p.format)) {
    const byFormat: Record<string, Kind> = { file: 'file', date: 'date', 'date-time': 'datetime', email: 'email', uri: 'url' };
    if (byFormat[p.format]) return byFormat[p.format];
    return (p.maxLength ?? 0) > 300 ? 'textarea' : 'text';
  }
  return 'json';
}

/** The properties in the order to show them: `property_order` first, then the rest as declared. */
function fieldsOf(spec: InputSpec): [string, Prop][] {
  const props = (spec.schema?.properties ?? {}) as Record<string, Prop>;
  const order = [...(spec.propertyOrder ?? []).filter((k) => k in props), ...Object.keys(props)];
  return [...new Set(order)].map((k) => [k, props[k] ?? {}]);
}

/** The element id of a property's field (and the key of its error). */
export function inputFieldId(field: string): string {
  return `input-${field.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}

function enumText(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** An input object as the form's text: for a first render (defaults, a schedule's input). */
export function rawValuesOf(spec: InputSpec, input: Record<string, unknown> | undefined, withDefaults = true): RawValues {
  if (!spec.schema) return { [WHOLE_INPUT]: JSON.stringify(input ?? {}, null, 2) };
  const out: RawValues = {};
  for (const [field, p] of fieldsOf(spec)) {
    const v = input && field in input ? input[field] : withDefaults ? p.default : undefined;
    if (v === undefined || v === null) continue;
    const kind = kindOf(p);
    if (kind === 'list' || kind === 'files') out[field] = Array.isArray(v) ? v.map(String).join(kind === 'list' ? '\n' : ', ') : String(v);
    else if (kind === 'json') out[field] = JSON.stringify(v, null, 2);
    else if (kind === 'enum') out[field] = enumText(v);
    else if (kind === 'datetime' && typeof v === 'string') out[field] = v.replace(/(:00)?(\.0+)?Z$/, '');
    else out[field] = String(v);
  }
  return out;
}

/** The form's text as the person sent it. */
export function rawValuesFrom(spec: InputSpec, form: URLSearchParams): RawValues {
  if (!spec.schema) return { [WHOLE_INPUT]: form.get('input') ?? '' };
  const out: RawValues = {};
  for (const [field] of fieldsOf(spec)) {
    const v = form.get(`input.${field}`);
    if (v !== null) out[field] = v;
  }
  return out;
}

function acceptOf(c: InputSpec['fileConstraints'], field: string): string | undefined {
  const accept = c?.[field]?.accept;
  return accept === undefined ? undefined : Array.isArray(accept) ? accept.join(',') : accept;
}

function fileHelp(spec: InputSpec, field: string, multiple: boolean): string {
  const c = spec.fileConstraints?.[field];
  const limits = [
    acceptOf(spec.fileConstraints, field) ? `accepts ${acceptOf(spec.fileConstraints, field)}` : '',
    c?.max_size ? `at most ${c.max_size.toLocaleString('en-US')} bytes` : '',
  ]
    .filter(Boolean)
    .join(', ');
  const how = spec.uploads
    ? `Choose ${multiple ? 'files' : 'a file'} (uploaded when chosen), or write ${multiple ? 'ids' : 'the id'} of an upload (upl_…) or a file (file_…)`
    : `The id${multiple ? 's' : ''} of a kept file (file_…)${multiple ? ', separated by commas' : ''}: an upload lapses within the hour`;
  return limits ? `${how}; ${limits}.` : `${how}.`;
}

/** One property's field. */
function field(spec: InputSpec, name: string, p: Prop, raw: string | undefined, error: string | undefined, required: boolean): Html {
  const id = inputFieldId(name);
  const base = { id, name: `input.${name}`, label: String(p.title ?? name), error, required };
  const help = typeof p.description === 'string' ? p.description : undefined;
  const placeholder = spec.uiHints?.[name]?.placeholder;
  const kind = kindOf(p);
  switch (kind) {
    case 'enum': {
      const options = [
        ...(required && raw ? [] : [{ value: '', label: '—' }]),
        ...(p.enum as unknown[]).map((v) => ({ value: enumText(v), label: enumText(v) })),
      ];
      return selectField({ ...base, help, options, value: raw ?? '' });
    }
    case 'boolean':
      return selectField({
        ...base,
        help,
        value: raw ?? '',
        options: [
          { value: '', label: '—' },
          { value: 'true', label: 'Yes' },
          { value: 'false', label: 'No' },
        ],
      });
    case 'integer':
    case 'number':
      return textField({
        ...base,
        help,
        type: 'number',
        value: raw,
        placeholder,
        inputmode: kind === 'integer' ? 'numeric' : 'decimal',
        attrs: { min: p.minimum, max: p.maximum, step: kind === 'integer' ? 1 : 'any' },
      });
    case 'date':
      return textField({ ...base, help, type: 'date', value: raw });
    case 'datetime':
      return textField({ ...base, label: `${base.label} (UTC)`, help, type: 'datetime-local', value: raw, attrs: { step: 1 } });
    case 'email':
    case 'url':
      return textField({ ...base, help, type: kind, value: raw, placeholder });
    case 'file':
    case 'files': {
      const multiple = kind === 'files';
      const picker = spec.uploads
        ? html`<input type="file" class="file-picker" id="${id}-file" \
aria-label="Choose ${multiple ? 'files' : 'a file'} \
for ${base.label}"${multiple ? ' multiple' : ''}${
            acceptOf(spec.fileConstraints, name)
              ? html` \
accept="${acceptOf(spec.fileConstraints, name) ?? ''}"`
              : ''
          } hidden><span class="upload-status help" id="${id}-upload" \
role="status"></span>`
        : undefined;
      const control = textField({
        ...base,
        help: [help, fileHelp(spec, name, multiple)].filter(Boolean).join(' '),
        value: raw,
        placeholder: placeholder ?? (multiple ? 'upl_…, file_…' : 'upl_… or file_…'),
        attrs: { spellcheck: 'false', autocomplete: 'off' },
        extra: picker,
      });
      return spec.uploads ? html`<div class="file-input" data-controller="upload" data-target="${id}">${control}</div>` : control;
    }
    case 'list':
      return textareaField({ ...base, help: [help, 'One value a line.'].filter(Boolean).join(' '), value: raw, rows: 4, attrs: { placeholder } });
    case 'json':
      return textareaField({
        ...base,
        help: [help, `JSON (${typeOf(p) ?? 'any value'}).`].filter(Boolean).join(' '),
        value: raw,
        rows: 5,
        spellcheck: false,
        className: 'code',
        attrs: { placeholder },
      });
    case 'textarea':
      return textareaField({ ...base, help, value: raw, rows: 5, attrs: { placeholder, maxlength: p.maxLength } });
    default:
      return textField({ ...base, help, value: raw, placeholder, attrs: { maxlength: p.maxLength } });
  }
}

/** The fields of the input schema, in `property_order`, holding `values`, with `errors` beside them. */
export function inputFields(spec: InputSpec, values: RawValues, errors: FieldErrors = {}): Html {
  if (!spec.schema) {
    return textareaField({
      id: 'input-json',
      name: 'input',
      label: 'Input (JSON)',
      help: 'The agent declares no input schema: any JSON object.',
      value: values[WHOLE_INPUT] ?? '{}',
      rows: 8,
      spellcheck: false,
      className: 'code',
      error: errors['input-json'],
    });
  }
  const fields = fieldsOf(spec);
  if (!fields.length) return html`<p class="note">This agent takes no input.</p>`;
  const required = new Set<string>(Array.isArray(spec.schema.required) ? spec.schema.required : []);
  return html`${fields.map(([name, p]) => field(spec, name, p, values[name], errors[inputFieldId(name)], required.has(name)))}`;
}

function scalar(kind: 'number' | 'integer' | 'text', raw: string): { value?: unknown; error?: string } {
  if (kind === 'text') return { value: raw };
  if (kind === 'integer') return /^-?\d+$/.test(raw) ? { value: Number(raw) } : { error: 'Write a whole number.' };
  const n = Number(raw);
  return raw !== '' && Number.isFinite(n) ? { value: n } : { error: 'Write a number.' };
}

/** The input object the form's text says, or what keeps a field from being read. Empty fields are left out. */
export function readInputForm(spec: InputSpec, raw: RawValues): { input: Record<string, unknown>; errors: FieldErrors } {
  const errors: FieldErrors = {};
  if (!spec.schema) {
    try {
      const input = JSON.parse(raw[WHOLE_INPUT] || '{}');
      if (input && typeof input === 'object' && !Array.isArray(input)) return { input, errors };
      errors['input-json'] = 'The input must be a JSON object: { … }.';
    } catch (err) {
      errors['input-json'] = `This is not JSON: ${(err as Error).message}`;
    }
    return { input: {}, errors };
  }
  const input: Record<string, unknown> = {};
  for (const [name, p] of fieldsOf(spec)) {
    const text = (raw[name] ?? '').replace(/\r\n/g, '\n');
    const kind = kindOf(p);
    const id = inputFieldId(name);
    if (!text.trim()) continue;
    const set = (r: { value?: unknown; error?: string }) => {
      if (r.error) errors[id] = r.error;
      else input[name] = r.value;
    };
    switch (kind) {
      case 'integer':
      case 'number':
        set(scalar(kind, text.trim()));
        break;
      case 'boolean':
        set(text === 'true' || text === 'false' ? { value: text === 'true' } : { error: 'Choose yes or no.' });
        break;
      case 'enum': {
        const found = (p.enum as unknown[]).find((v) => enumText(v) === text);
        set(found === undefined ? { error: 'Choose one of the values listed.' } : { value: found });
        break;
      }
      case 'datetime':
        set(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(text) ? { value: `${text.length === 16 ? `${text}:00` : text}Z` } : { value: text });
        break;
      case 'file':
        set(FILE_INPUT_ID.test(text.trim()) ? { value: text.trim() } : { error: 'Choose a file, or write the id of an upload (upl_…) or a file (file_…).' });
        break;
      case 'files': {
        const ids = text.split(/[\s,]+/).filter(Boolean);
        const bad = ids.find((i) => !FILE_INPUT_ID.test(i));
        set(bad ? { error: `“${bad}” is not the id of an upload (upl_…) or a file (file_…).` } : { value: ids });
        break;
      }
      case 'list': {
        const itemKind = typeOf(p.items ?? {}) === 'integer' ? 'integer' : typeOf(p.items ?? {}) === 'number' ? 'number' : 'text';
        const items = text
          .split('\n')
          .map((l) => l.trim())
          .filter(Boolean)
          .map((l) => scalar(itemKind, l));
        const bad = items.find((i) => i.error);
        set(bad ? { error: `Each line: ${bad.error}` } : { value: items.map((i) => i.value) });
        break;
      }
      case 'json':
        try {
          set({ value: JSON.parse(text) });
        } catch (err) {
          set({ error: `This is not JSON: ${(err as Error).message}` });
        }
        break;
      default:
        set({ value: text });
    }
  }
  return { input, errors };
}

/**
 * A refusal's field errors (`validation_failed`: `topic`, `files.0`, or `input.topic` with
 * `prefix` 'input.') beside the fields they name; the others for the form as a whole.
 */
export function inputErrorsOf(spec: InputSpec, err: Pick<ProblemError, 'errors' | 'detail'>, prefix = ''): FieldErrors {
  const out: FieldErrors = {};
  const known = new Set(fieldsOf(spec).map(([k]) => k));
  for (const e of err.errors ?? []) {
    const path = e.field?.startsWith(prefix) ? e.field.slice(prefix.length) : (e.field ?? '');
    const top = path.split('.')[0];
    const key = !spec.schema ? 'input-json' : known.has(top) ? inputFieldId(top) : '';
    out[key] = out[key] ? `${out[key]} · ${e.message}` : e.message;
  }
  if (!Object.keys(out).length) out[''] = err.detail;
  return out;
}
