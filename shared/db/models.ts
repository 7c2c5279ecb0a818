// Objection models. Queries always pass the knex instance (or transaction) explicitly,
// `User.query(knex)`, so resources stay injected and tests can run several apps side by side.
import { Model } from 'objection';

abstract class Base extends Model {
  // Column names stay snake_case in JS too: the DTO mappers pick the wire names.
}

export class User extends Base {
  static override tableName = 'users';
  declare id: string;
  declare email: string;
  declare name: string;
  declare password_hash: string;
  declare created_at: Date;
  declare updated_at: Date;
}

export class Session extends Base {
  static override tableName = 'sessions';
  declare id: string;
  declare user_id: string;
  declare token_hash: string;
  declare realm: string;
  declare expires_at: Date;
  declare last_extended_at: Date;
  declare ip: string | null;
  declare user_agent: string | null;
  declare created_at: Date;
}

export class Organization extends Base {
  static override tableName = 'organizations';
  declare id: string;
  declare name: string;
  declare api_version: string | null;
  declare created_by_user_id: string | null;
  declare created_at: Date;
}

export class OrgMember extends Base {
  static override tableName = 'org_members';
  static override idColumn = ['org_id', 'user_id'];
  declare org_id: string;
  declare user_id: string;
  declare role: 'owner' | 'admin' | 'member';
  declare created_at: Date;
}

export class Space extends Base {
  static override tableName = 'spaces';
  declare id: string;
  declare org_id: string;
  declare name: string;
  declare kind: 'default' | 'team' | 'personal';
  declare owner_user_id: string | null;
  declare created_at: Date;
}

export class CustomRole extends Base {
  static override tableName = 'custom_roles';
  declare id: string;
  declare org_id: string;
  declare name: string;
  declare scopes: string[];
  declare created_at: Date;
}

export class SpaceMember extends Base {
  static override tableName = 'space_members';
  static override idColumn = ['space_id', 'user_id'];
  declare space_id: string;
  declare user_id: string;
  declare org_id: string;
  declare preset_role: string | null;
  declare custom_role_id: string | null;
  declare created_at: Date;
}

export class ApiKey extends Base {
  static override tableName = 'api_keys';
  declare id: string;
  declare org_id: string;
  declare space_id: string;
  declare created_by: string;
  declare name: string;
  declare key_hash: string;
  declare key_prefix: string;
  declare scopes: string[];
  declare expires_at: Date | null;
  declare revoked_at: Date | null;
  declare last_used_at: Date | null;
  declare created_at: Date;
}

export class EndUser extends Base {
  static override tableName = 'end_users';
  declare id: string;
  declare org_id: string;
  declare space_id: string;
  declare external_id: string;
  declare name: string;
  declare created_at: Date;
  declare updated_at: Date;
}
