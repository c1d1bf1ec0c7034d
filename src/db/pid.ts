/**
 * Facts about local processes: alive or not, when they started (so a reused pid is not mistaken
 * for the process that wrote a lock), and their parent. Linux reads /proc; elsewhere the start
 * time and parent are unknown and only `kill(pid, 0)` is used.
 */
import { readFileSync, readlinkSync } from 'node:fs';

/** Whether a process id names a live process (signal 0 checks existence without touching it). */
export function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The fields of /proc/<pid>/stat after the command name (which may hold spaces and parentheses). */
function statFields(pid: number): string[] | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  const close = text.lastIndexOf(')');
  if (close < 0) return undefined;
  // Field 3 (state) is the first after the name; see proc(5).
  return text
    .slice(close + 2)
    .trim()
    .split(/\s+/);
}

/**
 * The process's start time in clock ticks since boot (field 22 of /proc/<pid>/stat), as a string;
 * undefined when the process is gone or /proc is not available.
 */
export function processStartTime(pid: number): string | undefined {
  const f = statFields(pid);
  const v = f?.[22 - 3];
  return v && /^\d+$/.test(v) ? v : undefined;
}

/** The parent's pid (field 4 of /proc/<pid>/stat); undefined when unknown. */
export function parentPid(pid: number): number | undefined {
  const v = statFields(pid)?.[4 - 3];
  return v && /^\d+$/.test(v) ? Number(v) : undefined;
}

/** Whether a process is a zombie (exited, not yet reaped): it no longer does anything. */
function isZombie(pid: number): boolean {
  return statFields(pid)?.[0] === 'Z';
}

/** Whether a process runs: alive and not a zombie (an orphan's parent may be slow to reap it). */
export function processRunning(pid: number): boolean {
  return pidAlive(pid) && !isZombie(pid);
}

/**
 * Whether the process that recorded (pid, startTime) is still running: the pid is alive, is not a
 * zombie, and, when both start times are known, started at the recorded time (else the pid was reused).
 */
export function sameProcessAlive(pid: number, startTime: string | undefined): boolean {
  if (!processRunning(pid)) return false;
  if (!startTime) return true;
  const now = processStartTime(pid);
  return now === undefined || now === startTime;
}

/** The working folder of a process (/proc/<pid>/cwd); undefined when gone or not readable. */
export function processCwd(pid: number): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/cwd`);
  } catch {
    return undefined;
  }
}

/** The command line of a process, arguments joined by spaces; '' when unreadable. */
export function processCommandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return '';
  }
}
