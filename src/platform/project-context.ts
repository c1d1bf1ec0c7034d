import type pg from 'pg';
import type { Project } from './projects.js';

/** Everything a request to one project's APIs needs, looked up once and cached. */
export interface ProjectContext extends Project {
  /** Pool connected as the API login role (switches role per request). */
  pool: pg.Pool;
  /** Superuser URL of the project database (migrations, type generation, admin tasks). */
  superuserUrl: string;
  /** Connection URL of the API login role. */
  apiUrl: string;
  /** Folder for this project's files (object bytes on the file backend, function bodies...). */
  filesDir: string;
}
