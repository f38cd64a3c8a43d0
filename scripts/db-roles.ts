/**
 * `npm run db:roles [-- --admin-url URL] [--prefix market_] [--services a,b] [--connection-limit N] [--out FILE]`:
 * creates one PostgreSQL LOGIN role per service that can use only its own schema and database, with at most N
 * connections (see packages/db/roles.ts).
 * The admin URL: --admin-url, else DATABASE_ADMIN_URL, else DATABASE_URL.
 *
 * Passwords: when <SERVICE>_DATABASE_URL is set (compose's db-admin.env, the Kubernetes job's Secret, both
 * from scripts/market-secrets.sh), its user is that service's role and its password is the one set —
 * running again with the same URLs changes nothing. A service without one gets a generated password (a new
 * one on every run), printed as its <SERVICE>_DATABASE_URL (or written, mode 0600, to --out).
 */
import fs from 'node:fs';
import { ALL_SERVICES, type ServiceName } from '../packages/config';
import { createServiceRoles, databasesOpenToEveryone, DEFAULT_CONNECTION_LIMIT, DEFAULT_ROLE_PREFIX, givenCredentialsFromEnv } from '../packages/db/roles';

export { createServiceRoles, dropServiceRoles, givenCredentialsFromEnv, roleName, type ServiceRole } from '../packages/db/roles';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

async function main(): Promise<number> {
  const adminUrl = arg('admin-url') ?? process.env.DATABASE_ADMIN_URL ?? process.env.DATABASE_URL;
  if (!adminUrl) {
    console.error('db:roles needs an admin URL: --admin-url postgres://admin@host/db, DATABASE_ADMIN_URL or DATABASE_URL');
    return 2;
  }
  const services = (arg('services')?.split(',').map((s) => s.trim()) ?? [...ALL_SERVICES]) as ServiceName[];
  const unknown = services.filter((s) => !(ALL_SERVICES as readonly string[]).includes(s));
  if (unknown.length) {
    console.error(`unknown service(s): ${unknown.join(', ')}; known: ${ALL_SERVICES.join(', ')}`);
    return 2;
  }
  const given = givenCredentialsFromEnv(process.env, services);
  const connectionLimit = Number(arg('connection-limit') ?? DEFAULT_CONNECTION_LIMIT);
  if (!Number.isInteger(connectionLimit) || connectionLimit < 1) {
    console.error(`--connection-limit must be a positive integer (replicas × DATABASE_POOL_MAX, with room for a roll); got ${arg('connection-limit')}`);
    return 2;
  }
  const roles = await createServiceRoles({ adminUrl, services, prefix: arg('prefix') ?? DEFAULT_ROLE_PREFIX, given, connectionLimit });
  for (const r of roles) {
    const how = r.passwordSource === 'given' ? `password of ${r.service.toUpperCase()}_DATABASE_URL ${r.passwordChanged ? 'set' : 'unchanged'}` : 'password generated';
    console.log(`role ${r.role} (${r.service}): own schema only, at most ${connectionLimit} connections; ${how}`);
  }
  const open = await databasesOpenToEveryone(adminUrl);
  if (open.length) {
    console.log(`note: every role may still connect to ${open.join(', ')} (PostgreSQL's default CONNECT for PUBLIC); refuse the service roles there in pg_hba.conf (docs/operations.md)`);
  }
  // Only generated passwords are news to the operator; given ones are not printed again.
  const generated = roles.filter((r) => r.passwordSource === 'generated');
  const lines = generated.map((r) => `${r.service.toUpperCase()}_DATABASE_URL=${r.url}`);
  const out = arg('out');
  if (!generated.length) {
    console.log(`${roles.length} roles ready; every password was given`);
  } else if (out) {
    fs.writeFileSync(out, `${lines.join('\n')}\n`, { mode: 0o600 });
    console.log(`${roles.length} roles ready; the generated URLs are in ${out}`);
  } else {
    console.log(`# ${generated.length} generated password(s); give each service its own line (a Secret per service):`);
    for (const l of lines) console.log(l);
  }
  return 0;
}

if (require.main === module) {
  main()
    .then((code) => process.exit(code))
    .catch((err) => {
      console.error(`db:roles failed: ${(err as Error).message}`);
      process.exit(2);
    });
}
