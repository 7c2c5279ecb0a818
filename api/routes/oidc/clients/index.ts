// OAuth client management of the oidc module (SPEC 4.2, DESIGN.md section 7); the authorization
// server that uses these clients lives in api/routes/oidc/.
import type { RouteDef } from '../../../route.ts';
import create from './create.ts';
import remove from './delete.ts';
import get from './get.ts';
import list from './list.ts';
import update from './update.ts';

export const oauthClientRoutes: RouteDef[] = [create, list, get, update, remove];
