// The integration representation (DESIGN.md 7): the SPEC 2.11 package representation plus the
// auths a connection can use, as names and kinds only. Never a secret: no credential value, no
// login request (its body may template credentials), no OAuth client. Its response schema
// beside the function that fills it; the row is the package's (shared/packages/types.ts).
import { type ViewContext, packageRepresentation } from '../packages/representation.ts';
import type { PackageRow } from '../packages/types.ts';
import { packageSchema } from '../packages/model.ts';
import { integrationOf } from './auths.ts';

/** Auths come from the manifest in force for connections: the latest published version, else the draft. */
export async function integrationRepresentation(v: ViewContext, pkg: PackageRow) {
  const integration = await integrationOf(v.knex, pkg);
  return {
    ...(await packageRepresentation(v, pkg)),
    auths: integration.auths.map((a) => ({ key: a.key, type: a.type, fields: a.fields, connect: a.connect, authorized_uris: a.authorizedUris })),
  };
}

export const integrationSchema: Record<string, unknown> = {
  ...packageSchema,
  required: [...((packageSchema.required as string[]) ?? []), 'auths'],
  properties: {
    ...(packageSchema.properties as Record<string, unknown>),
    auths: {
      type: 'array',
      description: 'The auths of the manifest in force (latest published version, else the draft); never a secret',
      items: {
        type: 'object',
        required: ['key', 'type', 'fields', 'connect', 'authorized_uris'],
        properties: {
          key: { type: 'string' },
          type: { type: 'string' },
          fields: { type: 'array', items: { type: 'string' }, description: 'Property names of `credentials.schema`' },
          connect: { enum: ['login', 'oauth2', 'fields'] },
          authorized_uris: { type: 'array', items: { type: 'string' } },
        },
      },
    },
  },
};
