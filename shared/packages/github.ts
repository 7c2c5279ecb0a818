// Fetching a package from a GitHub repository (SPEC 4.6 `import-github`): the zip of `ref`
// from codeload (GITHUB_CODELOAD_URL), under the egress policy (SSRF checks, no redirect
// followed, a byte cap and a timeout), keeping only the files under `path`. When codeload has
// no such archive, the REST API (GITHUB_API_URL) tells a missing repository from a missing ref.
import { request } from 'undici';
import type { Config } from '../config.ts';
import { EgressError, checkDestination, egressDispatcher } from '../egress.ts';
import { problem } from '../errors.ts';
import { readCapped } from '../http/read-capped.ts';
import { readArchive } from './archive.ts';
import type { FileMap } from './types.ts';

const MiB = 1024 * 1024;

export const GITHUB_LIMITS = {
  /** A repository zip holds the whole tree at `ref`; only the files under `path` are kept. */
  maxArchiveBytes: 50 * MiB,
  /** Connect, first byte and whole download, each. */
  timeoutMs: 30_000,
};

export interface GithubSource {
  /** `owner/name` */
  repo: string;
  /** Branch, tag or commit SHA. */
  ref: string;
  /** Folder of the package inside the repository; empty or absent = the repository root. */
  path?: string;
}

type GithubConfig = Pick<Config, 'githubApiUrl' | 'githubCodeloadUrl' | 'egressAllowInternalHosts' | 'extraCaCertsPath'>;

const HEADERS = { 'user-agent': 'agent-execution-service (package import)' };

function unreachable(what: string, why: string): Error {
  return problem('github_unreachable', `${what}: ${why}`);
}

/** GETs `url` under the egress policy; the body is cut (and the call refused) beyond `maxBytes`. */
async function egressGet(config: GithubConfig, url: string, accept: string, maxBytes: number): Promise<{ status: number; body: Buffer }> {
  try {
    await checkDestination(url, { allowInternalHosts: config.egressAllowInternalHosts });
  } catch (err) {
    if (err instanceof EgressError) throw unreachable(`${new URL(url).origin} is refused by the egress policy`, err.message);
    throw err;
  }
  const dispatcher = egressDispatcher(config.egressAllowInternalHosts, GITHUB_LIMITS.timeoutMs, config.extraCaCertsPath);
  try {
    const res = await request(url, {
      method: 'GET',
      headers: { ...HEADERS, accept },
      dispatcher,
      headersTimeout: GITHUB_LIMITS.timeoutMs,
      bodyTimeout: GITHUB_LIMITS.timeoutMs,
      signal: AbortSignal.timeout(GITHUB_LIMITS.timeoutMs),
    });
    const declared = Number(res.headers['content-length'] ?? 0);
    if (declared > maxBytes) {
      res.body.destroy();
      throw problem('archive_too_large', `${url} is ${declared} bytes; at most ${maxBytes} are downloaded`);
    }
    const body = await readCapped(res.body, maxBytes, () => problem('archive_too_large', `${url} answers more than ${maxBytes} bytes`));
    return { status: res.statusCode, body };
  } catch (err) {
    if ((err as { code?: string }).code === 'archive_too_large') throw err;
    const cause = (err as { cause?: Error }).cause;
    const reason =
      err instanceof EgressError || cause instanceof EgressError
        ? `refused by the egress policy (${(cause ?? (err as Error)).message})`
        : (err as Error).message;
    throw unreachable(`${new URL(url).origin} could not be reached`, reason);
  } finally {
    await dispatcher.close().catch(() => undefined);
  }
}

function segments(value: string): string {
  return value.split('/').map(encodeURIComponent).join('/');
}

/** Codeload had no archive: which of the repository and the ref is missing (404 either way). */
async function missing(config: GithubConfig, src: GithubSource): Promise<Error> {
  let repoStatus: number | undefined;
  try {
    repoStatus = (await egressGet(config, `${config.githubApiUrl}/repos/${segments(src.repo)}`, 'application/vnd.github+json', MiB)).status;
  } catch {
    // The API is only asked to tell the two apart: without it, name both.
  }
  if (repoStatus === 404) {
    const message = `GitHub has no repository ${src.repo} (or it is private)`;
    return problem('not_found', { detail: message, param: 'repo', errors: [{ field: 'repo', code: 'not_found', message }] });
  }
  if (repoStatus === 200) {
    const message = `The repository ${src.repo} has no branch, tag or commit ${src.ref}`;
    return problem('not_found', { detail: message, param: 'ref', errors: [{ field: 'ref', code: 'not_found', message }] });
  }
  const message = `GitHub has no archive of ${src.repo} at ${src.ref}: the repository or the ref does not exist (or the repository is private)`;
  return problem('not_found', {
    detail: message,
    param: 'repo',
    errors: [
      { field: 'repo', code: 'not_found', message },
      { field: 'ref', code: 'not_found', message },
    ],
  });
}

/**
 * The files under `src.path` of the repository at `src.ref`, keyed relative to that folder.
 * 404 `not_found` names a missing repository, ref or path; 502 `github_unreachable` covers an
 * egress refusal, a connection failure, a timeout or an unexpected answer.
 */
export async function fetchGithubFiles(config: GithubConfig, src: GithubSource): Promise<FileMap> {
  const url = `${config.githubCodeloadUrl}/${segments(src.repo)}/zip/${segments(src.ref)}`;
  const res = await egressGet(config, url, 'application/zip', GITHUB_LIMITS.maxArchiveBytes);
  if (res.status === 404) throw await missing(config, src);
  if (res.status !== 200) throw unreachable(`GitHub did not serve the archive of ${src.repo}@${src.ref}`, `${url} answered ${res.status}`);
  const folder = (src.path ?? '').replace(/^\/+|\/+$/g, '');
  const prefix = folder ? `${folder}/` : '';
  // Codeload wraps the tree in one top-level folder (`<repo>-<ref>/`).
  const files = await readArchive(res.body, {
    maxArchiveBytes: GITHUB_LIMITS.maxArchiveBytes,
    select: (name) => {
      const inner = name.slice(name.indexOf('/') + 1);
      return name.includes('/') && inner.startsWith(prefix) ? inner.slice(prefix.length) : undefined;
    },
  });
  if (Object.keys(files).length === 0) {
    const message = folder ? `${src.repo}@${src.ref} has no folder ${folder}` : `${src.repo}@${src.ref} holds no files`;
    throw problem('not_found', { detail: message, param: 'path', errors: [{ field: 'path', code: 'not_found', message }] });
  }
  return files;
}
