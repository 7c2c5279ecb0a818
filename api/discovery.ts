// Built once per app from the route table: the OpenAPI document (with its strong ETag) and
// the llms.txt index.
import type { Config } from '../shared/config.ts';
import { buildOpenApi, strongEtag } from './openapi.ts';
import { openApiPath, type RouteDef } from './route.ts';

export class Discovery {
  readonly openapiJson: string;
  readonly openapiEtag: string;
  readonly llmsTxt: string;

  constructor(routes: RouteDef[], config: Config) {
    this.openapiJson = JSON.stringify(buildOpenApi(routes, config));
    this.openapiEtag = strongEtag(this.openapiJson);
    this.llmsTxt = buildLlmsTxt(routes, config.publicUrl);
  }
}

function buildLlmsTxt(routes: RouteDef[], publicUrl: string): string {
  const byTag = new Map<string, RouteDef[]>();
  for (const r of routes) byTag.set(r.tag, [...(byTag.get(r.tag) ?? []), r]);
  const lines = [
    '# Agent Execution Service',
    '',
    '> Multi-tenant platform that runs AI agents (versioned packages of prompt, JSON Schemas and dependencies) in isolated sandboxes ' +
      'on Temporal, reporting results by long-poll, Server-Sent Events and signed webhooks.',
    '',
    'Authenticate with `Authorization: Bearer svc_...` (API key) or the `svc.session_token` cookie with `X-Org-Id` and `X-Space-Id`. ' +
      'Errors are RFC 9457 problem documents with a stable `code`. Every response carries `Request-Id`.',
    '',
    '## Reference',
    '',
    `- [OpenAPI 3.1 document](${publicUrl}/api/openapi.json): every operation, schema and error code`,
    `- [Interactive reference](${publicUrl}/api/docs)`,
    '',
  ];
  for (const [tag, list] of byTag) {
    lines.push(`## ${tag}`, '');
    for (const r of list) lines.push(`- \`${r.method.toUpperCase()} ${openApiPath(r.path)}\`: ${r.summary}`);
    lines.push('');
  }
  return lines.join('\n');
}
