// Rows of the `packages` and `package_versions` tables (migration 002) and the per-type scopes.
import type { Scope } from '../permissions.ts';

export const PACKAGE_TYPES = ['agent', 'skill', 'integration', 'mcp-server'] as const;
export type PackageType = (typeof PACKAGE_TYPES)[number];

export interface StoredFile {
  encoding: 'utf8' | 'base64';
  content: string;
}
/** Files of a draft or a version, keyed by path inside the archive. */
export type FileMap = Record<string, StoredFile>;

export interface PackageRow {
  id: string;
  org_id: string;
  scope: string;
  name: string;
  type: PackageType;
  home_space_id: string;
  source: string;
  forked_from: string | null;
  auto_installed: boolean;
  ephemeral: boolean;
  created_by: string | null;
  draft_manifest: Record<string, any>;
  draft_files: FileMap;
  draft_revision: number;
  created_at: Date;
  updated_at: Date;
}

export interface PackageVersionRow {
  package_id: string;
  version: string;
  org_id: string;
  manifest: Record<string, any>;
  files: FileMap;
  created_by: string | null;
  created_at: Date;
}

/** Read, write and delete scope of each package type (SPEC 2.3). */
export const TYPE_SCOPES: Record<PackageType, { read: Scope; write: Scope; delete: Scope }> = {
  agent: { read: 'agents:read', write: 'agents:write', delete: 'agents:delete' },
  skill: { read: 'skills:read', write: 'skills:write', delete: 'skills:delete' },
  integration: { read: 'integrations:read', write: 'integrations:write', delete: 'integrations:delete' },
  'mcp-server': { read: 'mcp-servers:read', write: 'mcp-servers:write', delete: 'mcp-servers:delete' },
};

/** The file holding the main text of a type, when it has one. */
export const MAIN_FILE: Partial<Record<PackageType, string>> = { agent: 'prompt.md', skill: 'SKILL.md' };

export function fullName(p: { scope: string; name: string }): string {
  return `${p.scope}/${p.name}`;
}

/** '@acme/summarizer' -> {scope: '@acme', name: 'summarizer'}. */
export function splitName(id: string): { scope: string; name: string } | undefined {
  const m = /^(@[a-z0-9][a-z0-9-]*)\/([a-z0-9][a-z0-9-]*)$/.exec(id);
  return m ? { scope: m[1], name: m[2] } : undefined;
}

/** Text of a stored file (base64 files decoded as UTF-8). */
export function fileText(files: FileMap, path: string): string | undefined {
  const f = files[path];
  if (!f) return undefined;
  return f.encoding === 'utf8' ? f.content : Buffer.from(f.content, 'base64').toString('utf8');
}

export function fileBytes(f: StoredFile): Buffer {
  return f.encoding === 'utf8' ? Buffer.from(f.content, 'utf8') : Buffer.from(f.content, 'base64');
}
