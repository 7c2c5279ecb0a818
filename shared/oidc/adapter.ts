// oidc-provider's storage in Postgres (DESIGN.md section 7): one `oidc_payloads` row per model
// instance (sessions, interactions, grants, codes, refresh and device codes). Ids and user codes
// are bearer values (a refresh token's id is the token): rows are keyed by their SHA-256 and the
// payload keeps no copy, so the table alone grants nothing. Clients live in `oauth_clients`.
import type { Knex } from 'knex';
import { sha256Hex } from '../crypto.ts';
import { decryptSecret, encryptSecret } from '../secrets.ts';
import { clientMetadata, findClientRow, saveRegisteredClient } from './clients.ts';

type Payload = Record<string, any>;

export function postgresAdapter(knex: Knex, secretsKey: Buffer | undefined) {
  return class PostgresAdapter {
    readonly model: string;

    constructor(model: string) {
      this.model = model;
    }

    async upsert(id: string, payload: Payload, expiresIn?: number): Promise<void> {
      if (this.model === 'Client') return saveRegisteredClient(knex, secretsKey, id, payload);
      const { jti, userCode, ...kept } = payload;
      if (jti) kept.jti_sealed = encryptSecret(secretsKey, jti);
      if (userCode) kept.user_code_sealed = encryptSecret(secretsKey, userCode);
      const row = {
        model: this.model,
        id: sha256Hex(id),
        payload: JSON.stringify(kept),
        grant_id: payload.grantId ?? null,
        user_code: userCode ? sha256Hex(userCode) : null,
        uid: payload.uid ?? null,
        account_id: payload.accountId ?? null,
        expires_at: expiresIn ? new Date(Date.now() + expiresIn * 1000) : null,
      };
      await knex('oidc_payloads').insert(row).onConflict(['model', 'id']).merge();
    }

    async find(id: string): Promise<Payload | undefined> {
      if (this.model === 'Client') {
        const row = await findClientRow(knex, id);
        return row ? clientMetadata(row, secretsKey) : undefined;
      }
      return this.one({ id: sha256Hex(id) });
    }

    async findByUserCode(userCode: string): Promise<Payload | undefined> {
      return this.one({ user_code: sha256Hex(userCode) });
    }

    async findByUid(uid: string): Promise<Payload | undefined> {
      return this.one({ uid });
    }

    async consume(id: string): Promise<void> {
      await knex('oidc_payloads')
        .where({ model: this.model, id: sha256Hex(id) })
        .update({ consumed_at: new Date() });
    }

    async destroy(id: string): Promise<void> {
      if (this.model === 'Client') {
        await knex('oauth_clients').where({ client_id: id }).whereNull('created_by').del();
        return;
      }
      await knex('oidc_payloads')
        .where({ model: this.model, id: sha256Hex(id) })
        .del();
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await knex('oidc_payloads').where({ grant_id: grantId }).del();
    }

    /** A live row as oidc-provider stored it, its sealed bearer values unsealed. */
    private async one(where: Record<string, string>): Promise<Payload | undefined> {
      const row = await knex('oidc_payloads')
        .where({ model: this.model, ...where })
        .where((q) => q.whereNull('expires_at').orWhere('expires_at', '>', new Date()))
        .first('payload', 'consumed_at');
      if (!row) return undefined;
      const { jti_sealed: jti, user_code_sealed: userCode, ...payload } = row.payload as Payload;
      if (jti) payload.jti = decryptSecret(secretsKey, jti);
      if (userCode) payload.userCode = decryptSecret(secretsKey, userCode);
      if (row.consumed_at) payload.consumed = Math.floor(new Date(row.consumed_at).getTime() / 1000);
      return payload;
    }
  };
}
