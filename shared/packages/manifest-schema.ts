// Package manifests (SPEC 2.12, schema_version 0.x): one JSON Schema per type, published as is,
// plus the checks a schema cannot express (input/output and credentials schemas must compile,
// with patterns the linear-time engine can run; literal
// authorized_uris for auths with `connect`, login success criteria in the condition grammar,
// valid semver ranges, file inputs named as one path segment).
import type { ValidateFunction } from 'ajv';
import semver from 'semver';
import { type ProblemFieldError, problem } from '../errors.ts';
import { unsafeFileFieldErrors } from '../files/run-inputs.ts';
import { parseCondition } from '../integrations/criteria.ts';
import { bodyAjv, toFieldErrors, userSchemaErrors } from '../validation.ts';
import { oauth2ManifestErrors, TOKEN_ENDPOINT_AUTH_METHODS } from '../integrations/oauth2-settings.ts';
import { PACKAGE_TYPES, type PackageType } from './types.ts';
import { vendorMetaKeys } from './vendor-meta.ts';

/**
 * The major of the package format this service reads: every `0.x` (real packages ship `0.1`, the
 * SPEC says `0.3`); another major is refused naming the range, as the format's own runtime does.
 */
export const MANIFEST_SCHEMA_MAJOR = 0;
export const MANIFEST_SCHEMA_RANGE = `${MANIFEST_SCHEMA_MAJOR}.x`;
/** `<major>.<minor>`, a patch tolerated (the format's runtime reads only the major). */
const SCHEMA_VERSION = /^(0|[1-9]\d*)\.(0|[1-9]\d*)(\.(0|[1-9]\d*))?$/;
export const PACKAGE_NAME_PATTERN = '^@[a-z0-9][a-z0-9-]*/[a-z0-9][a-z0-9-]*$';
/** semver.org's reference expression. */
export const SEMVER_PATTERN =
  '^(0|[1-9]\\d*)\\.(0|[1-9]\\d*)\\.(0|[1-9]\\d*)(?:-((?:0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\\.(?:0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?' +
  '(?:\\+([0-9a-zA-Z-]+(?:\\.[0-9a-zA-Z-]+)*))?$';

const str = { type: 'string' } as const;
const strings = { type: 'array', items: str } as const;
const link = { type: 'string', maxLength: 2048 } as const;
const person = { oneOf: [str, { type: 'object', properties: { name: str, email: str, url: str } }] } as const;
const rangeMap = { type: 'object', propertyNames: { pattern: PACKAGE_NAME_PATTERN }, additionalProperties: { type: 'string', minLength: 1 } } as const;
const objectSchema = { type: 'object', required: ['type'], properties: { type: { const: 'object' } } } as const;

const common = {
  name: { type: 'string', pattern: PACKAGE_NAME_PATTERN, maxLength: 214 },
  version: { type: 'string', pattern: SEMVER_PATTERN, maxLength: 64 },
  type: { enum: [...PACKAGE_TYPES] },
  schema_version: { type: 'string', pattern: `^${MANIFEST_SCHEMA_MAJOR}\\.(0|[1-9]\\d*)(\\.(0|[1-9]\\d*))?$`, description: `Any ${MANIFEST_SCHEMA_RANGE}` },
  display_name: { type: 'string', minLength: 1, maxLength: 200 },
  description: { type: 'string', maxLength: 2000 },
  long_description: str,
  keywords: { type: 'array', items: { type: 'string', maxLength: 50 }, maxItems: 50 },
  license: str,
  author: person,
  repository: { oneOf: [link, { type: 'object', properties: { type: str, url: link } }] },
  homepage: link,
  documentation: link,
  support: { oneOf: [link, { type: 'object' }] },
  icon: link,
  icons: { oneOf: [{ type: 'array' }, { type: 'object' }] },
  screenshots: { type: 'array' },
  privacy_policies: { oneOf: [{ type: 'array' }, { type: 'object' }] },
  compatibility: { type: 'object', properties: { platforms: strings, runtimes: strings, clients: strings } },
  dependencies: {
    type: 'object',
    additionalProperties: false,
    properties: { skills: rangeMap, mcp_servers: rangeMap, integrations: rangeMap },
  },
  _meta: { type: 'object' },
  timeout: { type: 'integer', minimum: 1, maximum: 86400 },
  runtime_tools: { type: 'array', uniqueItems: true, items: { type: 'string', pattern: '^[a-z][a-z0-9_-]*$' } },
} as const;

const commonRequired = ['name', 'version', 'type', 'schema_version', 'display_name', 'description'];

const agentIo = (withFiles: boolean) => ({
  type: 'object',
  properties: {
    schema: objectSchema,
    property_order: strings,
    ...(withFiles
      ? {
          file_constraints: {
            type: 'object',
            additionalProperties: {
              type: 'object',
              properties: { accept: { oneOf: [str, strings] }, max_size: { type: 'integer', minimum: 1 } },
            },
          },
          ui_hints: { type: 'object', additionalProperties: { type: 'object', properties: { placeholder: str } } },
        }
      : {}),
  },
});

