// Builds package zips in memory and imports them through the real multipart route.
import yazl from 'yazl';
import type { Client } from './api.ts';

export function zip(files: Record<string, string | Buffer>): Promise<Buffer> {
  const z = new yazl.ZipFile();
  for (const [name, content] of Object.entries(files)) z.addBuffer(Buffer.isBuffer(content) ? content : Buffer.from(content), name);
  z.end();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    z.outputStream.on('data', (c: Buffer) => chunks.push(c));
    z.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
    z.outputStream.on('error', reject);
  });
}

export async function uploadPackage(client: Client, archive: Buffer) {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(archive)], { type: 'application/zip' }), 'package.zip');
  const headers: Record<string, string> = { ...client.defaults };
  if (client.cookie) headers.cookie = client.cookie;
  const res = await fetch(`${client.base}/api/packages/import`, { method: 'POST', headers, body: form });
  return { status: res.status, body: await res.json() };
}

export interface AgentSpec {
  name: string; // '@scope/name'
  version?: string;
  prompt?: string;
  input?: Record<string, unknown>;
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
    ...(spec.input ? { input: { schema: spec.input } } : {}),
    ...(spec.output ? { output: { schema: spec.output } } : {}),
    ...(spec.timeout ? { timeout: spec.timeout } : {}),
    ...(spec.runtimeTools ? { runtime_tools: spec.runtimeTools } : {}),
    ...(spec.dependencies ? { dependencies: spec.dependencies } : {}),
  };
}

/** Imports an agent and fails loudly when the import is refused. */
export async function importAgent(client: Client, spec: AgentSpec): Promise<void> {
  const archive = await zip({ 'manifest.json': JSON.stringify(agentManifest(spec)), 'prompt.md': spec.prompt ?? 'You are a test agent.' });
  const res = await uploadPackage(client, archive);
  if (res.status !== 201) throw new Error(`import of ${spec.name} failed: ${res.status} ${JSON.stringify(res.body)}`);
}
