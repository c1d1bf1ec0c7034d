/** The PostgreSQL servers projects can be placed on: the embedded one or DATABASE_URL, plus configured extras. */
import type { DbServerConfig } from '../config.js';
import type { EmbeddedServer } from '../db/embedded.js';

export interface DbServer extends DbServerConfig {
  /** The platform runs this server itself (embedded): it may edit pg_hba.conf and reload it. */
  managed: boolean;
  embedded?: EmbeddedServer;
}

export class DbServers {
  private readonly byId = new Map<string, DbServer>();
  constructor(
    readonly primary: DbServer,
    extras: DbServerConfig[] = [],
  ) {
    this.byId.set(primary.id, primary);
    for (const e of extras) this.byId.set(e.id, { ...e, managed: false });
  }
  get(id: string): DbServer {
    const s = this.byId.get(id);
    if (!s) throw new Error(`unknown database server "${id}" (configure it with STRATA_DB_SERVERS)`);
    return s;
  }
  all(): DbServer[] {
    return [...this.byId.values()];
  }
  /** Where a new project goes: the primary, unless asked otherwise. */
  placeNew(preferred?: string): DbServer {
    return preferred ? this.get(preferred) : this.primary;
  }
}
