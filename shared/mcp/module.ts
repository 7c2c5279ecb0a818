// The mcp module (README.md beside this file): the service as an MCP server at /api/mcp.
import type { ModuleDeclaration } from '../modules.ts';

export default {
  name: 'mcp',
  scopes: ['mcp:read', 'mcp:invoke'],
  workflows: [],
} satisfies ModuleDeclaration;
