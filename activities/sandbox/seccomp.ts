// The seccomp filter of every bwrap sandbox (DESIGN.md 9): a classic-BPF program, built here so
// the worker needs no native module, that bwrap loads (`--seccomp <fd>`) right before it execs the
// sandboxed command; every process the command starts inherits it. It allows every system call
// but those that reach the kernel's riskier surfaces or undo the sandbox: tracing and other
// processes' memory, mounts, namespaces, keyrings, BPF, perf, userfaultfd, io_uring (which opens
// sockets without socket()), module and kexec loading, and sockets of any family but AF_UNIX (the
// sidecar's socket is the only way out). A denied call answers an error (EPERM; EAFNOSUPPORT for a
// socket family), not a kill, so programs report it as they would any refusal. The lists follow
// Docker's default profile, Codex's linux-sandbox and Anthropic's sandbox-runtime
// (../shared/research/sandboxes.md), without the calls only a capability opens (the sandbox has
// none) except where denying them is cheap defence in depth.
import os from 'node:os';
import { SandboxUnavailableError } from './reachable.ts';

type Arch = 'x64' | 'arm64';

/** The architectures a filter is built for: the numbers below are theirs. */
const AUDIT_ARCH: Record<Arch, number> = { x64: 0xc000003e, arm64: 0xc00000b7 };

/** Refused outright with EPERM: system call numbers [x86_64, aarch64], null where the architecture has no such call. */
const DENIED: Record<string, [number, number | null]> = {
  ptrace: [101, 117],
  process_vm_readv: [310, 270],
  process_vm_writev: [311, 271],
  kcmp: [312, 272],
  pidfd_getfd: [438, 438],
  process_madvise: [440, 440],
  mount: [165, 40],
  umount2: [166, 39],
  pivot_root: [155, 41],
  chroot: [161, 51],
  open_tree: [428, 428],
  move_mount: [429, 429],
  fsopen: [430, 430],
  fsconfig: [431, 431],
  fsmount: [432, 432],
  fspick: [433, 433],
  mount_setattr: [442, 442],
  open_tree_attr: [467, 467],
  open_by_handle_at: [304, 265],
  keyctl: [250, 219],
  add_key: [248, 217],
  request_key: [249, 218],
  bpf: [321, 280],
  perf_event_open: [298, 241],
  userfaultfd: [323, 282],
  io_uring_setup: [425, 425],
  io_uring_enter: [426, 426],
  io_uring_register: [427, 427],
  unshare: [272, 97],
  setns: [308, 268],
  kexec_load: [246, 104],
  kexec_file_load: [320, 294],
  init_module: [175, 105],
  finit_module: [313, 273],
  delete_module: [176, 106],
  acct: [163, 89],
  swapon: [167, 224],
  swapoff: [168, 225],
  reboot: [169, 142],
  sethostname: [170, 161],
  setdomainname: [171, 162],
  settimeofday: [164, 170],
  clock_settime: [227, 112],
  clock_adjtime: [305, 266],
  adjtimex: [159, 171],
  syslog: [103, 116],
  quotactl: [179, 60],
  quotactl_fd: [443, 443],
  fanotify_init: [300, 262],
  lookup_dcookie: [212, 18],
  nfsservctl: [180, 42],
  vhangup: [153, 58],
  iopl: [172, null],
  ioperm: [173, null],
  uselib: [134, null],
  _sysctl: [156, null],
  create_module: [174, null],
  get_kernel_syms: [177, null],
  query_module: [178, null],
  ustat: [136, null],
  sysfs: [139, null],
};

/** Decided by their arguments (below). */
const INSPECTED = {
  clone: [56, 220],
  clone3: [435, 435],
  socket: [41, 198],
  socketpair: [53, 199],
  personality: [135, 92],
} satisfies Record<string, [number, number]>;

const EPERM = 1;
const ENOSYS = 38;
const EAFNOSUPPORT = 97;
const AF_UNIX = 1;
/**
 * clone()'s namespace flags: CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET
 * (CLONE_NEWTIME is clone3 and unshare only; its bit is the exit signal's in clone()).
 */
const CLONE_NAMESPACES = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000;
/** personality() values Docker's profile allows: the default, queries, and the two 32-bit layouts. */
const PERSONALITIES = [0x0, 0x8, 0x20000, 0x20008, 0xffffffff];
/** On x86_64, numbers with this bit set are the x32 ABI's: another table, refused wholesale. */
const X32_SYSCALL_BIT = 0x40000000;

// Classic BPF (linux/filter.h, linux/seccomp.h).
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const JSET_K = 0x45;
const RET_K = 0x06;
const RET_KILL_PROCESS = 0x80000000;
const RET_ERRNO = 0x00050000;
const RET_ALLOW = 0x7fff0000;
// struct seccomp_data: nr, arch, instruction_pointer, args[6] (64 bits each; the low half first on
// little-endian machines, and every argument inspected here is a 32-bit int).
const OFFSET_NR = 0;
const OFFSET_ARCH = 4;
const OFFSET_ARG0_LOW = 16;

