import { ProblemError, problem } from '../../../shared/errors.ts';
import { unsafeEntryReason } from '../../../shared/packages/archive.ts';
import { fetchGithubFiles, GITHUB_LIMITS } from '../../../shared/packages/github.ts';
import { manifestOf } from '../../../shared/packages/import.ts';
import { PACKAGE_TYPES, TYPE_SCOPES } from '../../../shared/packages/types.ts';
import { defineRoute } from '../../route.ts';
import { importedSchema, importOne } from './_import.ts';

interface Body {
  repo: string;
  ref: string;
  path?: string;
}

function badPath(message: string): Error {
  return problem('validation_failed', { detail: message, param: 'path', errors: [{ field: 'path', code: 'invalid_format', message }] });
}

/** `path` without its surrounding slashes; a folder name that could climb out is refused. */
function folderOf(path: string | undefined): string {
  const folder = (path ?? '').replace(/^\/+|\/+$/g, '');
  if (!folder) return '';
  const reason = unsafeEntryReason(folder);
  if (reason) throw badPath(`path ${reason}`);
  if (folder.split('/').some((s) => s === '' || s === '.')) throw badPath('path must be a folder of the repository, like packages/summarizer');
  return folder;
}

export default defineRoute<Body>({
  method: 'post',
  path: '/api/packages/import-github',
  operationId: 'importPackageFromGithub',
  summary: 'Import a package from a folder of a GitHub repository',
  description:
    'Downloads the zip of `repo` at `ref` (branch, tag or commit) from GitHub (`GITHUB_CODELOAD_URL`) under the egress policy, ' +
    `at most ${GITHUB_LIMITS.maxArchiveBytes / 1024 / 1024} MiB within ${GITHUB_LIMITS.timeoutMs / 1000} s, no redirect followed, ` +
    `and imports the folder \`path\` (default: the repository root) as \`POST /api/packages/import\` imports an archive: ` +
    "`manifest.json` at the folder's root, plus `prompt.md` (agent) or `SKILL.md` (skill), at most 200 files and 20 MiB. Public repositories only. " +
    'A missing repository, ref or folder is 404 `not_found` naming it (`param`, `errors[].field`); GitHub unreachable or refused ' +
    'by the egress policy is 502 `github_unreachable`.',
  tag: 'Packages',
  auth: 'any',
  context: 'space',
  rateLimit: { points: 10, duration: 60, by: 'identity' },
  body: {
    type: 'object',
    additionalProperties: false,
    required: ['repo', 'ref'],
    properties: {
      repo: { type: 'string', maxLength: 140, pattern: '^[A-Za-z0-9][A-Za-z0-9-]{0,38}/(?!\\.\\.?$)[A-Za-z0-9._-]{1,100}$', description: '`owner/name`' },
      ref: {
        type: 'string',
        maxLength: 255,
        pattern: '^(?!.*\\.\\.)(?!\\.)(?!.*/\\.)[A-Za-z0-9._+-]+(?:/[A-Za-z0-9._+-]+)*$',
        description: 'Branch, tag or commit SHA',
      },
      path: { type: 'string', maxLength: 255, description: 'Folder of the package in the repository; default the root' },
    },
  },
  responses: {
    201: { description: "Published; the `ETag` header is the draft's", schema: importedSchema },
    502: {
      description: '`github_unreachable`: `GITHUB_CODELOAD_URL` could not be reached, was refused by the egress policy, or answered other than 200 or 404',
      contentType: 'application/problem+json',
      schema: { $ref: '#/components/schemas/Problem' },
    },
  },
  async handler(ctx, { body }) {
    const t = ctx.state.tenancy!;
    const folder = folderOf(body.path);
    // Nothing is fetched for a caller who could import no package type at all.
    if (!PACKAGE_TYPES.some((type) => t.scopes.has(TYPE_SCOPES[type].write))) {
      throw problem(
        'forbidden',
        'Importing a package needs the write permission of its type (agents:write, skills:write, integrations:write or mcp-servers:write) in this space',
      );
    }
    const files = await fetchGithubFiles(ctx.services.config, { repo: body.repo, ref: body.ref, path: folder });
    const where = `${body.repo}@${body.ref}${folder ? `:${folder}` : ''}`;
    let type: ReturnType<typeof manifestOf>['type'];
    try {
      ({ type } = manifestOf(files));
    } catch (err) {
      // Say where the folder came from: "no manifest.json at its root" alone would puzzle.
      if (err instanceof ProblemError) throw problem(err.code, { detail: `${where}: ${err.detail}`, errors: err.errors });
      throw err;
    }
    await importOne(ctx, files, type);
  },
});
