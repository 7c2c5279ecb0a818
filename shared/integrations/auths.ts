// An integration's auths as the service uses them (SPEC 2.12, DESIGN.md 7): which fields a
// connection collects, how (`fields`, a declarative `login`, or `oauth2`), and where its
// credential may go. Read from the integration's latest published version, else its draft.
import type { Knex } from 'knex';
import { latestVersion } from '../packages/store.ts';
import type { PackageRow } from '../packages/types.ts';
import { VERSION_NAMES_SQL, visiblePackageQuery } from '../packages/visibility.ts';
import { type OAuth2Settings, oauth2SettingsOf } from './oauth2-settings.ts';

export type { OAuth2Settings } from './oauth2-settings.ts';

export interface LoginSpec {
  request: { method: string; url: string; content_type?: string; body?: unknown };
  success_criteria?: Array<{ condition: string }>;
  outputs?: Record<string, { from: 'cookie'; name: string }>;
}

export interface IntegrationAuth {
  key: string;
  type: string;
  /** JSON Schema of the fields a person submits. */
  credentialsSchema: Record<string, any>;
  fields: string[];
  connect: 'login' | 'oauth2' | 'fields';
  login?: LoginSpec;
  oauth2?: OAuth2Settings;
  authorizedUris: string[];
  /** How the credential travels (`in: header` only): `name: prefix + value`, `value` a `{$credential.<field>}` template. */
  delivery?: { in: 'header'; name: string; prefix?: string; value?: string };
}

export interface Integration {
  pkg: PackageRow;
  /** '@scope/name' */
  id: string;
  displayName: string;
  manifest: Record<string, any>;
  /** The published version the manifest is of; null: the draft (nothing published yet). */
  version: string | null;
  auths: IntegrationAuth[];
}

export function authsOf(manifest: Record<string, any>): IntegrationAuth[] {
  return Object.entries((manifest.auths ?? {}) as Record<string, any>).map(([key, a]) => {
    const credentialsSchema = (a.credentials?.schema ?? { type: 'object', properties: {} }) as Record<string, any>;
    return {
      key,
      type: String(a.type),
      credentialsSchema,
      fields: Object.keys(credentialsSchema.properties ?? {}),
      connect: a.type === 'oauth2' ? 'oauth2' : a.connect?.login ? 'login' : 'fields',
      login: a.connect?.login,
      oauth2: oauth2SettingsOf(a),
      authorizedUris: a.authorized_uris ?? [],
      delivery: a.delivery?.http,
    };
  });
}

/** The integration's manifest in force: the latest published version, else the draft. `versions`: its version names, when read with it. */
export async function integrationOf(knex: Knex, pkg: PackageRow, versions?: string[]): Promise<Integration> {
  const latest = await latestVersion(knex, pkg.id, versions);
  const manifest = (latest?.manifest ?? pkg.draft_manifest) as Record<string, any>;
  const id = `${pkg.scope}/${pkg.name}`;
  return { pkg, id, displayName: String(manifest.display_name ?? id), manifest, version: latest?.version ?? null, auths: authsOf(manifest) };
}

/** The integration `@scope/name` as the space sees it (the package visibility rule), or undefined. */
export async function findIntegration(knex: Knex, orgId: string, spaceId: string, scope: string, name: string): Promise<Integration | undefined> {
  // The package with its version names, in one query.
  const row = (await visiblePackageQuery(knex, orgId, spaceId, scope, name, 'integration')
    .select('packages.*', knex.raw(`${VERSION_NAMES_SQL} as version_names`))
    .first()) as (PackageRow & { version_names: string[] }) | undefined;
  if (!row) return undefined;
  const { version_names, ...pkg } = row;
  return integrationOf(knex, pkg as PackageRow, version_names);
}
