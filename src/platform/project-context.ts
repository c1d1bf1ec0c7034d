import type pg from 'pg';

/** Everything a request to one project's APIs needs, looked up once and cached. */
export interface ProjectContext {
  ref: string;
  name: string;
  organizationId: string;
  region: string;
  status: string;
  createdAt: string;
  isDefault: boolean;
  /** Which database server holds the project, and the database's name there. */
  dbServer: string;
  dbName: string;
  /** Pool connected as the API login role (switches role per request). */
  pool: pg.Pool;
  /** Superuser URL of the project database (migrations, type generation, admin tasks). */
  superuserUrl: string;
  /** Connection URL of the API login role. */
  apiUrl: string;
  jwtSecret: string;
  anonKey: string;
  serviceRoleKey: string;
  /** Folder for this project's files (object bytes on the file backend, function bodies...). */
  filesDir: string;
}
