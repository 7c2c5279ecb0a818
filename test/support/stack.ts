// The real stack the tests run against, set up once per `npm test` by test/setup/global.ts:
// a fresh Postgres database (embedded, or a new database on DATABASE_URL's server) and a
// Temporal dev server, both on free ports.
export interface Stack {
  databaseUrl: string;
  temporalAddress: string;
}

let current: Stack | undefined;

export function setStack(s: Stack): void {
  current = s;
}

export function stack(): Stack {
  if (!current) throw new Error('the test stack is not up: run through mocha with test/setup/global.ts');
  return current;
}
