import { sha256Hex } from '../../../shared/crypto.ts';
import { problem } from '../../../shared/errors.ts';
import { newId, newToken } from '../../../shared/ids.ts';
import { defineRoute } from '../../route.ts';
import { launcherOf } from '../../resources/launch.ts';
import { orgBytesInUse, type UploadRow, uploadDto, uploadSchema } from '../../../shared/files/model.ts';
import { UPLOAD_TTL_MS } from '../../../shared/files/expiry.ts';
import { SAFE_NAME_RULE, unsafeNameReason } from '../../../shared/files/confine.ts';
import { fileNameSchema, formatBytes, mimeTypeSchema } from './_shared.ts';

interface Body {
  name: string;
  contentType: string;
  size: number;
}

export default defineRoute<Body>({
  method: 'post',
  path: '/api/uploads',
  operationId: 'createUpload',
  summary: 'Declare a file to upload; answers a one-hour upload URL',
  description:
    'Uploads give agents files: pass the `upl_` id as a run input of `format: file`. Needs `agents:run` in the space. ' +
    'Send the bytes with `PUT` to `uploadUrl` (exactly `size` bytes; the URL is the credential, good for one successful PUT within an hour). ' +
    "`size` above `FILE_MAX_BYTES` is 413 `file_too_large`; when the organization's files and unexpired uploads plus `size` would " +
    'exceed `ORG_STORAGE_QUOTA_BYTES`, 413 `storage_quota_exceeded`. ' +
    'Owned like a run: by the end-user of `Service-User`, else the API key, else the person.',
  tag: 'Files',
  auth: 'any',
  context: 'space',
  scope: 'agents:run',
  rateLimit: { points: 20, duration: 60, by: 'identity' },
  body: {
    type: 'object',
    additionalProperties: false,
    required: ['name', 'contentType', 'size'],
    properties: {
      name: fileNameSchema,
      contentType: mimeTypeSchema,
      size: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'Exact byte length of the file' },
    },
  },
  responses: {
    201: {
      description: 'Created; PUT the bytes to `uploadUrl` before `expiresAt`',
      schema: {
        ...uploadSchema,
        required: [...uploadSchema.required, 'uploadUrl'],
        properties: {
          ...uploadSchema.properties,
          uploadUrl: { type: 'string', format: 'uri', description: 'PUT the bytes here; holds the single-use token (shown once)' },
        },
      },
    },
  },
  async handler(ctx, { body }) {
    const { org, space } = ctx.state.tenancy!;
    const { config, knex } = ctx.services;
    // The name becomes a file name in the sandbox (shared/files/confine.ts); the schema cannot count bytes.
    const badName = unsafeNameReason(body.name);
    if (badName) {
      const message = `name must be ${SAFE_NAME_RULE} (it ${badName})`;
      throw problem('validation_failed', { detail: message, param: 'name', errors: [{ field: 'name', code: 'invalid_format', message }] });
    }
    if (body.size > config.fileMaxBytes) {
      throw problem('file_too_large', {
        detail: `The file is ${body.size} bytes; the limit (FILE_MAX_BYTES) is ${formatBytes(config.fileMaxBytes)}`,
        param: 'size',
      });
    }
    const id = newId('upl');
    const token = newToken();
    const owner = launcherOf(ctx);
    const row = await knex.transaction(async (trx) => {
      const quota = config.orgStorageQuotaBytes;
      if (quota !== undefined) {
        // One upload at a time per organization past this point, so two cannot both fit the last bytes.
        await trx.raw('select pg_advisory_xact_lock(hashtext(?))', [`uploads-quota:${org!.id}`]);
        const used = await orgBytesInUse(trx, org!.id);
        if (used + body.size > quota) {
          throw problem('storage_quota_exceeded', {
            detail:
              `The organization uses ${formatBytes(used)} of its ${formatBytes(quota)} quota (ORG_STORAGE_QUOTA_BYTES); ${body.size} more ` +
              `bytes do not fit`,
            param: 'size',
          });
        }
      }
      const [inserted] = await trx<UploadRow>('uploads')
        .insert({
          id,
          org_id: org!.id,
          space_id: space!.id,
          actor_type: owner.actor.type,
          actor_id: owner.actor.id,
          user_id: owner.userId,
          end_user_id: owner.endUserId ?? null,
          name: body.name,
          content_type: body.contentType,
          size: body.size,
          token_hash: sha256Hex(token),
          storage_key: `${org!.id}/uploads/${id}`,
          expires_at: new Date(Date.now() + UPLOAD_TTL_MS),
        })
        .returning('*');
      return inserted;
    });
    ctx.status = 201;
    ctx.set('Location', `/api/uploads/${id}`);
    ctx.body = { ...uploadDto(row), uploadUrl: `${config.publicUrl}/api/uploads/_content?token=${token}` };
  },
});
