/**
 * What a worker runs as and what it may use outside Deno's own permissions: an unprivileged user
 * when the platform is root (so code that escaped the Deno sandbox is not root), and the size of
 * its temp folder (checked by the runtime once a second).
 */
import { chmodSync, lstatSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/** The user `nobody` (from /etc/passwd; 65534 when not listed) when the platform runs as root; else undefined. */
export function workerUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  try {
    for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const [name, , uid, gid] = line.split(':');
      if (name === 'nobody' && uid && gid) return { uid: Number(uid), gid: Number(gid) };
    }
  } catch {}
  return { uid: 65534, gid: 65534 };
}

/**
 * Adds the search (x) bit for others on the folders above `dir` (nothing else: no listing, no
 * reading), so the worker's user can reach its bundle under the platform's data folder.
 */
export function ensureTraversable(dir: string): void {
  let d = dirname(resolve(dir));
  while (d !== '/') {
    const st = statSync(d);
    if ((st.mode & 0o001) === 0) chmodSync(d, st.mode | 0o001);
    d = dirname(d);
  }
}

/**
 * Bytes the files under `dir` hold on disk: a file's allocated blocks (a sparse file counts what it
 * really uses) but no more than its size in whole 4 KiB blocks — the blocks the file system adds
 * for its own bookkeeping (an extent tree when the free space was fragmented) are not the
 * function's, and a file of exactly the per-file limit must not count as over the folder's; each
 * entry counts as a block at least. Stops counting once over `stopAt`.
 */
export function folderUsage(dir: string, stopAt: number): number {
  let total = 0;
  const stack = [dir];
  while (stack.length) {
    const d = stack.pop() as string;
    let names: string[];
    try {
      names = readdirSync(d);
    } catch {
      continue;
    }
    for (const name of names) {
      const path = join(d, name);
      try {
        const st = lstatSync(path);
        const allocated = st.blocks * 512;
        const used = st.isFile() ? Math.min(allocated, Math.ceil(st.size / 4096) * 4096) : allocated;
        total += Math.max(used, 4096);
        if (st.isDirectory()) stack.push(path);
      } catch {}
      if (total > stopAt) return total;
    }
  }
  return total;
}
