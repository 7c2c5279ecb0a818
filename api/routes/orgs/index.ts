// Organizations, their members, custom roles and the impersonation audit (SPEC 3.2, 4.2); mounted by api/routes/index.ts in
// this order, which is the order in OpenAPI.
import type { RouteDef } from '../../route.ts';
import orgCreate from './create.ts';
import impersonationAudit from './impersonation-audit.ts';
import orgList from './list.ts';
import orgMemberAdd from './members-add.ts';
import orgMemberList from './members-list.ts';
import orgMemberRemove from './members-remove.ts';
import roleCreate from './roles-create.ts';
import roleList from './roles-list.ts';

export const orgRoutes: RouteDef[] = [orgCreate, orgList, orgMemberList, orgMemberAdd, orgMemberRemove, roleCreate, roleList, impersonationAudit];
