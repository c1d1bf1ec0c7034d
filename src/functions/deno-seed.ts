/**
 * The Deno npm cache made at install time (scripts/seed-deno-cache.mjs, run by the build) for the
 * Supabase CLI's function template, so that `functions new` + `functions deploy` works on a
 * machine that cannot reach registry.npmjs.org: `@supabase/server` (and, through it,
 * `@supabase/middleware`, `@supabase/supabase-js`, `jose`) require Node 22, so they cannot be npm
 * dependencies of the platform; Deno fetches them once, into this seed, while the registry is
 * reachable by definition (`npm ci`).
 *
 * Before a deploy's import check the seed's `npm/` tree is copied into the data folder's Deno cache
 * where that lacks it, never over what is there: a missing folder is copied whole under a temporary
 * name and renamed into place, a missing file copied aside and linked into place, so Deno never
 * sees half a package (and two copies at once never clash). Everything copied is readable by the
 * workers' user (worker-sandbox.ts).
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { chmod, copyFile, link, mkdir, readdir, rename, rm, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';

/** The template's imports the seed caches (CLI 3.x `functions new`; the types import needs nothing). */
export const SEED_IMPORTS = ['npm:@supabase/server@^1'];

/** The part of a Deno cache that is copied: npm packages and their registry documents. */
const SEEDED_PART = 'npm';

const TEMP_PREFIX = '.strata-seed-';

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

/** `src` copied to `dest` (a new folder), readable and (folders) searchable by everyone. */
async function copyTree(src: string, dest: string): Promise<void> {
  await mkdir(dest);
  for (const e of await readdir(src, { withFileTypes: true })) {
    const from = join(src, e.name);
    const to = join(dest, e.name);
    if (e.isDirectory()) await copyTree(from, to);
    else if (e.isFile()) {
      await copyFile(from, to, constants.COPYFILE_EXCL);
      await chmod(to, 0o644);
    }
  }
  await chmod(dest, 0o755);
}

/** Copies into `dest` what `src` has and `dest` lacks; the number of folders and files copied. */
async function fill(src: string, dest: string): Promise<number> {
  let copied = 0;
  for (const e of await readdir(src, { withFileTypes: true })) {
    if (e.name.startsWith(TEMP_PREFIX)) continue;
    const from = join(src, e.name);
    const to = join(dest, e.name);
    if (e.isDirectory()) {
      if (await exists(to)) {
        copied += await fill(from, to);
        continue;
      }
      const temp = join(dest, `${TEMP_PREFIX}${randomBytes(6).toString('hex')}`);
      try {
        await copyTree(from, temp);
        // Fails when the folder appeared meanwhile (another copy, or Deno): theirs is kept.
        await rename(temp, to).then(
          () => copied++,
          () => {},
        );
      } finally {
        await rm(temp, { recursive: true, force: true });
      }
    } else if (e.isFile() && !(await exists(to))) {
      const temp = join(dest, `${TEMP_PREFIX}${randomBytes(6).toString('hex')}`);
      try {
        await copyFile(from, temp, constants.COPYFILE_EXCL);
        await chmod(temp, 0o644);
        // link() never replaces an existing file.
        await link(temp, to).then(
          () => copied++,
          () => {},
        );
      } finally {
        await unlink(temp).catch(() => {});
      }
    }
  }
  return copied;
}

/**
 * Fills `denoDir` from the seed at `seedDir` (nothing when there is no seed: a build that could not
 * reach the registry). Returns the number of folders and files copied.
 */
export async function seedDenoDir(seedDir: string | undefined, denoDir: string): Promise<number> {
  if (!seedDir) return 0;
  const src = join(seedDir, SEEDED_PART);
  if (!(await exists(src))) return 0;
  const dest = join(denoDir, SEEDED_PART);
  await mkdir(dest, { recursive: true });
  return fill(src, dest);
}
