/** `strata serve` (one database's GraphQL API, standalone) and `strata sdl` (print its schema). */
import { parseArgs } from 'node:util';
import { checkedDatabaseUrl, portNumber, standaloneEnv } from '../../config.js';
import { printSchemaSdl } from './sdl.js';
import { serveDatabase } from './standalone.js';

function positiveInt(flag: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${flag} must be a whole number (got "${v}")`);
  return n;
}

export async function serveCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      'database-url': { type: 'string' },
      'jwt-secret': { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      'authenticator-password': { type: 'string' },
      'extension-dir': { type: 'string' },
      'max-body-bytes': { type: 'string' },
      'max-depth': { type: 'string' },
      'max-selections': { type: 'string' },
    },
  });
  const env = standaloneEnv();
  const databaseUrl = values['database-url'] ?? env.databaseUrl;
  const jwtSecret = values['jwt-secret'] ?? env.jwtSecret;
  if (!databaseUrl) throw new Error('strata serve: --database-url (or DATABASE_URL) is required');
  checkedDatabaseUrl(databaseUrl, 'strata serve: --database-url (or DATABASE_URL)');
  if (!jwtSecret) throw new Error('strata serve: --jwt-secret (or STRATA_JWT_SECRET) is required');
  const extDir = values['extension-dir'];
  const maxDepth = positiveInt('max-depth', values['max-depth']);
  const maxSelections = positiveInt('max-selections', values['max-selections']);
  const running = await serveDatabase({
    databaseUrl,
    jwtSecret,
    port:
      values.port !== undefined
        ? portNumber(values.port, '--port')
        : env.port !== undefined && env.port !== ''
          ? portNumber(env.port, 'STRATA_PORT')
          : undefined,
    host: values.host ?? env.host,
    authenticatorPassword: values['authenticator-password'] ?? env.authenticatorPassword,
    extensionDir: extDir === undefined ? 'embedded' : extDir === 'none' ? false : extDir,
    maxBodyBytes: positiveInt('max-body-bytes', values['max-body-bytes']),
    maxDepth: maxDepth === 0 ? false : maxDepth,
    maxSelections: maxSelections === 0 ? false : maxSelections,
  });
  if (running.install.warning) console.warn(`warning: ${running.install.warning}`);
  const how =
    running.install.mode === 'extension'
      ? `extension ${running.install.name} ${running.install.version}`
      : `SQL objects, version ${running.install.version}`;
  console.log(`Strata GraphQL is serving one database.

     GraphQL URL: ${running.graphqlUrl}
        anon key: ${running.anonKey}
service_role key: ${running.serviceRoleKey}
          Engine: ${how}

Send the key in the "apikey" header. Press Ctrl-C to stop.`);
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await running.close();
    process.exit(0);
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void stop());
}

export async function sdlCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      'database-url': { type: 'string' },
      role: { type: 'string' },
      schemas: { type: 'string' },
    },
  });
  const databaseUrl = values['database-url'] ?? standaloneEnv().databaseUrl;
  if (!databaseUrl) throw new Error('strata sdl: --database-url (or DATABASE_URL) is required');
  checkedDatabaseUrl(databaseUrl, 'strata sdl: --database-url (or DATABASE_URL)');
  const sdl = await printSchemaSdl(databaseUrl, {
    role: values.role,
    schemas: values.schemas ? values.schemas.split(',') : undefined,
    onWarning: (m) => console.warn(`warning: ${m}`),
  });
  process.stdout.write(sdl.endsWith('\n') ? sdl : sdl + '\n');
}
