// Connection options towards Temporal: the dev server, a self-hosted cluster (mTLS) or
// Temporal Cloud (API key), all from config.
import fs from 'node:fs';
import type { ConnectionOptions } from '@temporalio/client';
import type { Config } from './config.ts';

export function temporalConnectionOptions(config: Config, address: string): ConnectionOptions {
  const clientCert =
    config.temporalTlsCertPath && config.temporalTlsKeyPath
      ? { crt: fs.readFileSync(config.temporalTlsCertPath), key: fs.readFileSync(config.temporalTlsKeyPath) }
      : undefined;
  return {
    address,
    tls: config.temporalTls || clientCert ? { clientCertPair: clientCert } : undefined,
    apiKey: config.temporalApiKey,
  };
}
