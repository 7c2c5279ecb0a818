// Issue 31, DESIGN.md 9: the escape suite. Programs run inside a real sandbox as agent code would
// (node, and the shell and python3 it starts from the host's /usr), and every way out is expected
// to fail: the network, any socket but the sidecar's, another run's files, the host's processes,
// ptrace, user namespaces, io_uring, keyrings, mounts; a fork bomb stops at pids.max, a memory
// bomb dies inside, and nothing outlives its sandbox. The system calls go through python's ctypes.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { missingCeilings } from '../../activities/sandbox/cgroups.ts';
import { seccompFilter } from '../../activities/sandbox/seccomp.ts';
import {
  findBwrap,
  SANDBOX_UID,
  type Sandbox,
  type SandboxOptions,
  SOCKET_FILE,
  SandboxUnavailableError,
  spawnSandbox,
} from '../../activities/sandbox/spawn.ts';
import { stack } from '../support/stack.ts';

/** What every probe script can use: run python3 code and read the JSON it prints last. */
const NODE_PRELUDE = `
  const cp = require('node:child_process');
  const fs = require('node:fs');
  const net = require('node:net');
  const out = (v) => console.log(JSON.stringify(v));
  const py = (code, opts = {}) => {
    const r = cp.spawnSync('/usr/bin/python3', ['-c', code], { encoding: 'utf8', ...opts });
    if (r.status !== 0) return { status: r.status, signal: r.signal, stderr: (r.stderr || '').slice(-500) };
    return JSON.parse(r.stdout.trim().split('\\n').pop());
  };
  const connect = (opts) => new Promise((resolve) => {
    const s = net.connect(opts);
    s.setTimeout(3000, () => { s.destroy(); resolve('timeout'); });
    s.once('connect', () => { s.destroy(); resolve('connected'); });
    s.once('error', (e) => resolve(e.code));
  });
`;

/** Raw system calls from python: `sc(name, *args)` answers 'ok' or the errno's name. */
const PY_PRELUDE = `
import ctypes, errno, json, os, socket, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
NR = {
  'x86_64': dict(ptrace=101, process_vm_readv=310, io_uring_setup=425, keyctl=250, add_key=248, mount=165, umount2=166,
                 pivot_root=155, chroot=161, unshare=272, setns=308, clone=56, clone3=435, bpf=321, perf_event_open=298,
                 userfaultfd=323),
  'aarch64': dict(ptrace=117, process_vm_readv=270, io_uring_setup=425, keyctl=219, add_key=217, mount=40, umount2=39,
                  pivot_root=41, chroot=51, unshare=97, setns=268, clone=220, clone3=435, bpf=280, perf_event_open=241,
                  userfaultfd=282),
}[os.uname().machine]
def arg(a):
  if isinstance(a, bytes): return ctypes.c_char_p(a)
  if isinstance(a, int): return ctypes.c_long(a)
  return a
def sc(name, *args):
  ctypes.set_errno(0)
  r = libc.syscall(ctypes.c_long(NR[name]), *[arg(a) for a in args])
  return r if r >= 0 else errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))
def ok(r):
  return 'ok' if isinstance(r, int) else r
`;

function py(code: string): string {
  return JSON.stringify(PY_PRELUDE + code);
}

interface Probe {
  result: any;
  lines: string[];
  exit: Awaited<Sandbox['exited']>;
  sandbox: Sandbox;
}