const login = {
  type: 'object',
  required: ['request'],
  properties: {
    request: {
      type: 'object',
      required: ['method', 'url'],
      properties: {
        method: { enum: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] },
        url: { type: 'string', minLength: 1 },
        content_type: str,
        body: {},
      },
    },
    success_criteria: { type: 'array', items: { type: 'object', required: ['condition'], properties: { condition: str } } },
    outputs: {
      type: 'object',
      additionalProperties: { type: 'object', required: ['from', 'name'], properties: { from: { const: 'cookie' }, name: str } },
    },
  },
};

const scopeSeparator = { type: 'string', minLength: 1, maxLength: 4 } as const;

const auth = {
  type: 'object',
  required: ['type'],
  properties: {
    type: { type: 'string', minLength: 1 },
    credentials: { type: 'object', properties: { schema: { type: 'object' } } },
    connect: { type: 'object', properties: { login } },
    // `type: 'oauth2'` (DESIGN.md 7): the provider's endpoints; the client is stored per organization.
    oauth2: {
      type: 'object',
      required: ['authorization_url', 'token_url'],
      properties: {
        authorization_url: { type: 'string', format: 'uri' },
        token_url: { type: 'string', format: 'uri' },
        scopes: { type: 'array', items: { type: 'string', minLength: 1 } },
        scope_separator: scopeSeparator,
        pkce: { type: 'boolean' },
      },
    },
    // The provider as packages in the field describe it (the format's own shape, read first-class
    // beside `oauth2`; shared/integrations/oauth2-settings.ts): endpoints, default scopes, how the client
    // authenticates, PKCE methods, extra authorization parameters, and the scope separator under
    // `_meta["dev.appstrate/oauth"]` (or `dev.service/oauth`).
    authorization_endpoint: { type: 'string', format: 'uri', pattern: '^https?://' },
    token_endpoint: { type: 'string', format: 'uri', pattern: '^https?://' },
    default_scopes: { type: 'array', items: { type: 'string', minLength: 1 } },
    token_endpoint_auth_method: { enum: [...TOKEN_ENDPOINT_AUTH_METHODS] },
    code_challenge_methods_supported: { type: 'array', items: { type: 'string', minLength: 1 } },
    authorization_params: { type: 'object', additionalProperties: { type: 'string' } },
    _meta: {
      type: 'object',
      properties: Object.fromEntries(vendorMetaKeys('oauth').map((k) => [k, { type: 'object', properties: { scope_separator: scopeSeparator } }])),
    },
    authorized_uris: { type: 'array', items: { type: 'string', minLength: 1 } },
    delivery: {
      type: 'object',
      properties: {
        http: {
          type: 'object',
          properties: {
            // Only `header` is implemented; `cookie` is refused at import (SPEC 2.12).
            in: { enum: ['header'] },
            name: str,
            prefix: str,
            value: str,
          },
        },
      },
    },
  },
};

const extras: Record<PackageType, Record<string, unknown>> = {
  agent: {
    input: agentIo(true),
    output: agentIo(false),
    integrations_configuration: {
      type: 'object',
      propertyNames: { pattern: PACKAGE_NAME_PATTERN },
      // `authorized_uris` narrows what the integration may reach for this agent (SPEC 8.4 bounds
      // it for inline runs: entry count, wildcards).
      additionalProperties: { type: 'object', properties: { tools: strings, scopes: strings, auth_key: str, authorized_uris: strings } },
    },
  },
  skill: {},
  integration: {
    source: { type: 'object', required: ['kind'], properties: { kind: { enum: ['none', 'local'] } } },
    default_tools: strings,
    auths: { type: 'object', additionalProperties: auth },
  },
  // DESIGN.md 7: a remote server the sidecar connects to as an MCP client; `auth` names the
  // integration (and its auth) whose connection's credential is injected on every request.
  'mcp-server': {
    remote: {
      type: 'object',
      required: ['url', 'transport'],
      properties: {
        url: { type: 'string', format: 'uri', pattern: '^https?://', maxLength: 2048 },
        transport: { const: 'streamable-http' },
        auth: {
          type: 'object',
          required: ['integration', 'auth_key'],
          properties: { integration: { type: 'string', pattern: PACKAGE_NAME_PATTERN }, auth_key: { type: 'string', minLength: 1 } },
        },
      },
    },
  },
};

/** The published JSON Schema of a manifest of `type`. */
export function manifestSchema(type: PackageType): Record<string, unknown> {
  return {
    type: 'object',
    required: commonRequired,
    properties: { ...common, type: { const: type }, ...extras[type] },
  };
}

const validators = new Map<PackageType, ValidateFunction>();
function validatorFor(type: PackageType): ValidateFunction {
  let v = validators.get(type);
  if (!v) {
    v = bodyAjv.compile(manifestSchema(type));
    validators.set(type, v);
  }
  return v;
}

