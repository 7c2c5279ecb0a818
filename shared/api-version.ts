// SPEC 9: date-based API versions. Resolution: request header, then the organization's pin,
// then the current version. A version we cannot serve is an error, never a silent fallback.
import { problem } from './errors.ts';

export const CURRENT_API_VERSION = '2026-03-21';
export const SUPPORTED_API_VERSIONS: ReadonlySet<string> = new Set([CURRENT_API_VERSION]);

export function assertServable(version: string, source: 'header' | 'organization pin'): string {
  if (!SUPPORTED_API_VERSIONS.has(version)) {
    throw problem('unsupported_api_version', {
      detail:
        source === 'header'
          ? `Service-Version "${version}" cannot be served; supported: ${[...SUPPORTED_API_VERSIONS].join(', ')}`
          : `The organization is pinned to API version "${version}", which this server cannot serve`,
      param: source === 'header' ? 'Service-Version' : undefined,
    });
  }
  return version;
}
