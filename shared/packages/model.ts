// Response schemas of the package representations, published in OpenAPI: agents (SPEC 2.10) and
// the other package types (SPEC 2.11). The rows they describe (PackageRow, PackageVersionRow) stay
// in types.ts, which some thirty files import; the DTOs that fill these schemas are built by
// representation.ts from those rows.
import { nullableDateTime } from '../json-schema.ts';

const nullableString = { type: ['string', 'null'] } as const;
const object = { type: 'object' } as const;
const nullableObject = { type: ['object', 'null'] } as const;
const homeFields = {
  version_count: { type: 'integer' },
  has_unarchived_changes: { type: 'boolean' },
  forked_from: nullableString,
  home_space_id: { type: 'string' },
  home_writable: { type: 'boolean' },
  home_deletable: { type: 'boolean' },
  home_shareable: { type: 'boolean' },
} as const;

/** SPEC 2.10. */
export const agentSchema = {
  type: 'object',
  required: ['object', 'id', 'scope', 'definition', 'prompt', 'input', 'output', 'dependencies', 'home_space_id', 'effective_timeout_seconds'],
  properties: {
    object: { const: 'agent' },
    id: { type: 'string', description: 'Package id `@scope/name`' },
    display_name: nullableString,
    description: nullableString,
    source: { type: 'string' },
    scope: { type: 'string' },
    version: { ...nullableString, description: 'Latest published version' },
    definition: { ...object, description: 'Draft manifest' },
    manifest: { ...nullableObject, description: 'Manifest of the latest published version' },
    prompt: { type: 'string', description: 'Draft prompt.md' },
    updatedAt: nullableDateTime,
    input: {
      type: 'object',
      properties: {
        values: object,
        locked_fields: { type: 'array', items: { type: 'string' } },
        schema: nullableObject,
        file_constraints: object,
        ui_hints: object,
        property_order: { type: 'array', items: { type: 'string' } },
      },
    },
    output: { type: 'object', properties: { schema: nullableObject, property_order: { type: 'array', items: { type: 'string' } } } },
    dependencies: {
      type: 'object',
      properties: {
        skills: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              id: { type: 'string' },
              version: nullableString,
              range: { type: 'string' },
              name: { type: 'string' },
              description: { type: 'string' },
              home_writable: { type: 'boolean' },
            },
          },
        },
        mcp_servers: { type: 'array', items: { type: 'object', properties: { id: { type: 'string' }, version: nullableString } } },
        integrations: {
          type: 'array',
          items: { type: 'object', properties: { id: { type: 'string' }, version: nullableString, tools: { type: 'array' }, scopes: { type: 'array' } } },
        },
      },
    },
    last_run: {
      type: ['object', 'null'],
      properties: {
        id: { type: 'string' },
        status: { type: 'string' },
        started_at: { ...nullableDateTime, type: ['string', 'null'] },
        duration: { type: ['integer', 'null'], description: 'Milliseconds; null until the run finishes, and for a run that never started' },
      },
    },
    running_runs: { type: 'integer' },
    ...homeFields,
    effective_timeout_seconds: { type: 'integer' },
    active: { type: 'boolean' },
  },
};

/** SPEC 2.11. */
export const packageSchema = {
  type: 'object',
  required: ['object', 'type', 'id', 'orgId', 'definition', 'home_space_id'],
  properties: {
    object: { const: 'package' },
    type: { enum: ['skill', 'integration', 'mcp-server'] },
    id: { type: 'string' },
    orgId: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    description: nullableString,
    definition: { ...object, description: 'Draft manifest' },
    content: { ...nullableString, description: 'Draft SKILL.md (skills)' },
    source: { type: 'string' },
    created_by: nullableString,
    auto_installed: { type: 'boolean' },
    version: nullableString,
    manifest: nullableObject,
    manifest_name: { type: 'string' },
    ...homeFields,
    agents: { type: 'array', items: { type: 'object', properties: { id: { type: 'string' }, display_name: nullableString } } },
    createdAt: nullableDateTime,
    updatedAt: nullableDateTime,
  },
};

export const anyPackageSchema = { oneOf: [agentSchema, packageSchema] };
