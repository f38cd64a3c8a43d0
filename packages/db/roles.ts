/**
 * Database least privilege (`npm run db:roles`, and `npm run cluster`): one LOGIN role per service that
 * owns its own schema and nothing else. Run once by an operator with an admin URL; each service then
 * connects (and runs its migrations) as its role through <SERVICE>_DATABASE_URL.
 *
 * Per service: the role (created, or its password set) with a connection limit, CONNECT on the database
 * (taken from PUBLIC: only the service roles and the admin connect to it), its schema created
 * and owned by it (tables, sequences, views, types and functions of an existing installation handed
 * over), no access to any other service's schema, and no CREATE on public. Extensions the migrations
 * need are created here, as the admin (none today).
 *
 * Passwords: a service's password given to it (compose's db-admin.env and the Kubernetes job pass each
 * <SERVICE>_DATABASE_URL, whose user and password the services will connect with) is the one set, and a
 * re-run with the same one changes nothing; only a service given none gets a generated one (rotated on
 * every run). The server is sent a SCRAM-SHA-256 verifier, not the password, so no statement log holds it.
 */
import { createHash, createHmac, pbkdf2Sync, randomBytes, timingSafeEqual } from 'node:crypto';
import { Client } from 'pg';
import { ALL_SERVICES, type ServiceName } from '../config';

export const DEFAULT_ROLE_PREFIX = 'market_';
/** Extensions the services' migrations need (created by the admin, since the service roles cannot). */
export const REQUIRED_EXTENSIONS: readonly string[] = [];

export interface ServiceRole {
  service: ServiceName;
  role: string;
  password: string;
  /** The service's <SERVICE>_DATABASE_URL: the one given, else the admin URL with the role's name and password. */
  url: string;
  /** Whether the password was given (kept) or generated here. */
  passwordSource: 'given' | 'generated';
  /** False when the role already had exactly this password (a re-run). */
  passwordChanged: boolean;
}

/** What an operator gives for a service: its role's name (optional) and password. */
export interface GivenCredentials {
  role?: string;
  password: string;
  /** The URL they came from (returned as the service's URL). */
  url?: string;
}

export interface CreateRolesOptions {
  adminUrl: string;
  services?: readonly ServiceName[];
  /** Role name prefix (tests use a unique one: roles are cluster-wide). */
  prefix?: string;
  extensions?: readonly string[];
  /** Per service, the credentials to set (see givenCredentialsFromEnv); a service without any gets a generated password. */
  given?: Partial<Record<ServiceName, GivenCredentials>>;
  /** Connections each role may hold at once (default DEFAULT_CONNECTION_LIMIT): replicas × DATABASE_POOL_MAX, plus room for a roll. */
  connectionLimit?: number;
}

/** 10 replicas × the default pool of 10 connections (DATABASE_POOL_MAX), doubled for a rolling restart. */
export const DEFAULT_CONNECTION_LIMIT = 200;

/**
 * <SERVICE>_DATABASE_URL of each service in env (compose's db-admin.env, the job's Secret): its user is the
 * role to create and its password the one to set. A URL without a password is refused (it would be
 * ambiguous whether to generate one the service then does not know).
 */
export function givenCredentialsFromEnv(env: NodeJS.ProcessEnv, services: readonly ServiceName[] = ALL_SERVICES): Partial<Record<ServiceName, GivenCredentials>> {
  const out: Partial<Record<ServiceName, GivenCredentials>> = {};
  for (const service of services) {
    const key = `${service.toUpperCase()}_DATABASE_URL`;
    const raw = env[key];
    if (!raw) continue;
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new Error(`${key} is not a URL (postgres://market_${service}:<password>@host:5432/db)`);
    }
    const password = decodeURIComponent(url.password);
    if (!password) throw new Error(`${key} has no password: give the one the ${service} service connects with, or unset ${key} to have one generated`);
    out[service] = { role: url.username ? decodeURIComponent(url.username) : undefined, password, url: raw };
  }
  return out;
}

