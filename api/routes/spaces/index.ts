// Spaces and their members (SPEC 3.3, 4.3); mounted by api/routes/index.ts in this order, which is the order in OpenAPI.
import type { RouteDef } from '../../route.ts';
import spaceCreate from './create.ts';
import spaceList from './list.ts';
import spaceMemberAdd from './members-add.ts';
import spaceMemberList from './members-list.ts';
import spaceMemberRemove from './members-remove.ts';
import spaceMemberUpdate from './members-update.ts';

export const spaceRoutes: RouteDef[] = [spaceList, spaceCreate, spaceMemberList, spaceMemberAdd, spaceMemberUpdate, spaceMemberRemove];
