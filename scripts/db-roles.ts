/**
 * `npm run db:roles [-- --admin-url URL] [--prefix market_] [--services a,b] [--out FILE]`: creates one
 * PostgreSQL LOGIN role per service that can use only its own schema (see packages/db/roles.ts), and
 * prints each service's <SERVICE>_DATABASE_URL (or writes them, mode 0600, as an env file).
 * Run once by an operator; running again rotates every password (restart the services with the new URLs).
 * The admin URL: --admin-url, else DATABASE_ADMIN_URL, else DATABASE_URL.
 */
import fs from 'node:fs';
import { ALL_SERVICES, type ServiceName } from '../packages/config';
import { createServiceRoles, DEFAULT_ROLE_PREFIX } from '../packages/db/roles';

export { createServiceRoles, dropServiceRoles, roleName, type ServiceRole } from '../packages/db/roles';

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
  const roles = await createServiceRoles({ adminUrl, services, prefix: arg('prefix') ?? DEFAULT_ROLE_PREFIX });
  const lines = roles.map((r) => `${r.service.toUpperCase()}_DATABASE_URL=${r.url}`);
  const out = arg('out');
  if (out) {
    fs.writeFileSync(out, `${lines.join('\n')}\n`, { mode: 0o600 });
    console.log(`${roles.length} roles (${roles.map((r) => r.role).join(', ')}); their URLs are in ${out}`);
  } else {
    console.log(`# ${roles.length} roles; give each service its own line (a Secret per service):`);
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