function extraChecks(type: PackageType, m: Record<string, any>): ProblemFieldError[] {
  const errors: ProblemFieldError[] = [];
  for (const [kind, deps] of Object.entries((m.dependencies ?? {}) as Record<string, Record<string, string>>)) {
    for (const [id, range] of Object.entries(deps ?? {})) {
      if (range !== 'latest' && semver.validRange(range) === null) {
        const field = `manifest.dependencies.${kind}.${id}`;
        errors.push({ field, code: 'invalid_format', message: `${field} must be a semver range, got "${range}"` });
      }
    }
  }
  if (type === 'agent') {
    // Each must compile, its patterns on the linear-time engine (shared/linear-regexp.ts).
    for (const io of ['input', 'output']) {
      if (m[io]?.schema !== undefined) errors.push(...userSchemaErrors(m[io].schema, `manifest.${io}.schema`));
    }
    // A file input's name becomes a folder of the sandbox's /workspace/input.
    errors.push(...unsafeFileFieldErrors(m.input?.schema, 'manifest.input.schema.properties.'));
  }
  if (type === 'integration') {
    for (const [key, a] of Object.entries((m.auths ?? {}) as Record<string, any>)) {
      if (a?.credentials?.schema !== undefined) errors.push(...userSchemaErrors(a.credentials.schema, `manifest.auths.${key}.credentials.schema`));
      if (a?.type === 'oauth2') errors.push(...oauth2ManifestErrors(key, a));
    }
    for (const [key, a] of Object.entries((m.auths ?? {}) as Record<string, any>)) {
      if (!a?.connect) continue;
      ((a.connect.login?.success_criteria ?? []) as Array<{ condition: string }>).forEach((c, i) => {
        if (parseCondition(c.condition) === undefined) {
          const field = `manifest.auths.${key}.connect.login.success_criteria.${i}.condition`;
          errors.push({
            field,
            code: 'invalid_format',
            message:
              `${field} is not a condition: use $statusCode <op> <int>, $statusCode in [...], $header.<name> exists, $cookie.<name> exists ` +
              `or $body contains "<text>"`,
          });
        }
      });
      (a.authorized_uris ?? []).forEach((uri: string, i: number) => {
        if (uri.includes('{$credential.')) {
          const field = `manifest.auths.${key}.authorized_uris.${i}`;
          errors.push({ field, code: 'invalid_value', message: `${field} must be literal: an auth with connect cannot template authorized_uris` });
        }
      });
    }
  }
  return errors;
}

/**
 * A well-formed schema_version of another major, refused alone and first: under another major the
 * other fields may mean something else, so their errors would only mislead. A malformed one is
 * left to the schema's pattern.
 */
function unsupportedSchemaVersion(version: unknown): ProblemFieldError | undefined {
  const m = typeof version === 'string' ? SCHEMA_VERSION.exec(version) : null;
  if (!m || Number(m[1]) === MANIFEST_SCHEMA_MAJOR) return undefined;
  return {
    field: 'manifest.schema_version',
    code: 'invalid_value',
    message: `manifest.schema_version ${version} is not supported: this service reads schema_version ${MANIFEST_SCHEMA_RANGE} (0.1 to 0.3 and any later 0.x)`,
    supported: MANIFEST_SCHEMA_RANGE,
  };
}

/** Field names relative to the manifest document, re-rooted at `manifest`. */
function underManifest(errors: ProblemFieldError[]): ProblemFieldError[] {
  return errors.map((e) => {
    const field = e.field === '(root)' || e.field === '' ? 'manifest' : `manifest.${e.field}`;
    const message = e.field && e.message.startsWith(e.field) ? field + e.message.slice(e.field.length) : `${field}: ${e.message}`;
    return { ...e, field, message };
  });
}

function fail(errors: ProblemFieldError[]): never {
  throw problem('validation_failed', { detail: errors[0].message, errors });
}

/**
 * Validates a manifest; errors name the field as `manifest.<path>`. With `expectedType`, a
 * manifest of another type is refused on `manifest.type`.
 */
export function validateManifest(manifest: unknown, expectedType?: PackageType): Record<string, any> & { type: PackageType } {
  if (typeof manifest !== 'object' || manifest === null || Array.isArray(manifest)) {
    fail([{ field: 'manifest', code: 'invalid_type', message: 'manifest must be an object' }]);
  }
  const m = manifest as Record<string, any>;
  const type = m.type as PackageType;
  if (!PACKAGE_TYPES.includes(type) || (expectedType && type !== expectedType)) {
    const allowed = expectedType ? [expectedType] : PACKAGE_TYPES;
    fail([
      { field: 'manifest.type', code: m.type === undefined ? 'required' : 'invalid_value', message: `manifest.type must be one of ${JSON.stringify(allowed)}` },
    ]);
  }
  const unsupported = unsupportedSchemaVersion(m.schema_version);
  if (unsupported) fail([unsupported]);
  const validate = validatorFor(type);
  if (!validate(m)) fail(underManifest(toFieldErrors(validate.errors ?? [])));
  const errors = extraChecks(type, m);
  if (errors.length > 0) fail(errors);
  return m as Record<string, any> & { type: PackageType };
}
