// Which model a run uses: the organization's default model, else the instance default from
// MODEL_* (DESIGN.md section 5) for the organizations it serves (INSTANCE_MODEL_ORGS). Runs, chat
// turns and the LLM proxy all resolve here. Keys are decrypted only here, for the sidecar.
// A model that names a provider credential takes its provider, base URL and key from it; its
// calls go through its own proxy, else the organization's default proxy (issue 17).
import type { Knex } from 'knex';
import type { Config } from '../config.ts';
import { INSTANCE_OWNER_KEY } from '../identity/bootstrap.ts';
import { decryptSecret } from '../secrets.ts';

/** The one readable error of a run, chat turn or LLM proxy call that finds no model. */
export const NO_MODEL_CONFIGURED =
  'No model is configured for this organization: add one with POST /api/models (isDefault: true). ' +
  'The instance model (MODEL_BASE_URL, MODEL_NAME) serves only the organizations of the instance owner unless INSTANCE_MODEL_ORGS=all';

export type ModelProvider = 'openai-compatible' | 'anthropic';

export interface ModelConfig {
  source: 'organization' | 'instance';
  id: string | null;
  provider: ModelProvider;
  baseUrl: string;
  model: string;
  apiKey?: string;
  /** The outbound proxy's URL (credentials included); absent: a direct connection. */
  proxyUrl?: string;
  inputCostPerMTok: number;
  outputCostPerMTok: number;
  /** Bytes one answer may have (MODEL_MAX_ANSWER_BYTES): every caller of the model reads at most this. */
  maxAnswerBytes: number;
}

export interface ModelRow {
  id: string;
  org_id: string;
  name: string;
  provider: ModelProvider;
  base_url: string;
  model: string;
  api_key_enc: string | null;
  credential_id: string | null;
  proxy_id: string | null;
  is_default: boolean;
  input_cost_per_mtok: number | null;
  output_cost_per_mtok: number | null;
  created_at: Date;
  updated_at: Date;
}

export interface CredentialRow {
  id: string;
  org_id: string;
  name: string;
  provider: ModelProvider;
  base_url: string;
  api_key_enc: string;
  created_at: Date;
  updated_at: Date;
}

/**
 * The URL of the proxy the organization's calls use: `proxyId`'s, else the organization's
 * default proxy; undefined for a direct connection.
 */
export async function orgProxyUrl(knex: Knex, config: Config, orgId: string, proxyId?: string | null): Promise<string | undefined> {
  const q = knex('proxies').where({ org_id: orgId });
  const row = await (proxyId ? q.where({ id: proxyId }) : q.where({ is_default: true })).first('url_enc');
  return row ? decryptSecret(config.secretsKey, row.url_enc) : undefined;
}

async function configOf(knex: Knex, config: Config, row: ModelRow): Promise<ModelConfig> {
  const cred = row.credential_id
    ? await knex<CredentialRow>('model_provider_credentials').where({ id: row.credential_id, org_id: row.org_id }).first()
    : undefined;
  const sealedKey = cred ? cred.api_key_enc : row.api_key_enc;
  return {
    source: 'organization',
    id: row.id,
    provider: cred?.provider ?? row.provider,
    baseUrl: cred?.base_url ?? row.base_url,
    model: row.model,
    apiKey: sealedKey ? decryptSecret(config.secretsKey, sealedKey) : undefined,
    proxyUrl: await orgProxyUrl(knex, config, row.org_id, row.proxy_id),
    inputCostPerMTok: row.input_cost_per_mtok ?? 0,
    outputCostPerMTok: row.output_cost_per_mtok ?? 0,
    maxAnswerBytes: config.modelMaxAnswerBytes,
  };
}

/** A saved model of the organization, as a call would use it (`POST /api/models/{id}/test`). */
export async function resolveModelById(knex: Knex, config: Config, orgId: string, id: string): Promise<ModelConfig | undefined> {
  const row = await knex<ModelRow>('models').where({ org_id: orgId, id }).first();
  return row ? configOf(knex, config, row) : undefined;
}

/**
 * Whether the instance model serves the organization: with INSTANCE_MODEL_ORGS=owner (the
 * default), when the instance owner (the bootstrap user) created it and is still its owner. Being
 * made an owner does not count: any owner may add any account as owner of their organization,
 * so a stranger could otherwise buy into the operator's key with the owner's email address.
 */
export async function instanceModelServes(knex: Knex, config: Config, orgId: string): Promise<boolean> {
  if (config.instanceModelOrgs === 'all') return true;
  const row = await knex('organizations as o')
    .join('org_members as m', (j) => j.on('m.org_id', 'o.id').andOn('m.user_id', 'o.created_by_user_id'))
    .join('instance_settings as s', (j) => j.onVal('s.key', INSTANCE_OWNER_KEY))
    .where('o.id', orgId)
    .where('m.role', 'owner')
    .whereRaw("o.created_by_user_id = s.value->>'userId'")
    .first('o.id');
  return row !== undefined;
}

export async function resolveModel(knex: Knex, config: Config, orgId: string): Promise<ModelConfig | undefined> {
  const row = await knex<ModelRow>('models').where({ org_id: orgId, is_default: true }).first();
  if (row) return configOf(knex, config, row);
  const d = config.defaultModel;
  if (!d || !(await instanceModelServes(knex, config, orgId))) return undefined;
  return { source: 'instance', id: null, ...d, inputCostPerMTok: 0, outputCostPerMTok: 0, maxAnswerBytes: config.modelMaxAnswerBytes };
}

/**
 * The LLM proxy's target (DESIGN.md section 7): the organization's model whose `name` is
 * `name`, else the model a run would use (`resolveModel`).
 */
export async function resolveNamedModel(knex: Knex, config: Config, orgId: string, name: unknown): Promise<ModelConfig | undefined> {
  if (typeof name === 'string' && name) {
    const row = await knex<ModelRow>('models').where({ org_id: orgId, name }).first();
    if (row) return configOf(knex, config, row);
  }
  return resolveModel(knex, config, orgId);
}
