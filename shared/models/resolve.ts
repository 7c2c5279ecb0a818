// Which model a run uses: the organization's default model, else the instance default from
// MODEL_* (DESIGN.md section 5). Keys are decrypted only here, in the worker, for the sidecar.
import type { Knex } from 'knex';
import type { Config } from '../config.ts';
import { decryptSecret } from '../secrets.ts';

export type ModelProvider = 'openai-compatible' | 'anthropic';

export interface ModelConfig {
  source: 'organization' | 'instance';
  id: string | null;
  provider: ModelProvider;
  baseUrl: string;
  model: string;
  apiKey?: string;
  inputCostPerMTok: number;
  outputCostPerMTok: number;
}

export interface ModelRow {
  id: string;
  org_id: string;
  name: string;
  provider: ModelProvider;
  base_url: string;
  model: string;
  api_key_enc: string | null;
  is_default: boolean;
  input_cost_per_mtok: number | null;
  output_cost_per_mtok: number | null;
  created_at: Date;
  updated_at: Date;
}

function configOf(config: Config, row: ModelRow): ModelConfig {
  return {
    source: 'organization',
    id: row.id,
    provider: row.provider,
    baseUrl: row.base_url,
    model: row.model,
    apiKey: row.api_key_enc ? decryptSecret(config.secretsKey, row.api_key_enc) : undefined,
    inputCostPerMTok: row.input_cost_per_mtok ?? 0,
    outputCostPerMTok: row.output_cost_per_mtok ?? 0,
  };
}

export async function resolveModel(knex: Knex, config: Config, orgId: string): Promise<ModelConfig | undefined> {
  const row = await knex<ModelRow>('models').where({ org_id: orgId, is_default: true }).first();
  if (row) return configOf(config, row);
  const d = config.defaultModel;
  if (!d) return undefined;
  return { source: 'instance', id: null, ...d, inputCostPerMTok: 0, outputCostPerMTok: 0 };
}

/**
 * The LLM proxy's target (DESIGN.md section 7): the organization's model whose `name` is
 * `name`, else the model a run would use (`resolveModel`).
 */
export async function resolveNamedModel(knex: Knex, config: Config, orgId: string, name: unknown): Promise<ModelConfig | undefined> {
  if (typeof name === 'string' && name) {
    const row = await knex<ModelRow>('models').where({ org_id: orgId, name }).first();
    if (row) return configOf(config, row);
  }
  return resolveModel(knex, config, orgId);
}

export function modelDto(row: ModelRow) {
  return {
    object: 'model' as const,
    id: row.id,
    name: row.name,
    provider: row.provider,
    baseUrl: row.base_url,
    model: row.model,
    hasApiKey: row.api_key_enc !== null,
    isDefault: row.is_default,
    inputCostPerMTok: row.input_cost_per_mtok,
    outputCostPerMTok: row.output_cost_per_mtok,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
