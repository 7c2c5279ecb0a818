// File inputs of a run (DESIGN.md 7): an input property with `format: 'file'` (or an array of
// them) takes an `upl_` or `file_` id the launcher may read. Each becomes a `file_` of the run,
// sharing the bytes of what it came from, checked first against the agent's `file_constraints`
// (`accept`, `max_size`). The run's stored input names the run's own file ids; the worker
// mounts the files read-only at `/workspace/input/<field>/<name>` (activities/run-files.ts), so
// a file field's name and a file's name must each be one plain path segment (./confine.ts).
import type { Knex } from 'knex';
import { problem, type ProblemFieldError } from '../errors.ts';
import { newId } from '../ids.ts';
import type { OwnerColumns, RunRow } from '../runs/model.ts';
import { SAFE_NAME_RULE, unsafeNameReason } from './confine.ts';
import { type FileRow, runFileColumns } from './model.ts';

/** An id a file property takes (the `file` format of agent input schemas). */
export const FILE_INPUT_ID = /^(upl|file)_[0-9A-Za-z]{1,64}$/;

/** Input properties that take files: `format: 'file'`, or an array whose items have it. */
export function fileFields(schema: Record<string, any> | null | undefined): Map<string, { multiple: boolean }> {
  const out = new Map<string, { multiple: boolean }>();
  for (const [field, prop] of Object.entries((schema?.properties ?? {}) as Record<string, any>)) {
    if (prop?.format === 'file') out.set(field, { multiple: false });
    else if (prop?.type === 'array' && prop.items?.format === 'file') out.set(field, { multiple: true });
  }
  return out;
}

/**
 * The file fields of `schema` whose names cannot be a folder of /workspace/input, as field
 * errors (`prefix` + the name). Checked when a manifest enters (import, inline) and again at
 * launch, for versions stored before the check existed.
 */
export function unsafeFileFieldErrors(schema: Record<string, any> | null | undefined, prefix = ''): ProblemFieldError[] {
  const errors: ProblemFieldError[] = [];
  for (const field of fileFields(schema).keys()) {
    const reason = unsafeNameReason(field);
    if (!reason) continue;
    const at = `${prefix}${field}`;
    // The name is quoted in the message: it may hold a line break or a climb like `../..`.
    errors.push({
      field: at,
      code: 'invalid_format',
      message: `${prefix}${JSON.stringify(field)}: the name of a file input must be ${SAFE_NAME_RULE} (it ${reason})`,
    });
  }
  return errors;
}

interface Constraint {
  accept?: string | string[];
  max_size?: number;
}

/**
 * `accept` as an HTML file input reads it: MIME types (`application/pdf`), wildcards
 * (`image/*`) and extensions (`.csv`), a string of them separated by commas or a list.
 */
export function accepts(accept: Constraint['accept'], name: string, contentType: string): boolean {
  if (accept === undefined) return true;
  const entries = (Array.isArray(accept) ? accept : accept.split(',')).map((a) => a.trim().toLowerCase()).filter(Boolean);
  if (!entries.length) return true;
  const type = contentType.split(';')[0].trim().toLowerCase();
  const lower = name.toLowerCase();
  return entries.some((a) => {
    if (a.startsWith('.')) return lower.endsWith(a);
    if (a.endsWith('/*')) return type.startsWith(a.slice(0, -1));
    return type === a;
  });
}

interface Source {
  id: string;
  name: string;
  content_type: string;
  size: string | number;
  sha256: string | null;
  storage_key: string;
}

/** A file row of the run, written with the run (`insertInputFiles`). */
export type InputFile = Pick<FileRow, 'id' | 'field' | 'name' | 'content_type' | 'size' | 'sha256' | 'storage_key'>;

export interface ResolvedInputFiles {
  /** The input with every file id replaced by the id of the run's own file. */
  input: Record<string, unknown>;
  files: InputFile[];
}