function start(script: string, opts: Partial<SandboxOptions> = {}): { sandbox: Sandbox; lines: string[]; line: (match: RegExp) => Promise<string> } {
  const sandbox = spawnSandbox({ name: `escape-${randomBytes(6).toString('hex')}`, nodeArgs: ['-e', NODE_PRELUDE + script], memoryMb: 256, cpus: 1, ...opts });
  const lines: string[] = [];
  const waiting: Array<() => void> = [];
  let partial = '';
  sandbox.child.stdout!.on('data', (d: Buffer) => {
    const parts = (partial + d.toString('utf8')).split('\n');
    partial = parts.pop()!;
    lines.push(...parts.filter(Boolean));
    for (const wake of waiting.splice(0)) wake();
  });
  const line = async (match: RegExp): Promise<string> => {
    for (;;) {
      const found = lines.find((l) => match.test(l));
      if (found) return found;
      if (!sandbox.alive()) throw new Error(`the sandbox ended without printing ${match}: ${lines.join('\n')}`);
      await new Promise<void>((resolve) => {
        waiting.push(resolve);
        setTimeout(resolve, 200);
      });
    }
  };
  return { sandbox, lines, line };
}

/** Runs `script` (node, NODE_PRELUDE in scope) in a sandbox to its end; its last line is JSON. */
async function probe(script: string, opts: Partial<SandboxOptions> = {}): Promise<Probe> {
  const { sandbox, lines } = start(script, opts);
  // A probe that hangs (where a defence is missing, it may) fails with what it printed.
  const hung = setTimeout(() => sandbox.kill(), 30_000);
  const exit = await sandbox.exited;
  clearTimeout(hung);
  const last = lines.at(-1);
  let result: any = null;
  try {
    result = last ? JSON.parse(last) : null;
  } catch {}
  if (result === null) throw new Error(`the probe printed no JSON (exit ${JSON.stringify(exit)}): ${lines.join('\n')}`);
  return { result, lines, exit, sandbox };
}

/** Kills a sandbox and waits for its end (its cgroups are removed then). */
async function stop(sandbox: Sandbox): Promise<void> {
  sandbox.kill();
  await sandbox.exited;
}

/** Host processes (ps sees every pid namespace) whose command line `match` accepts. */
function hostProcesses(match: (args: string) => boolean): string[] {
  return execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
    .split('\n')
    .filter((args) => match(args) && !args.startsWith('ps -eo'));
}

/** A folder holding a listening unix socket the sandbox user may connect to, as the session makes one. */
async function socketFolder(): Promise<{ dir: string; server: net.Server; accepted: () => number }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'escape-socket-'));
  let accepted = 0;
  const server = net.createServer((s) => {
    accepted++;
    s.destroy();
  });
  await new Promise<void>((resolve) => server.listen(path.join(dir, SOCKET_FILE), resolve));
  fs.chmodSync(path.join(dir, SOCKET_FILE), 0o777);
  if (process.getuid?.() === 0) fs.chownSync(dir, SANDBOX_UID, SANDBOX_UID);
  return { dir, server, accepted: () => accepted };
}

