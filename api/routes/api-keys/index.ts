// API keys: create (the secret shown once), list, the scopes a key may carry, revoke (SPEC 5.1); mounted by api/routes/index.ts
// in this order, which is the order in OpenAPI.
import type { RouteDef } from '../../route.ts';
import apiKeyScopes from './available-scopes.ts';
import apiKeyCreate from './create.ts';
import apiKeyList from './list.ts';
import apiKeyRevoke from './revoke.ts';

export const apiKeyRoutes: RouteDef[] = [apiKeyCreate, apiKeyList, apiKeyScopes, apiKeyRevoke];
