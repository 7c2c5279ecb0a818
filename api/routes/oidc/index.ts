// The oidc module (SPEC 4.2, 5.5; README.md beside this file): the authorization server's
// endpoints, its sign-in and consent pages, and the refused client-management endpoints.
// `/api/oauth/clients` (client management) is declared with it in api/routes/index.ts.
import type { RouteDef } from '../../route.ts';
import { oidcEndpoints, refusedClientEndpoints } from './endpoints.ts';
import interaction from './interaction.ts';
import interactionConfirm from './interaction-confirm.ts';
import interactionLogin from './interaction-login.ts';

export const oidcRoutes: RouteDef[] = [...oidcEndpoints, interaction, interactionLogin, interactionConfirm, ...refusedClientEndpoints];