/**
 * Checks every file of `input` (already valid against the schema) and plans the run's files.
 * `canRead` is the launcher's run-visibility rule; an id it may not read is "not found", as on
 * GET. Reads only: nothing is written until the run is (`insertInputFiles`).
 */
export async function resolveInputFiles(
  knex: Knex,
  where: { orgId: string; spaceId: string; canRead: (row: OwnerColumns) => boolean },
  agent: { inputSchema: Record<string, any> | null; manifest: Record<string, any> },
  input: Record<string, unknown>,
): Promise<ResolvedInputFiles> {
  const fields = fileFields(agent.inputSchema);
  if (!fields.size) return { input, files: [] };
  const constraints = (agent.manifest.input?.file_constraints ?? {}) as Record<string, Constraint>;
  const errors = unsafeFileFieldErrors(agent.inputSchema);
  if (errors.length) throw problem('validation_failed', { detail: errors[0].message, errors });
  const files: InputFile[] = [];
  const out = { ...input };
  for (const [field, { multiple }] of fields) {
    const value = input[field];
    if (value === undefined || value === null) continue;
    const ids = (multiple ? (value as unknown[]) : [value]) as string[];
    const replaced: string[] = [];
    for (const [i, id] of ids.entries()) {
      const at = multiple ? `${field}.${i}` : field;
      const source = await findSource(knex, where, id);
      if (!source) {
        errors.push({ field: at, code: 'file_not_found', message: `${at}: no completed upload or file ${id} that you may read in this space` });
        continue;
      }
      const badName = unsafeNameReason(source.name);
      if (badName) {
        errors.push({
          field: at,
          code: 'invalid_format',
          message: `${at}: the file's name ${JSON.stringify(source.name)} must be ${SAFE_NAME_RULE} (it ${badName})`,
        });
        continue;
      }
      const c = constraints[field] ?? {};
      const size = Number(source.size);
      if (!accepts(c.accept, source.name, source.content_type)) {
        const accepted = Array.isArray(c.accept) ? c.accept.join(', ') : c.accept;
        errors.push({
          field: at,
          code: 'file_type_not_accepted',
          message: `${at}: ${source.name} (${source.content_type}) is not one of the accepted types: ${accepted}`,
        });
        continue;
      }
      if (c.max_size !== undefined && size > c.max_size) {
        errors.push({ field: at, code: 'file_too_large', message: `${at}: ${source.name} is ${size} bytes; this field accepts at most ${c.max_size}` });
        continue;
      }
      const fileId = newId('file');
      files.push({ id: fileId, field, name: source.name, content_type: source.content_type, size, sha256: source.sha256!, storage_key: source.storage_key });
      replaced.push(fileId);
    }
    out[field] = multiple ? replaced : replaced[0];
  }
  if (errors.length) throw problem('validation_failed', { detail: errors[0].message, errors });
  return { input: out, files };
}

async function findSource(
  knex: Knex,
  where: { orgId: string; spaceId: string; canRead: (row: OwnerColumns) => boolean },
  id: string,
): Promise<Source | undefined> {
  const scope = { org_id: where.orgId, space_id: where.spaceId, id };
  const row: (Source & OwnerColumns) | undefined = id.startsWith('upl_')
    ? await knex('uploads').where(scope).whereNotNull('completed_at').where('expires_at', '>', knex.fn.now()).first()
    : await knex('files')
        .where(scope)
        .where((q) => q.whereNull('expires_at').orWhere('expires_at', '>', knex.fn.now()))
        .first();
  return row && where.canRead(row) ? row : undefined;
}

/** Writes the run's input files in the run's transaction, owned as the run is. */
export async function insertInputFiles(knex: Knex, run: RunRow, files: InputFile[]): Promise<void> {
  if (!files.length) return;
  const columns = runFileColumns(run, 'input');
  await knex('files').insert(files.map((f) => ({ ...f, ...columns })));
}
