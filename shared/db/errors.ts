import { ForeignKeyViolationError, UniqueViolationError } from 'objection';

/** True for a Postgres unique violation, raw from knex (23505) or wrapped by objection. */
export function isUniqueViolation(err: unknown): boolean {
  if (err instanceof UniqueViolationError) return true;
  const e = err as { code?: string; nativeError?: { code?: string } };
  return e?.code === '23505' || e?.nativeError?.code === '23505';
}

/**
 * True for a Postgres foreign-key violation, e.g. deleting a row another still names: 23503, or
 * 23001 (`restrict_violation`) for a reference declared ON DELETE RESTRICT.
 */
export function isForeignKeyViolation(err: unknown): boolean {
  if (err instanceof ForeignKeyViolationError) return true;
  const e = err as { code?: string; nativeError?: { code?: string } };
  const code = e?.code ?? e?.nativeError?.code;
  return code === '23503' || code === '23001';
}
