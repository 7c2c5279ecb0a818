// The oidc module (SPEC 4.2, 5.5; README.md beside this file): the authorization server's
// endpoints, its sign-in and consent pages, and the refused client-management endpoints.
// `/api/oauth/clients` (client management, ./clients/) belongs to the module too.
import { moduleRoutes, type RouteDef } from '../../route.ts';
import { oauthClientRoutes } from './clients/index.ts';
import { oidcEndpoints, refusedClientEndpoints } from './endpoints.ts';
import interaction from './interaction.ts';
import interactionConfirm from './interaction-confirm.ts';
import interactionLogin from './interaction-login.ts';

export const oidcRoutes: RouteDef[] = moduleRoutes('oidc', [
  ...oauthClientRoutes,
  ...oidcEndpoints,
  interaction,
  interactionLogin,
  interactionConfirm,
  ...refusedClientEndpoints,
]);
