import { UniqueViolationError } from 'objection';

/** True for a Postgres unique violation, raw from knex (23505) or wrapped by objection. */
export function isUniqueViolation(err: unknown): boolean {
  if (err instanceof UniqueViolationError) return true;
  const e = err as { code?: string; nativeError?: { code?: string } };
  return e?.code === '23505' || e?.nativeError?.code === '23505';
}
