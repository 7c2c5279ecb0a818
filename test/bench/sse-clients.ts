// The SSE bench's connect rounds from a process of their own (test/bench/sse.ts forks it), as
// clients are in use: the server's process then runs only the server, and garbage left by one side
// is not collected on the other side's time. Each round connects `n` clients, 100 at a time, each
// counted once its first frame arrives; then closes them and waits for the parent's go (the
// server has seen every one close) before the next round. Prints nothing: each round's time goes
// to the parent as a message.
import http from 'node:http';

const [url, n, rounds] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4])];

function one(reqs: http.ClientRequest[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent: false }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`subscribe: ${res.statusCode}`));
      res.once('data', () => resolve());
      res.on('error', () => undefined);
    });
    req.on('error', reject);
    reqs.push(req);
  });
}

for (let round = 0; round < rounds; round++) {
  const reqs: http.ClientRequest[] = [];
  const t0 = performance.now();
  for (let done = 0; done < n; done += 100) await Promise.all(Array.from({ length: Math.min(100, n - done) }, () => one(reqs)));
  const ms = performance.now() - t0;
  for (const req of reqs) req.destroy();
  process.send!({ ms });
  await new Promise((resolve) => process.once('message', resolve));
}
process.exit(0);
