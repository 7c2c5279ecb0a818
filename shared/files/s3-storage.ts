// File bytes in S3-compatible object storage (S3_ENDPOINT, S3_BUCKET, S3_ACCESS_KEY_ID,
// S3_SECRET_ACCESS_KEY, S3_REGION), path-style addressed so MinIO, Ceph, R2 or moto work as
// well as AWS. The bucket must exist.
//
// Exact length without a temporary object: one PutObject with `Content-Length: size` and the
// body streamed through `measured()`. An S3 PUT creates the object only once all declared bytes
// arrived; `measured()` holds its last chunk back until the source ended with exactly `size`
// bytes, and on a mismatch the request is aborted (the connection destroyed) before the server
// has the whole length. So a short, long or broken body leaves nothing under the key, and no
// copy+delete is needed. SDK checksums are only sent when an operation requires them: many
// S3-compatible servers refuse the SDK's default streaming-trailer checksums; the SHA-256 of
// the bytes is computed here and recorded by the caller.
import { Readable } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command, NoSuchKey, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import type { Config } from '../config.ts';
import { type ByteRange, type FileStorage, StoredFileMissingError, assertStorageKey, assertStoragePrefix, measured } from './storage.ts';

export type S3Settings = NonNullable<Config['s3']>;

export class S3Storage implements FileStorage {
  readonly bucket: string;
  readonly client: S3Client;

  constructor(settings: S3Settings) {
    this.bucket = settings.bucket;
    this.client = new S3Client({
      endpoint: settings.endpoint,
      region: settings.region,
      forcePathStyle: true,
      credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey },
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      // A refused body is reported by put() itself; the SDK's console warning about it is noise.
      logger: { debug() {}, info() {}, warn() {}, error() {} },
    });
  }

  async put(key: string, body: Readable, size: number): Promise<{ sha256: string }> {
    assertStorageKey(key);
    const digest: { sha256?: string } = {};
    const abort = new AbortController();
    let failure: unknown;
    const source = Readable.from(measured(body, size, digest), { objectMode: false });
    // The SDK pipes the body into its request, and a pipe does not end its destination on a
    // source error: abort the request ourselves, which destroys the connection mid-body.
    source.on('error', (err) => {
      failure ??= err;
      abort.abort(err);
    });
    try {
      await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: source, ContentLength: size }), { abortSignal: abort.signal });
    } catch (err) {
      source.destroy();
      throw failure ?? err;
    }
    if (failure || !digest.sha256) throw failure ?? new Error(`upload of ${key} ended without its digest`);
    return { sha256: digest.sha256 };
  }

  async get(key: string, range?: ByteRange): Promise<Readable> {
    assertStorageKey(key);
    try {
      const res = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: key, Range: range ? `bytes=${range.start}-${range.end}` : undefined }),
      );
      return res.Body as Readable;
    } catch (err) {
      if (err instanceof NoSuchKey || (err instanceof S3ServiceException && err.$metadata.httpStatusCode === 404)) throw new StoredFileMissingError(key);
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    assertStorageKey(key);
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  async list(prefix: string): Promise<string[]> {
    assertStoragePrefix(prefix);
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token }));
      for (const o of page.Contents ?? []) if (o.Key) keys.push(o.Key);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return keys;
  }

  async deleteAll(prefix: string): Promise<void> {
    // One DeleteObject a key: the folders deleted whole (a run's workspace checkpoints) hold a few.
    for (const key of await this.list(prefix)) await this.delete(key);
  }
}
