// The oidc module (README.md beside this file; the endpoints' own README is api/routes/oidc/README.md).
import type { ModuleDeclaration } from '../modules.ts';

export default {
  name: 'oidc',
  scopes: ['oauth-clients:read', 'oauth-clients:write', 'oauth-clients:delete'],
  workflows: [],
} satisfies ModuleDeclaration;