describe('sandbox escapes (issue 31)', function () {
  this.timeout(90_000);
  const cleanup: Array<() => unknown> = [];

  before(function () {
    if (!findBwrap()) this.skip();
  });
  after(async () => {
    for (const c of cleanup.reverse()) await c();
  });

  it('runs with no capability, no new privileges and the seccomp filter, children included', async () => {
    const { result } = await probe(`
      const status = (text) => Object.fromEntries(text.split('\\n').filter((l) => /^(Cap|NoNewPrivs|Seccomp:)/.test(l)).map((l) => l.split(/:\\s+/)));
      const child = cp.spawnSync('/bin/sh', ['-c', 'cat /proc/self/status'], { encoding: 'utf8' }).stdout;
      out({ node: status(fs.readFileSync('/proc/self/status', 'utf8')), shell: status(child) });`);
    for (const who of ['node', 'shell']) {
      const status = result[who];
      for (const cap of ['CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb']) expect(status[cap], `${who} ${cap}`).to.equal('0000000000000000');
      expect(status.NoNewPrivs, who).to.equal('1');
      expect(status.Seccomp, who).to.equal('2');
    }
  });

  it('still runs node, its threads and child processes, a shell and python under the filter', async () => {
    const { result } = await probe(`
      const { Worker } = require('node:worker_threads');
      const worker = new Promise((resolve) => new Worker('require("node:worker_threads").parentPort.postMessage(6 * 7)', \
{ eval: true }).once('message', resolve));
      const shell = cp.spawnSync('/bin/sh', ['-c', 'echo a | tr a b; (sleep 0.1 &) ; wait'], { encoding: 'utf8' });
      const python = py(${py(`import threading, subprocess
t = threading.Thread(target=lambda: None)
t.start()
t.join()
print(json.dumps(subprocess.run(["/bin/echo", "ok"], capture_output=True, text=True).stdout.strip()))`)});
      const pair = py(${py(`a, b = socket.socketpair()
a.send(b"x")
print(json.dumps(b.recv(1).decode()))`)});
      worker.then((fromWorker) => out({ fromWorker, shell: shell.stdout.trim(), shellStatus: shell.status, python, pair }));`);
    expect(result).to.deep.equal({ fromWorker: 42, shell: 'b', shellStatus: 0, python: 'ok', pair: 'x' });
  });

  describe('the network', () => {
    let target: http.Server;
    let targetPort: number;
    let hits = 0;
    before(async () => {
      target = http.createServer((_req, res) => {
        hits++;
        res.end('reached');
      });
      await new Promise<void>((resolve) => target.listen(0, '::', resolve));
      targetPort = (target.address() as AddressInfo).port;
      cleanup.push(() => new Promise((resolve) => target.close(resolve)));
    });

    it('reaches no TCP port: loopback, the host, Postgres, Redis, Temporal, nor any over IPv6', async () => {
      const external = Object.values(os.networkInterfaces())
        .flat()
        .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;
      const temporalPort = Number(stack().temporalAddress.split(':').pop());
      const pgPort = Number(new URL(stack().databaseUrl).port);
      const targets: Array<[string, number]> = [
        ['127.0.0.1', targetPort],
        ['127.0.0.1', 5432],
        ['127.0.0.1', 6379],
        ['127.0.0.1', 7233],
        ['127.0.0.1', pgPort],
        ['127.0.0.1', temporalPort],
        ['::1', targetPort],
        ['::1', 6379],
        ['10.0.2.2', targetPort],
        ...(external ? [[external, targetPort] as [string, number]] : []),
      ];
      const { result } = await probe(`
        Promise.all(${JSON.stringify(targets)}.map(([host, port]) => connect({ host, port }).then((r) => [host + ':' + port, r])))
          .then((r) => out(Object.fromEntries(r)));`);
      for (const [where, how] of Object.entries(result)) expect(how, where).to.not.equal('connected');
      expect(hits).to.equal(0);
    });

    it('resolves no name', async () => {
      const { result } = await probe(`
        const dns = require('node:dns');
        Promise.all(['example.com', 'localhost.localdomain'].map((h) => dns.promises.lookup(h).then(() => 'resolved', (e) => e.code)))
          .then((node) => out({ node, python: py(${py(`try:
  socket.getaddrinfo("example.com", 80)
  print(json.dumps("resolved"))
except OSError as e:
  print(json.dumps(type(e).__name__))`)}) }));`);
      expect(result.node).to.not.include('resolved');
      expect(result.python).to.not.equal('resolved');
    });

    it('may open no socket but AF_UNIX: IPv4, IPv6, netlink, packet and vsock are refused at socket()', async () => {
      const { result } = await probe(`
        out(py(${py(`
def make(family, kind, proto=0):
  try:
    socket.socket(family, kind, proto).close()
    return 'ok'
  except OSError as e:
    return errno.errorcode[e.errno]
def pair(family):
  try:
    [s.close() for s in socket.socketpair(family, socket.SOCK_STREAM)]
    return 'ok'
  except OSError as e:
    return errno.errorcode[e.errno]
print(json.dumps(dict(
  inet=make(socket.AF_INET, socket.SOCK_STREAM), udp=make(socket.AF_INET, socket.SOCK_DGRAM),
  inet6=make(socket.AF_INET6, socket.SOCK_STREAM), netlink=make(socket.AF_NETLINK, socket.SOCK_RAW, 0),
  packet=make(socket.AF_PACKET, socket.SOCK_RAW, 0), vsock=make(40, socket.SOCK_STREAM),
  inetPair=pair(socket.AF_INET), unix=make(socket.AF_UNIX, socket.SOCK_STREAM), unixPair=pair(socket.AF_UNIX))))
`)}));`);
      expect(result).to.deep.equal({
        inet: 'EAFNOSUPPORT',
        udp: 'EAFNOSUPPORT',
        inet6: 'EAFNOSUPPORT',
        netlink: 'EAFNOSUPPORT',
        packet: 'EAFNOSUPPORT',
        vsock: 'EAFNOSUPPORT',
        inetPair: 'EAFNOSUPPORT',
        unix: 'ok',
        unixPair: 'ok',
      });
    });
  });

  describe('unix sockets and other runs', () => {
    it("connects to its sidecar's socket and to no other: host sockets are not there, abstract ones are another namespace's", async () => {
      const own = await socketFolder();
      const host = await socketFolder();
      const abstract = `\0escape-${randomBytes(6).toString('hex')}`;
      let abstractHits = 0;
      const abstractServer = net.createServer((s) => {
        abstractHits++;
        s.destroy();
      });
      await new Promise<void>((resolve) => abstractServer.listen(abstract, resolve));
      cleanup.push(() => {
        own.server.close();
        host.server.close();
        abstractServer.close();
        fs.rmSync(own.dir, { recursive: true, force: true });
        fs.rmSync(host.dir, { recursive: true, force: true });
      });
      const paths = [
        path.join(host.dir, SOCKET_FILE),
        '/run/postgresql/.s.PGSQL.5432',
        '/var/run/postgresql/.s.PGSQL.5432',
        '/run/mysqld/mysqld.sock',
        '/var/run/docker.sock',
        '/run/systemd/private',
      ];
      const { result } = await probe(
        `
        const found = cp.spawnSync('/usr/bin/find', ['/', '-path', '/proc', '-prune', '-o', '-type', 's', '-print'], { encoding: \
'utf8' }).stdout.trim().split('\\n').filter(Boolean);
        Promise.all([connect({ path: '/sidecar/${SOCKET_FILE}' }), connect({ path: ${JSON.stringify(abstract)} }), ...${JSON.stringify(paths)}.map((p) \
=> connect({ path: p }))])
          .then(([sidecar, abstract, ...others]) => out({ found, sidecar, abstract, others }));`,
        { socketDir: own.dir },
      );
      expect(result.found).to.deep.equal(['/sidecar/sidecar.sock']);
      expect(result.sidecar).to.equal('connected');
      expect(own.accepted()).to.equal(1);
      expect(result.abstract).to.equal('ECONNREFUSED');
      expect(abstractHits).to.equal(0);
      expect(result.others).to.deep.equal(paths.map(() => 'ENOENT'));
      expect(host.accepted()).to.equal(0);
    });

    it("sees neither another run's workspace nor its sidecar socket nor its processes", async () => {
      const other = await socketFolder();
      const files = { inputDir: fs.mkdtempSync(path.join(os.tmpdir(), 'escape-input-')), outputDir: fs.mkdtempSync(path.join(os.tmpdir(), 'escape-output-')) };
      fs.writeFileSync(path.join(files.inputDir, 'secret.txt'), 'the other run');
      for (const dir of Object.values(files)) fs.chmodSync(dir, 0o755);
      const marker = `other-run-${randomBytes(4).toString('hex')}`;
      const running = start(`out('${marker}'); setInterval(() => {}, 1000);`, { socketDir: other.dir, files });
      cleanup.push(async () => {
        running.sandbox.kill();
        await running.sandbox.exited;
        other.server.close();
        for (const dir of [other.dir, ...Object.values(files)]) fs.rmSync(dir, { recursive: true, force: true });
      });
      await running.line(new RegExp(marker));
      const { result } = await probe(`
        const tryStat = (p) => { try { fs.statSync(p); return 'visible'; } catch (e) { return e.code; } };
        const cmdlines = fs.readdirSync('/proc').filter((d) => /^\\d+$/.test(d)).map((d) => { try { return fs.readFileSync('/proc/' \
+ d + '/cmdline', 'utf8'); } catch { return ''; } });
        connect({ path: '${path.join(other.dir, SOCKET_FILE)}' }).then((socket) => out({
          socket,
          socketDir: tryStat('${other.dir}'),
          input: tryStat('${path.join(files.inputDir, 'secret.txt')}'),
          output: tryStat('${files.outputDir}'),
          ownInput: tryStat('/workspace/input/secret.txt'),
          // Split, so that this script's own command line does not hold it.
          otherProcess: cmdlines.some((c) => c.includes('${marker.slice(0, 6)}' + '${marker.slice(6)}')),
        }));`);
      expect(result).to.deep.equal({ socket: 'ENOENT', socketDir: 'ENOENT', input: 'ENOENT', output: 'ENOENT', ownInput: 'ENOENT', otherProcess: false });
      expect(other.accepted()).to.equal(0);
    });

    it("shows in /proc only its own processes, without the worker's environment", async () => {
      const secret = `worker-env-${randomBytes(6).toString('hex')}`;
      process.env.ESCAPE_SUITE_SECRET = secret;
      let result: any;
      try {
        ({ result } = await probe(`
          const pids = fs.readdirSync('/proc').filter((d) => /^\\d+$/.test(d));
          const read = (p) => { try { return fs.readFileSync(p, 'utf8'); } catch (e) { return e.code; } };
          out({ pids, cmdlines: pids.map((p) => read('/proc/' + p + '/cmdline')), environs: pids.map((p) => \
read('/proc/' + p + '/environ')), env: process.env });`));
      } finally {
        delete process.env.ESCAPE_SUITE_SECRET;
      }
      expect(JSON.stringify(result)).to.not.contain(secret);
      // bwrap's init and the probe (python and shells are gone): no host process, the worker's neither.
      expect(result.pids.length).to.be.lessThan(4);
      expect(result.cmdlines.join(' ')).to.not.match(/mocha|postgres|temporal|workers\/main/);
    });
  });

  describe('system calls', () => {
    it('may not ptrace nor read another process', async () => {
      const { result } = await probe(`
        out(py(${py(`
pid = os.fork()
if pid == 0:
  time.sleep(10)
  os._exit(0)
attach = ok(sc('ptrace', 16, pid, 0, 0))
vm = ok(sc('process_vm_readv', pid, 0, 0, 0, 0, 0))
os.kill(pid, 9)
os.waitpid(pid, 0)
print(json.dumps(dict(attach=attach, vm=vm)))
`)}));`);
      expect(result).to.deep.equal({ attach: 'EPERM', vm: 'EPERM' });
    });

    it('may not make a user namespace (`unshare -U`, clone, clone3) nor enter another', async () => {
      const { result } = await probe(`
        const unshare = cp.spawnSync('/usr/bin/unshare', ['-U', 'true'], { encoding: 'utf8' });
        const mapped = cp.spawnSync('/usr/bin/unshare', ['-U', '-r', '-m', '/bin/sh', '-c', 'mount -t tmpfs none /workspace \
&& echo mounted'], { encoding: 'utf8' });
        out({ unshare: unshare.status, unshareSaid: unshare.stderr, mapped: mapped.stdout.trim(), calls: py(${py(`
CLONE_NEWUSER = 0x10000000
def clone(flags):
  r = sc('clone', flags | 17, 0, 0, 0, 0)
  if r == 0:
    os._exit(0)
  if isinstance(r, int):
    os.waitpid(r, 0)
  return ok(r)
print(json.dumps(dict(unshare=ok(sc('unshare', CLONE_NEWUSER)), clone=clone(CLONE_NEWUSER), cloneNet=clone(0x40000000),
                      clone3=ok(sc('clone3', 0, 0)), setns=ok(sc('setns', 0, 0)))))
`)}) });`);
      expect(result.unshare).to.not.equal(0);
      expect(result.unshareSaid).to.match(/Operation not permitted/);
      expect(result.mapped).to.equal('');
      expect(result.calls).to.deep.equal({ unshare: 'EPERM', clone: 'EPERM', cloneNet: 'EPERM', clone3: 'ENOSYS', setns: 'EPERM' });
    });

    it('may not use io_uring, keyrings, mounts, BPF, perf or userfaultfd', async () => {
      const { result } = await probe(`
        out(py(${py(`
params = ctypes.create_string_buffer(120)
print(json.dumps(dict(
  io_uring=ok(sc('io_uring_setup', 1, params)),
  keyctl=ok(sc('keyctl', 1, 0)),
  add_key=ok(sc('add_key', b'user', b'escape', b'x', 1, -2)),
  mount=ok(sc('mount', b'none', b'/workspace', b'tmpfs', 0, 0)),
  umount=ok(sc('umount2', b'/workspace', 2)),
  chroot=ok(sc('chroot', b'/workspace')),
  pivot_root=ok(sc('pivot_root', b'/workspace', b'/workspace')),
  bpf=ok(sc('bpf', 0, ctypes.create_string_buffer(128), 128)),
  perf=ok(sc('perf_event_open', ctypes.create_string_buffer(128), 0, -1, -1, 0)),
  userfaultfd=ok(sc('userfaultfd', 0)))))
`)}));`);
      expect(result).to.deep.equal({
        io_uring: 'EPERM',
        keyctl: 'EPERM',
        add_key: 'EPERM',
        mount: 'EPERM',
        umount: 'EPERM',
        chroot: 'EPERM',
        pivot_root: 'EPERM',
        bpf: 'EPERM',
        perf: 'EPERM',
        userfaultfd: 'EPERM',
      });
    });
  });

  describe('resources', () => {
    before(function () {
      if (missingCeilings().length > 0) this.skip();
    });

    it("puts every process the agent starts in its sandbox's memory, CPU and pids cgroups", async () => {
      const marker = String(8000 + Math.floor(Math.random() * 1000));
      const running = start(`cp.spawn('/bin/sh', ['-c', '/usr/bin/sleep ${marker} & echo started; wait'], { stdio: 'inherit' });`);
      cleanup.push(() => stop(running.sandbox));
      await running.line(/started/);
      let pid: string | undefined;
      for (let i = 0; i < 100 && !pid; i++) {
        pid = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' })
          .split('\n')
          .map((l) => l.trim().split(/\s+(.*)/))
          .find(([, args]) => args === `/usr/bin/sleep ${marker}`)?.[0];
        if (!pid) await new Promise((r) => setTimeout(r, 50));
      }
      const groups = fs
        .readFileSync(`/proc/${pid}/cgroup`, 'utf8')
        .trim()
        .split('\n')
        .map((l) => l.split(':'));
      const own = `/agent-service/${running.sandbox.name}`;
      if (running.sandbox.mode === 'bwrap+cgroup-v2') expect(groups.find(([id]) => id === '0')?.[2]).to.equal(own);
      else
        for (const controller of ['memory', 'cpu', 'pids'])
          expect(groups.find(([, names]) => names.split(',').includes(controller))?.[2], controller).to.equal(own);
      running.sandbox.kill();
      await running.sandbox.exited;
    });

    it('holds a fork bomb at pids.max while a sandbox started after it runs a command to completion', async () => {
      const pids = 64;
      // Bounded (1000 children), so that a sandbox without the ceiling cannot take the host down.
      const bomb = start(
        `
        const child = cp.spawn('/usr/bin/python3', ['-c', ${py(`
kids, refused = [], None
for i in range(1000):
  try:
    pid = os.fork()
  except OSError as e:
    refused = errno.errorcode[e.errno]
    break
  if pid == 0:
    os.execv('/usr/bin/sleep', ['sleep', '60'])
  kids.append(pid)
print(json.dumps(dict(forked=len(kids), refused=refused)), flush=True)
sys.stdin.readline()
for k in kids: os.kill(k, 9)
for k in kids: os.waitpid(k, 0)
print(json.dumps('released'), flush=True)
`)}], { stdio: 'inherit' });
        child.on('exit', () => process.exit(0));`,
        { pids, memoryMb: 512, warm: true },
      );
      cleanup.push(() => stop(bomb.sandbox));
      const held = JSON.parse(await bomb.line(/forked/));
      expect(held.refused).to.equal('EAGAIN');
      expect(held.forked).to.be.lessThan(pids);
      // Another tenant's sandbox, started while the bomb holds every pid of its own cgroup.
      const { result } = await probe(
        `out(cp.spawnSync('/bin/sh', ['-c', 'for i in 1 2 3; do /usr/bin/true; done; echo done'], { encoding: 'utf8' }).stdout.trim());`,
      );
      expect(result).to.equal('done');
      bomb.sandbox.go();
      await bomb.line(/released/);
      await bomb.sandbox.exited;
    });

    it('kills a memory bomb inside the sandbox only', async () => {
      const { result, exit } = await probe(
        `
        const bomb = cp.spawnSync('/usr/bin/python3', ['-c', 'a = []\\nwhile True: a.append(b"x" * (16 * 1024 * 1024))'], { encoding: 'utf8' });
        out({ signal: bomb.signal, status: bomb.status });`,
        { memoryMb: 128 },
      );
      // The program died of it; the runtime that started it did not, nor did the worker.
      expect(result).to.deep.equal({ signal: 'SIGKILL', status: null });
      expect(exit.code).to.equal(0);
      expect(exit.oomKilled).to.equal(true);
    });

    it('kills a sandbox past its wall clock with every process it started, none left on the host', async () => {
      const marker = String(3000 + Math.floor(Math.random() * 5000));
      // Children that ignore SIGTERM and SIGHUP, one in a session of its own, one forked by python.
      const running = start(`
        cp.spawn('/bin/sh', ['-c', 'trap "" TERM HUP INT; (setsid /usr/bin/sleep ${marker} &); /usr/bin/sleep ${marker} \
& /usr/bin/python3 -c "import os, time; os.fork(); time.sleep(${marker})" & echo started; wait'], { stdio: 'inherit' \
});`);
      await running.line(/started/);
      const sleeps = () => hostProcesses((args) => args === `/usr/bin/sleep ${marker}`);
      const pythons = () => hostProcesses((args) => args.startsWith('/usr/bin/python3 -c import os') && args.includes(marker));
      const deadline = Date.now() + 5000;
      while ((sleeps().length < 2 || pythons().length < 2) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(sleeps(), 'the commands run, seen from the host').to.have.length(2);
      expect(pythons(), 'python and its fork').to.have.length(2);
      // What superviseSandbox does at a run's timeout.
      running.sandbox.kill();
      await running.sandbox.exited;
      let left: string[] = [];
      for (let i = 0; i < 20; i++) {
        // Anything at all that carries the marker: bwrap, node, the shell, their children.
        left = hostProcesses((args) => args.includes(marker));
        if (left.length === 0) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(left).to.deep.equal([]);
    });
  });

  describe('the filter', () => {
    it('is built for x86_64 and aarch64, and refused on another architecture with a reason', () => {
      expect(seccompFilter('x64').length % 8).to.equal(0);
      expect(seccompFilter('arm64').length % 8).to.equal(0);
      expect(() => seccompFilter('ia32')).to.throw(SandboxUnavailableError, /x86_64 and aarch64 only.*SANDBOX_MODE=process/);
    });
  });
});
