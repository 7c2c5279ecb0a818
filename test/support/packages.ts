// Imports packages through the real multipart route (archives built by test/fixtures).
import { zip } from '../fixtures/packages/build.ts';
import type { Client, Res } from './api.ts';

/** POSTs `archive` as the multipart field `file` (or `field`) to the import route (or `route`). */
export async function uploadPackage(client: Client, archive: Buffer, field = 'file', route = '/api/packages/import'): Promise<Res> {
  const form = new FormData();
  form.append(field, new Blob([new Uint8Array(archive)], { type: 'application/zip' }), 'package.zip');
  const req = new Request('http://localhost/', { method: 'POST', body: form });
  const raw = Buffer.from(await req.arrayBuffer());
  return client.request('POST', route, { raw, headers: { 'content-type': req.headers.get('content-type')! } });
}

export interface AgentSpec {
  name: string; // '@scope/name'
  version?: string;
  prompt?: string;
  input?: Record<string, unknown>;
  /** manifest.input.file_constraints */
  fileConstraints?: Record<string, unknown>;
  output?: Record<string, unknown>;
  timeout?: number;
  runtimeTools?: string[];
  dependencies?: Record<string, unknown>;
}

export function agentManifest(spec: AgentSpec): Record<string, unknown> {
  return {
    name: spec.name,
    version: spec.version ?? '1.0.0',
    type: 'agent',
    schema_version: '0.3',
    display_name: spec.name,
    description: 'test agent',
    ...(spec.input ? { input: { schema: spec.input, ...(spec.fileConstraints ? { file_constraints: spec.fileConstraints } : {}) } } : {}),
    ...(spec.output ? { output: { schema: spec.output } } : {}),
    ...(spec.timeout ? { timeout: spec.timeout } : {}),
    ...(spec.runtimeTools ? { runtime_tools: spec.runtimeTools } : {}),
    ...(spec.dependencies ? { dependencies: spec.dependencies } : {}),
  };
}

/** Imports the package `manifest` describes (an agent with `prompt` as its prompt.md) and fails loudly when the import is refused. */
export async function importManifest(client: Client, manifest: Record<string, unknown>, prompt = 'You are a test agent.'): Promise<void> {
  const files: Record<string, string> = { 'manifest.json': JSON.stringify(manifest) };
  if (manifest.type === 'agent') files['prompt.md'] = prompt;
  const res = await uploadPackage(client, await zip(files));
  if (res.status !== 201) throw new Error(`import of ${manifest.name} failed: ${res.status} ${res.text}`);
}

/** Imports an agent and fails loudly when the import is refused. */
export async function importAgent(client: Client, spec: AgentSpec): Promise<void> {
  await importManifest(client, agentManifest(spec), spec.prompt);
}

/** Imports an integration package with these `auths` (SPEC 2.12) and any other manifest fields in `extra` (e.g. `_meta`). */
export async function importIntegration(
  client: Client,
  name: string,
  displayName: string,
  auths: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): Promise<void> {
  await importManifest(client, {
    name,
    version: '1.0.0',
    type: 'integration',
    schema_version: '0.3',
    display_name: displayName,
    description: 'x',
    ...extra,
    auths,
  });
}

/**
 * The manifests of `integration`, whose credential `token` goes to `url` as a Bearer header, and of
 * `server`, the MCP server at `url` reached with it (`source` none: the integration has no API).
 */
export function mcpServerWithToken(server: string, integration: string, url: string): Record<string, unknown>[] {
  const base = (name: string, type: string) => ({ name, version: '1.0.0', type, schema_version: '0.3', display_name: name, description: 'x' });
  return [
    { ...base(integration, 'integration'), source: { kind: 'none' }, auths: { main: authorizationAuth([url], 'token', 'Bearer ') } },
    { ...base(server, 'mcp-server'), remote: { url, transport: 'streamable-http', auth: { integration, auth_key: 'main' } } },
  ];
}

/** A `custom` auth whose one credential, `field`, goes to `uris` as `Authorization: <prefix><field>`. */
export function authorizationAuth(uris: string[], field: string, prefix: string): Record<string, unknown> {
  return {
    type: 'custom',
    credentials: { schema: { type: 'object', required: [field], properties: { [field]: { type: 'string' } } } },
    authorized_uris: uris,
    delivery: { http: { in: 'header', name: 'Authorization', prefix, value: `{$credential.${field}}` } },
  };
}
