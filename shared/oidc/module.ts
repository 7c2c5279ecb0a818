// The oidc module (README.md beside this file): the service as an OAuth 2.1 / OpenID Connect authorization server.
import type { ModuleDeclaration } from '../modules.ts';

export default {
  name: 'oidc',
  scopes: ['oauth-clients:read', 'oauth-clients:write', 'oauth-clients:delete'],
  workflows: [],
} satisfies ModuleDeclaration;
