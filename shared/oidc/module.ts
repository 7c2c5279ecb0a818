// The oidc module (README.md beside this file): the service as an OAuth 2.1 / OpenID Connect authorization server.
// Checked as a ModuleDeclaration where shared/modules.ts lists it (an import of that type here
// would tie the two files in a cycle).

export default {
  name: 'oidc',
  scopes: ['oauth-clients:read', 'oauth-clients:write', 'oauth-clients:delete'],
  workflows: [],
} as const;