interface Insn {
  code: number;
  k: number;
  /** Labels jumped to when the test holds / fails (jumps only); undefined: the next instruction. */
  jt?: string;
  jf?: string;
}

/** A tiny assembler: jumps name labels, resolved to the relative offsets BPF wants. */
class Program {
  private readonly insns: Insn[] = [];
  private readonly labels = new Map<string, number>();

  label(name: string): void {
    this.labels.set(name, this.insns.length);
  }
  load(offset: number): void {
    this.insns.push({ code: LD_W_ABS, k: offset });
  }
  jump(code: number, k: number, jt?: string, jf?: string): void {
    this.insns.push({ code, k, jt, jf });
  }
  ret(k: number): void {
    this.insns.push({ code: RET_K, k });
  }
  /** struct sock_filter[] as bwrap reads it: u16 code, u8 jt, u8 jf, u32 k, native (little) endian. */
  bytes(): Buffer {
    const out = Buffer.alloc(this.insns.length * 8);
    this.insns.forEach((insn, i) => {
      const offset = (label: string | undefined) => {
        if (label === undefined) return 0;
        const at = this.labels.get(label);
        if (at === undefined || at <= i || at - i - 1 > 255) throw new Error(`seccomp: no forward jump of at most 255 to ${label} from ${i}`);
        return at - i - 1;
      };
      out.writeUInt16LE(insn.code, i * 8);
      out.writeUInt8(offset(insn.jt), i * 8 + 2);
      out.writeUInt8(offset(insn.jf), i * 8 + 3);
      out.writeUInt32LE(insn.k >>> 0, i * 8 + 4);
    });
    return out;
  }
}

function archOf(arch: string): Arch {
  if (arch === 'x64' || arch === 'arm64') return arch;
  throw new SandboxUnavailableError(
    `the sandbox's seccomp filter is built for x86_64 and aarch64 only, and this worker is ${arch}: run workers on one of those, ` +
      `or set SANDBOX_MODE=process to run agents unisolated`,
  );
}

/**
 * The filter for `arch` (the worker's by default; its numbers are that architecture's), as the
 * bytes bwrap's `--seccomp` reads. Throws SandboxUnavailableError on another architecture.
 */
export function seccompFilter(arch: string = os.arch()): Buffer {
  const a = archOf(arch);
  const col = a === 'x64' ? 0 : 1;
  const inspected = (name: keyof typeof INSPECTED) => INSPECTED[name][col];
  const p = new Program();
  // Another ABI's numbers would be judged by this table's: such calls end the process.
  p.load(OFFSET_ARCH);
  p.jump(JEQ_K, AUDIT_ARCH[a], 'native', 'kill');
  p.label('native');
  p.load(OFFSET_NR);
  if (a === 'x64') p.jump(JGE_K, X32_SYSCALL_BIT, 'kill');
  for (const numbers of Object.values(DENIED)) {
    const n = numbers[col];
    if (n !== null) p.jump(JEQ_K, n, 'eperm');
  }
  // glibc and libuv try clone3 first and fall back to clone() on ENOSYS, whose flags (unlike
  // clone3's, behind a pointer) a filter can read.
  p.jump(JEQ_K, inspected('clone3'), 'enosys');
  p.jump(JEQ_K, inspected('clone'), 'clone');
  p.jump(JEQ_K, inspected('socket'), 'socket');
  p.jump(JEQ_K, inspected('socketpair'), 'socket');
  p.jump(JEQ_K, inspected('personality'), 'personality');
  p.ret(RET_ALLOW);
  p.label('clone');
  p.load(OFFSET_ARG0_LOW);
  p.jump(JSET_K, CLONE_NAMESPACES, 'eperm', 'allow');
  p.label('socket');
  p.load(OFFSET_ARG0_LOW);
  p.jump(JEQ_K, AF_UNIX, 'allow', 'eafnosupport');
  p.label('personality');
  p.load(OFFSET_ARG0_LOW);
  for (const value of PERSONALITIES) p.jump(JEQ_K, value, 'allow');
  p.label('eperm');
  p.ret(RET_ERRNO | EPERM);
  p.label('enosys');
  p.ret(RET_ERRNO | ENOSYS);
  p.label('eafnosupport');
  p.ret(RET_ERRNO | EAFNOSUPPORT);
  p.label('allow');
  p.ret(RET_ALLOW);
  p.label('kill');
  p.ret(RET_KILL_PROCESS);
  return p.bytes();
}

let built: Buffer | undefined;
/** This worker's filter, built once; throws SandboxUnavailableError on an unsupported architecture. */
export function sandboxSeccompFilter(): Buffer {
  built ??= seccompFilter();
  return built;
}
