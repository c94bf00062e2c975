// The multihost tests' handling of the processes run.sh started (their
// command lines, pid files and logs are in $MH_TOPOLOGY).
import { spawn } from 'node:child_process';
import { appendFileSync, closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';

// The pid in a pid file (its last line).
export const readPid = (file) => Number(readFileSync(file, 'utf8').trim().split('\n').pop());
export const alive = (pid) => { try { process.kill(pid, 0); return true; } catch { return false; } };

// Starts a process from its recorded command line again (detached; output
// appended to its log; its pid written where run.sh's teardown finds it).
export function respawn(entry) {
  const fd = openSync(entry.log, 'a');
  appendFileSync(entry.log, `\n--- restarted by the test at ${new Date().toISOString()}\n`);
  const child = spawn(entry.argv[0], entry.argv.slice(1), { detached: true, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  child.unref();
  writeFileSync(entry.pid_file, `${child.pid}\n`);
  return child.pid;
}