/** PostgreSQL's SCRAM-SHA-256 verifier of a password (what it stores in pg_authid.rolpassword). */
export function scramVerifier(password: string, salt = randomBytes(16), iterations = 4096): string {
  const salted = pbkdf2Sync(Buffer.from(password, 'utf8'), salt, iterations, 32, 'sha256');
  const clientKey = createHmac('sha256', salted).update('Client Key').digest();
  const storedKey = createHash('sha256').update(clientKey).digest();
  const serverKey = createHmac('sha256', salted).update('Server Key').digest();
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}

/** Whether a stored rolpassword (SCRAM-SHA-256 or md5) is this password's. */
export function passwordMatches(stored: string | null, role: string, password: string): boolean {
  if (!stored) return false;
  const scram = /^SCRAM-SHA-256\$(\d+):([^$]+)\$([^:]+):(.+)$/.exec(stored);
  if (scram) {
    const again = scramVerifier(password, Buffer.from(scram[2], 'base64'), Number(scram[1]));
    return again.length === stored.length && timingSafeEqual(Buffer.from(again), Buffer.from(stored));
  }
  if (stored.startsWith('md5')) return stored === `md5${createHash('md5').update(password + role).digest('hex')}`;
  return false;
}

/** ASCII printable passwords only are hashed here (PostgreSQL SASLprep-normalises others before hashing). */
const hashable = (password: string) => /^[\x20-\x7e]+$/.test(password);

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
    // Every role may connect to a new database by default: only the service roles (granted below) may here.
    await admin.query(`REVOKE CONNECT ON DATABASE "${database.replace(/"/g, '""')}" FROM PUBLIC`);
    const connectionLimit = opts.connectionLimit ?? DEFAULT_CONNECTION_LIMIT;
    if (!Number.isInteger(connectionLimit) || connectionLimit < 1) throw new Error(`connectionLimit must be a positive integer (got ${connectionLimit})`);
    for (const service of services) {
      const schema = ident(service);
      const given = opts.given?.[service];
      const role = given?.role ? ident(given.role) : roleName(service, prefix);
      const password = given?.password ?? randomBytes(24).toString('base64url');
      let passwordChanged = true;
      // Serialised: two runs at once (replicated clusters starting) must not race on CREATE ROLE.
      await admin.query('SELECT pg_advisory_lock(hashtext($1))', [`db-roles:${role}`]);
      try {
        const exists = (await admin.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [role])).rowCount! > 0;
        // pg_authid is readable by superusers only; an admin with CREATEROLE just sets the password again.
        const stored = exists
          ? await admin
              .query<{ p: string | null }>('SELECT rolpassword AS p FROM pg_authid WHERE rolname = $1', [role])
              .then((r) => r.rows[0]?.p ?? null)
              .catch(() => null)
          : null;
        passwordChanged = !passwordMatches(stored, role, password);
        const attrs = `LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT CONNECTION LIMIT ${connectionLimit}`;
        const secret = admin.escapeLiteral(hashable(password) ? scramVerifier(password) : password);
        await admin.query(`${exists ? 'ALTER' : 'CREATE'} ROLE ${role} ${attrs}${passwordChanged ? ` PASSWORD ${secret}` : ''}`);
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
      out.push({ service, role, password, url: given?.url ?? url.toString(), passwordSource: given ? 'given' : 'generated', passwordChanged });
    }
  } finally {
    await admin.end();
  }
  return out;
}

/**
 * The server's other databases every role may connect to (PostgreSQL grants CONNECT to PUBLIC by default).
 * The service roles can log in there too; only the server's pg_hba.conf can refuse that without touching
 * other owners' databases, so `npm run db:roles` names them and the operations docs give the lines.
 */
export async function databasesOpenToEveryone(adminUrl: string): Promise<string[]> {
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ name: string }>(
      `SELECT datname AS name FROM pg_database
        WHERE datallowconn AND datname <> current_database() AND has_database_privilege('public', oid, 'CONNECT')
        ORDER BY datname`,
    );
    return rows.map((r) => r.name);
  } finally {
    await admin.end();
  }
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
