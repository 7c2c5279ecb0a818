import type { Knex } from 'knex';
import { isUniqueViolation } from '../db/errors.ts';
import { User } from '../db/models.ts';
import { problem } from '../errors.ts';
import { newId } from '../ids.ts';
import { hashPassword } from './passwords.ts';

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export async function createUser(knex: Knex, input: { email: string; password: string; name: string }): Promise<User> {
  const email = normalizeEmail(input.email);
  const password_hash = await hashPassword(input.password);
  try {
    return await User.query(knex).insertAndFetch({ id: newId('usr'), email, name: input.name.trim(), password_hash });
  } catch (err) {
    if (isUniqueViolation(err)) throw problem('email_taken', { detail: `${email} is already registered`, param: 'email' });
    throw err;
  }
}

export async function findUserByEmail(knex: Knex, email: string): Promise<User | undefined> {
  return await User.query(knex).findOne({ email: normalizeEmail(email) });
}
