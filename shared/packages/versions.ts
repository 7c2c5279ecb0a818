// Choosing a published version: exact, the `latest` dist-tag, or a semver range.
import semver from 'semver';

/** Highest release version; prereleases only count when there is no release at all. */
export function latestOf(versions: readonly string[]): string | undefined {
  const valid = versions.filter((v) => semver.valid(v));
  const releases = valid.filter((v) => !semver.prerelease(v));
  const pool = releases.length > 0 ? releases : valid;
  return pool.length > 0 ? semver.rsort([...pool])[0] : undefined;
}

/** True when `selector` is an exact version, `latest` or a semver range. */
export function isVersionSelector(selector: string): boolean {
  return selector === 'latest' || semver.valid(selector) !== null || semver.validRange(selector) !== null;
}

/**
 * The version `selector` designates among `versions`: omitted or `latest` = latestOf; an exact
 * version must exist as written; otherwise the highest version satisfying the range.
 */
export function pickVersion(versions: readonly string[], selector?: string): string | undefined {
  if (selector === undefined || selector === '' || selector === 'latest') return latestOf(versions);
  if (semver.valid(selector)) return versions.find((v) => semver.eq(v, selector));
  if (!semver.validRange(selector)) return undefined;
  return semver.maxSatisfying([...versions], selector) ?? undefined;
}
