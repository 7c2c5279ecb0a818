// The mcp module (README.md beside this file): the service as an MCP server at /api/mcp.
// Checked as a ModuleDeclaration where shared/modules.ts lists it (an import of that type here
// would tie the two files in a cycle).

export default {
  name: 'mcp',
  scopes: ['mcp:read', 'mcp:invoke'],
  workflows: [],
} as const;
