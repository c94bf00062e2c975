// Host-side observations for the soak test: processes, mounts, cgroups,
// temp files, a process's RSS and open fds. Linux /proc and /sys only.
import { existsSync, readFileSync, readdirSync, readlinkSync, statSync } from 'node:fs';
import path from 'node:path';

const readOr = (file, fallback = null) => {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return fallback;
  }
};

// /proc/PID/stat: {pid, comm, ppid, starttime} (comm may hold spaces and parentheses).
export function procStat(pid) {
  const s = readOr(`/proc/${pid}/stat`);
  if (!s) return null;
  const close = s.lastIndexOf(')');
  const comm = s.slice(s.indexOf('(') + 1, close);
  const rest = s.slice(close + 2).split(' ');
  return { pid: Number(pid), comm, state: rest[0], ppid: Number(rest[1]), starttime: rest[19] };
}

export function allPids() {
  return readdirSync('/proc').filter((e) => /^\d+$/.test(e)).map(Number);
}

export function exeOf(pid) {
  try {
    return readlinkSync(`/proc/${pid}/exe`);
  } catch {
    return '';
  }
}

export function cmdlineOf(pid) {
  return (readOr(`/proc/${pid}/cmdline`, '') || '').split('\0').filter(Boolean).join(' ');
}

// Every live descendant of `root` (not root itself): Map pid -> stat.
export function descendants(root) {
  const byParent = new Map();
  const stats = new Map();
  for (const pid of allPids()) {
    const st = procStat(pid);
    if (!st) continue;
    stats.set(pid, st);
    if (!byParent.has(st.ppid)) byParent.set(st.ppid, []);
    byParent.get(st.ppid).push(pid);
  }
  const out = new Map();
  const stack = [...(byParent.get(root) ?? [])];
  while (stack.length) {
    const pid = stack.pop();
    if (out.has(pid)) continue;
    out.set(pid, stats.get(pid));
    stack.push(...(byParent.get(pid) ?? []));
  }
  return out;
}

// VmRSS / VmHWM in bytes.
export function memOf(pid) {
  const s = readOr(`/proc/${pid}/status`, '');
  const kb = (key) => {
    const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(s);
    return m ? Number(m[1]) * 1024 : null;
  };
  return { rss: kb('VmRSS'), hwm: kb('VmHWM'), threads: Number(/^Threads:\s+(\d+)/m.exec(s)?.[1] ?? 0) };
}

export function fdCount(pid) {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return null;
  }
}

// What the fds of `pid` point at, summarised by type (socket, pipe, anon_inode:..., file).
export function fdKinds(pid) {
  const kinds = {};
  let entries = [];
  try {
    entries = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return kinds;
  }
  for (const fd of entries) {
    let t;
    try {
      t = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue;
    }
    const k = t.startsWith('socket:') ? 'socket' : t.startsWith('pipe:') ? 'pipe' : t.startsWith('anon_inode:') ? t : t.startsWith('/') ? 'file' : t;
    kinds[k] = (kinds[k] ?? 0) + 1;
  }
  return kinds;
}

// ------------------------------------------------------------------ mounts

export function mountSnapshot(patterns) {
  const lines = (readOr('/proc/self/mountinfo', '') || '').split('\n').filter(Boolean);
  return { count: lines.length, matching: lines.filter((l) => patterns.some((p) => l.includes(p))) };
}

// ----------------------------------------------------------------- cgroups

// The pid in "airlock-<pid>", "airlock-<pid>-supervisor", "airlock-<pid>-<hex>"
// (src/jail/cgroup.cc OwnerOf), or 0.
export function cgroupOwner(name) {
  const m = /^airlock-(\d{1,9})(?:-(supervisor|[0-9a-f]{1,16}))?$/.exec(name);
  return m ? Number(m[1]) : 0;
}

// Every directory under /sys/fs/cgroup named airlock-* (the jail's per-process
// parents; their children are the per-jail cgroups), with the count of
// directories below each.
export function cgroupSnapshot(root = '/sys/fs/cgroup') {
  const found = [];
  walkDirs(root, 12, (p, name) => {
    if (name.startsWith('airlock-')) found.push({ path: p, owner: cgroupOwner(name), children: countDirs(p) });
  });
  return found;
}

// The entries of `dir`, or none when it cannot be read.
function entriesOf(dir) {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

// Calls visit(path, name) for every directory below `dir`, depth first, at
// most maxDepth levels down; unreadable directories are skipped.
function walkDirs(dir, maxDepth, visit, depth = 0) {
  if (depth > maxDepth) return;
  for (const e of entriesOf(dir)) {
    if (!e.isDirectory()) continue;
    const p = path.join(dir, e.name);
    visit(p, e.name);
    walkDirs(p, maxDepth, visit, depth + 1);
  }
}

function countDirs(dir) {
  let n = 0;
  walkDirs(dir, Infinity, () => n++);
  return n;
}

// ------------------------------------------------------------ temp entries

export const TEMP_ROOTS = ['/tmp', '/var/tmp', '/dev/shm'];

export function tempSnapshot(re = /airlock/i) {
  const out = [];
  for (const root of TEMP_ROOTS) {
    let entries = [];
    try {
      entries = readdirSync(root);
    } catch {
      continue;
    }
    for (const e of entries) if (re.test(e)) out.push(path.join(root, e));
  }
  return out;
}

// Files under `dir`, relative, recursively (directories end with '/').
export function listTree(dir) {
  const out = [];
  const walk = (d, rel) => {
    for (const e of entriesOf(d)) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        out.push(`${r}/`);
        walk(path.join(d, e.name), r);
      } else {
        out.push(r);
      }
    }
  };
  walk(dir, '');
  return out;
}

// Processes that look like airlock's: their executable is under one of
// `exeDirs`, or their command or cgroup names an airlock-* cgroup of `owners`.
export function airlockProcesses({ exeDirs = [], owners = new Set() } = {}) {
  const out = [];
  for (const pid of allPids()) {
    if (pid === process.pid) continue;
    const exe = exeOf(pid);
    const cg = readOr(`/proc/${pid}/cgroup`, '') || '';
    const owned = [...cg.matchAll(/airlock-(\d+)(?:-[0-9a-f]+|-supervisor)?/g)].some((m) => owners.has(Number(m[1])));
    if (exeDirs.some((d) => exe.startsWith(d)) || owned) {
      const st = procStat(pid);
      out.push({ pid, exe, comm: st?.comm, ppid: st?.ppid, cmd: cmdlineOf(pid).slice(0, 160), cgroup: owned });
    }
  }
  return out;
}

// Processes anywhere on the host whose executable's name is airlock,
// airlock-init or airlock-js (ours and anybody else's).
export function airlockLikeCount() {
  let n = 0;
  for (const pid of allPids()) {
    const base = path.basename(exeOf(pid)).replace(/ \(deleted\)$/, '');
    if (/^airlock(-init|-js)?$/.test(base)) n++;
  }
  return n;
}

export function fileSize(p) {
  try {
    return statSync(p).size;
  } catch {
    return null;
  }
}

export { existsSync };
