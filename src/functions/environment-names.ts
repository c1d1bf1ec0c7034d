/**
 * Which names a function's environment may hold. A project secret becomes a variable of the Deno
 * worker's process, so a name that steers the dynamic loader (LD_PRELOAD), the runtime (DENO_*,
 * NODE_OPTIONS), the C library (GLIBC_TUNABLES, GCONV_PATH), the process (PATH, HOME, TMPDIR) or
 * its network and TLS (HTTP_PROXY, SSL_CERT_FILE, SSLKEYLOGFILE) would act outside the Deno
 * sandbox. Names must be identifiers; those are refused whatever their case.
 */

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Refused prefixes (compared upper-cased). */
const RESERVED_PREFIXES = [
  'LD_',
  'DENO_',
  'NODE_',
  'NPM_CONFIG_',
  'RUST_',
  'V8_',
  'MALLOC_',
  'GLIBC_',
  'LC_',
];

/** Refused names (compared upper-cased). */
const RESERVED_NAMES = new Set([
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'PWD',
  'OLDPWD',
  'IFS',
  'ENV',
  'BASH_ENV',
  'CDPATH',
  'TMPDIR',
  'TMP',
  'TEMP',
  'TEMPDIR',
  'LANG',
  'LANGUAGE',
  'LOCPATH',
  'NLSPATH',
  'GCONV_PATH',
  'HOSTALIASES',
  'LOCALDOMAIN',
  'RES_OPTIONS',
  'RESOLV_HOST_CONF',
  'TZDIR',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'SSLKEYLOGFILE',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'ALL_PROXY',
  'NO_PROXY',
  'NO_COLOR',
  'FORCE_COLOR',
  'TERM',
  'XDG_CACHE_HOME',
  'XDG_CONFIG_HOME',
  'XDG_DATA_HOME',
  'XDG_RUNTIME_DIR',
]);

/**
 * Why `name` may not be a function's environment variable, or undefined when it may. (The
 * platform's own SUPABASE_ names are refused separately, with the hosted platform's message.)
 */
export function environmentNameProblem(name: string): string | undefined {
  if (!IDENTIFIER.test(name))
    return `Secret name must be an identifier (letters, digits and underscores, not starting with a digit): ${JSON.stringify(name)}`;
  const upper = name.toUpperCase();
  if (RESERVED_NAMES.has(upper) || RESERVED_PREFIXES.some((p) => upper.startsWith(p)))
    return `Secret name ${name} is reserved: it would configure the functions runtime or its process, not your function`;
  return undefined;
}

/**
 * The variables of `env` a worker may be given: identifier names outside the reserved sets (a
 * secret stored before these rules is left out, not passed on). SUPABASE_ names are the platform's own.
 */
export function workerEnvironment(env: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env))
    if (!value.includes('\0') && environmentNameProblem(name) === undefined) out[name] = value;
  return out;
}
