/**
 * Database least privilege (`npm run db:roles`, and `npm run cluster`): one LOGIN role per service that
 * owns its own schema and nothing else. Run once by an operator with an admin URL; each service then
 * connects (and runs its migrations) as its role through <SERVICE>_DATABASE_URL.
 *
 * Per service: the role (created, or its password rotated), CONNECT on the database, its schema created
 * and owned by it (tables, sequences, views, types and functions of an existing installation handed
 * over), no access to any other service's schema, and no CREATE on public. Extensions the migrations
 * need are created here, as the admin (none today).
 */
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { ALL_SERVICES, type ServiceName } from '../config';

export const DEFAULT_ROLE_PREFIX = 'market_';
/** Extensions the services' migrations need (created by the admin, since the service roles cannot). */
export const REQUIRED_EXTENSIONS: readonly string[] = [];

export interface ServiceRole {
  service: ServiceName;
  role: string;
  password: string;
  /** The admin URL with the role's name and password: the service's <SERVICE>_DATABASE_URL. */
  url: string;
}

export interface CreateRolesOptions {
  adminUrl: string;
  services?: readonly ServiceName[];
  /** Role name prefix (tests use a unique one: roles are cluster-wide). */
  prefix?: string;
  extensions?: readonly string[];
}

const ident = (s: string) => {
  if (!/^[a-z_][a-z0-9_]*$/.test(s)) throw new Error(`not a safe SQL identifier: ${s}`);
  return s;
};

export function roleName(service: string, prefix = DEFAULT_ROLE_PREFIX): string {
  return ident(`${prefix}${service}`);
}

export async function createServiceRoles(opts: CreateRolesOptions): Promise<ServiceRole[]> {
  const services = opts.services ?? ALL_SERVICES;
  const prefix = opts.prefix ?? DEFAULT_ROLE_PREFIX;
  const admin = new Client({ connectionString: opts.adminUrl });
  await admin.connect();
  const out: ServiceRole[] = [];
  try {
    const { rows: dbRows } = await admin.query<{ db: string }>('SELECT current_database() AS db');
    const database = dbRows[0].db;
    for (const ext of opts.extensions ?? REQUIRED_EXTENSIONS) await admin.query(`CREATE EXTENSION IF NOT EXISTS ${ident(ext)}`);
    // PostgreSQL 15 already refuses CREATE on public to ordinary roles; older servers did not.
    await admin.query('REVOKE CREATE ON SCHEMA public FROM PUBLIC');
    for (const service of services) {
      const role = roleName(service, prefix);
      const schema = ident(service);
      const password = randomBytes(24).toString('base64url');
      // Serialised: two runs at once (replicated clusters starting) must not race on CREATE ROLE.
      await admin.query('SELECT pg_advisory_lock(hashtext($1))', [`db-roles:${role}`]);
      try {
        const exists = (await admin.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [role])).rowCount! > 0;
        const pw = `'${password}'`; // base64url: no quote can appear
        await admin.query(`${exists ? 'ALTER' : 'CREATE'} ROLE ${role} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT PASSWORD ${pw}`);
      } finally {
        await admin.query('SELECT pg_advisory_unlock(hashtext($1))', [`db-roles:${role}`]);
      }
      await admin.query(`GRANT CONNECT ON DATABASE "${database.replace(/"/g, '""')}" TO ${role}`);
      await admin.query(`CREATE SCHEMA IF NOT EXISTS ${schema} AUTHORIZATION ${role}`);
      await admin.query(`ALTER SCHEMA ${schema} OWNER TO ${role}`);
      await handOver(admin, schema, role);
      // Nothing of any other service's schema (no grants are made; any left from before are taken back).
      for (const other of ALL_SERVICES) {
        if (other === service) continue;
        const there = (await admin.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [other])).rowCount! > 0;
        if (!there) continue;
        await admin.query(`REVOKE ALL ON SCHEMA ${ident(other)} FROM ${role}`);
        await admin.query(`REVOKE ALL ON ALL TABLES IN SCHEMA ${ident(other)} FROM ${role}`);
        await admin.query(`REVOKE ALL ON ALL SEQUENCES IN SCHEMA ${ident(other)} FROM ${role}`);
      }
      const url = new URL(opts.adminUrl);
      url.username = role;
      url.password = password;
      out.push({ service, role, password, url: url.toString() });
    }
  } finally {
    await admin.end();
  }
  return out;
}

/** An existing installation (tables made by the admin role): everything in the schema now belongs to the service's role. */
async function handOver(admin: Client, schema: string, role: string): Promise<void> {
  const objects = await admin.query<{ kind: string; name: string }>(
    `SELECT CASE WHEN c.relkind = 'S' THEN 'SEQUENCE' WHEN c.relkind = 'v' THEN 'VIEW' WHEN c.relkind = 'm' THEN 'MATERIALIZED VIEW' ELSE 'TABLE' END AS kind,
            format('%I.%I', n.nspname, c.relname) AS name
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S')
        -- a sequence owned by a column moves with its table
        AND NOT (c.relkind = 'S' AND EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = c.oid AND d.deptype IN ('a', 'i')))
     UNION ALL
     SELECT 'TYPE', format('%I.%I', n.nspname, t.typname)
       FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
      WHERE n.nspname = $1 AND t.typtype IN ('e', 'd')
     UNION ALL
     SELECT 'FUNCTION', format('%I.%I(%s)', n.nspname, p.proname, pg_get_function_identity_arguments(p.oid))
       FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname = $1 AND p.prokind = 'f'`,
    [schema],
  );
  for (const o of objects.rows) await admin.query(`ALTER ${o.kind} ${o.name} OWNER TO ${role}`);
}

/** Drops the roles (tests): their objects go first, in every database given. */
export async function dropServiceRoles(adminUrl: string, prefix: string, services: readonly ServiceName[] = ALL_SERVICES): Promise<void> {
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    for (const service of services) {
      const role = roleName(service, prefix);
      if ((await admin.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [role])).rowCount === 0) continue;
      await admin.query(`DROP OWNED BY ${role}`).catch(() => undefined);
      await admin.query(`DROP ROLE IF EXISTS ${role}`);
    }
  } finally {
    await admin.end();
  }
}
