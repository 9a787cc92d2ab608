/**
 * The start-up check behind the read-only promise: a read-only transaction does not stop a
 * superuser (or a member of the server-file roles) from running programs or reading and writing
 * files on the database host, so read-only mode refuses such roles unless told otherwise.
 */
import pg from 'pg';
import type { Database } from './database.js';

export const PRIVILEGED_FLAG = 'unsafe-allow-privileged-role';

export const SERVER_FILE_ROLES = ['pg_execute_server_program', 'pg_read_server_files', 'pg_write_server_files'] as const;

export interface RoleReport {
  user: string;
  superuser: boolean;
  /** Server-file roles the user belongs to, directly or through other roles. */
  fileRoles: string[];
  /** Superuser roles the user could SET ROLE to. */
  superuserRoles: string[];
  serverVersionNum: number;
}

export async function inspectRole(database: Database): Promise<RoleReport> {
  const client = new pg.Client(database.clientConfig(false));
  client.on('error', () => undefined);
  await client.connect();
  try {
    const { rows } = await client.query<{ user: string; superuser: boolean; file_roles: string[]; superuser_roles: string[]; version: number }>({
      text: `SELECT current_user::text AS user,
                    r.rolsuper AS superuser,
                    ARRAY(SELECT g FROM unnest($1::text[]) AS g WHERE pg_has_role(current_user, g, 'MEMBER')) AS file_roles,
                    ARRAY(SELECT s.rolname::text FROM pg_roles s
                           WHERE s.rolsuper AND s.rolname <> current_user AND pg_has_role(current_user, s.oid, 'MEMBER')) AS superuser_roles,
                    current_setting('server_version_num')::int AS version
               FROM pg_roles r WHERE r.rolname = current_user`,
      values: [SERVER_FILE_ROLES],
    });
    const row = rows[0];
    if (!row) throw new Error('Could not read the current role from pg_roles.');
    return { user: row.user, superuser: row.superuser, fileRoles: row.file_roles, superuserRoles: row.superuser_roles, serverVersionNum: row.version };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Why this role is too powerful for read-only mode, or undefined when it is fine. */
export function privilegeProblem(report: RoleReport): string | undefined {
  if (report.superuser) return `role "${report.user}" is a superuser`;
  if (report.superuserRoles.length > 0) return `role "${report.user}" is a member of the superuser role(s) ${report.superuserRoles.map((r) => `"${r}"`).join(', ')}`;
  if (report.fileRoles.length > 0) return `role "${report.user}" is a member of ${report.fileRoles.join(', ')}`;
  return undefined;
}

/** The exact SQL to create a least-privilege role for this database. */
export function leastPrivilegeSql(databaseName: string, serverVersionNum: number, roleName = 'mcp_readonly'): string {
  const role = pg.escapeIdentifier(roleName);
  const db = pg.escapeIdentifier(databaseName);
  const lines = [`CREATE ROLE ${role} LOGIN PASSWORD 'choose-a-strong-password';`, `GRANT CONNECT ON DATABASE ${db} TO ${role};`];
  if (serverVersionNum >= 140000) {
    lines.push(`GRANT pg_read_all_data TO ${role};`);
  } else {
    lines.push(
      `-- for each schema to expose (public shown):`,
      `GRANT USAGE ON SCHEMA public TO ${role};`,
      `GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${role};`,
      `ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT ON TABLES TO ${role};`,
    );
  }
  lines.push(`GRANT pg_monitor TO ${role};  -- optional: database_health and top_queries see every session`, `ALTER ROLE ${role} SET default_transaction_read_only = on;`);
  return lines.join('\n');
}

export function refusalMessage(problem: string, databaseName: string, serverVersionNum: number): string {
  return [
    `Refusing to start in read-only mode: ${problem}.`,
    'A read-only transaction does not stop such a role from running programs (COPY ... TO PROGRAM) or reading and',
    'writing files on the database server (pg_read_file, COPY ... TO/FROM a file), or from reloading the server configuration.',
    'Connect as a least-privilege role instead; as a superuser, run:',
    '',
    leastPrivilegeSql(databaseName, serverVersionNum),
    '',
    `then connect as that role, e.g. postgresql://mcp_readonly@<host>/${encodeURIComponent(databaseName)} with the password in PGPASSWORD.`,
    `To run as this role anyway (not recommended), pass --${PRIVILEGED_FLAG}.`,
  ].join('\n');
}
