// What every benchmark prints and writes: percentiles, a table of service against baseline
// with the ratio, and a JSON file under test/bench/results/.
import fs from 'node:fs';
import path from 'node:path';

export type Row = readonly [name: string, service: number, baseline: number];

export const say = (m: string) => console.log(`[bench] ${m}`);

export function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

const rounded = (n: number, decimals: number) => Math.round(n * 10 ** decimals) / 10 ** decimals;
const ratio = (ours: number, base: number) => Math.round((ours / base) * 100) / 100;

export function printTable(rows: Row[], baseline: string, decimals = 1): void {
  const width = Math.max(28, ...rows.map(([name]) => name.length + 2));
  console.log('');
  console.log(`${'measure'.padEnd(width)}${'service'.padStart(10)}${baseline.padStart(10)}${'ratio'.padStart(8)}`);
  for (const [name, ours, base] of rows) {
    console.log(
      `${name.padEnd(width)}${String(rounded(ours, decimals)).padStart(10)}${String(rounded(base, decimals)).padStart(
        10,
      )}${ratio(ours, base).toFixed(2).padStart(8)}`,
    );
  }
}

/** The rows as JSON: `{name: {service, <baselineKey>, ratio}}`. */
export function resultsOf(rows: Row[], baselineKey: string, decimals = 1): Record<string, Record<string, number>> {
  return Object.fromEntries(
    rows.map(([name, ours, base]) => [name, { service: rounded(ours, decimals), [baselineKey]: rounded(base, decimals), ratio: ratio(ours, base) }]),
  );
}

export function writeResult(kind: string, result: { when: string } & Record<string, unknown>): void {
  const file = path.join(import.meta.dirname, 'results', `${kind}-${result.when.replace(/[:.]/g, '-')}.json`);
  fs.writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  say(`written ${path.relative(process.cwd(), file)}`);
}
