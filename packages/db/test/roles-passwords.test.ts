/**
 * `npm run db:roles` keeps the passwords it is given: compose's db-admin.env and the Kubernetes job pass
 * every <SERVICE>_DATABASE_URL (scripts/market-secrets.sh), and the services connect with exactly those.
 * Run as the operator runs it (the script, in its own process) against the real PostgreSQL, with roles
 * under a unique prefix dropped afterwards. The server here trusts local connections, so the password a
 * role got is read back from pg_authid (its SCRAM verifier) rather than by logging in.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { base62 } from '../../ids';
import { createTestDatabase, describeWithPostgres, REPO_ROOT, type TestDatabase } from '../../../test/kit';
import { migrate, openDb } from '..';
import { dropServiceRoles, givenCredentialsFromEnv, passwordMatches, scramVerifier } from '../roles';
import { migrations as ledgerMigrations } from '../../../services/ledger/migrations';
import { migrations as escrowMigrations } from '../../../services/escrow/migrations';

const run = promisify(execFile);

describe('db:roles passwords (no database)', () => {
  it('takes each service’s role and password from its <SERVICE>_DATABASE_URL, and refuses a URL without a password', () => {
    const given = givenCredentialsFromEnv(
      { LEDGER_DATABASE_URL: 'postgres://market_ledger:s3cr%40t@db:5432/market', AGENTS_DATABASE_URL: undefined },
      ['ledger', 'agents'],
    );
    expect(given).toEqual({ ledger: { role: 'market_ledger', password: 's3cr@t', url: 'postgres://market_ledger:s3cr%40t@db:5432/market' } });
    expect(() => givenCredentialsFromEnv({ ESCROW_DATABASE_URL: 'postgres://market_escrow@db/market' }, ['escrow'])).toThrow(/no password/);
  });

  it('computes the verifier PostgreSQL stores, and recognises it', () => {
    const v = scramVerifier('hunter2');
    expect(v).toMatch(/^SCRAM-SHA-256\$4096:[^$]+\$[^:]+:.+$/);
    expect(passwordMatches(v, 'r', 'hunter2')).toBe(true);
    expect(passwordMatches(v, 'r', 'hunter3')).toBe(false);
    expect(passwordMatches(null, 'r', 'hunter2')).toBe(false);
  });
});

describeWithPostgres('npm run db:roles with the passwords compose and the Kubernetes job give it (real PostgreSQL)', () => {
  let tdb: TestDatabase;
  let admin: Client;
  const prefix = `t${base62(8).toLowerCase()}_`;
  const services = ['ledger', 'escrow', 'agents'] as const;
  const passwords = { ledger: `s${base62(20)}`, escrow: `s${base62(20)}` };
  let urls: Record<'ledger' | 'escrow', string>;

  const dbRoles = async (extraEnv: Record<string, string> = {}) => {
    const { stdout } = await run(path.join(REPO_ROOT, 'node_modules/.bin/tsx'), ['scripts/db-roles.ts', '--services', services.join(','), '--prefix', prefix], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH, DATABASE_ADMIN_URL: tdb.url, LEDGER_DATABASE_URL: urls.ledger, ESCROW_DATABASE_URL: urls.escrow, ...extraEnv },
    });
    return stdout;
  };
  const stored = async (role: string) => (await admin.query('SELECT rolpassword AS p FROM pg_authid WHERE rolname = $1', [role])).rows[0]?.p as string;

  beforeAll(async () => {
    tdb = await createTestDatabase();
    const asRole = (service: 'ledger' | 'escrow') => {
      const u = new URL(tdb.url);
      u.username = `${prefix}${service}`;
      u.password = passwords[service];
      return u.toString();
    };
    urls = { ledger: asRole('ledger'), escrow: asRole('escrow') };
    admin = new Client({ connectionString: tdb.url });
    await admin.connect();
  });

  afterAll(async () => {
    await admin?.end();
    await tdb?.drop();
    await dropServiceRoles(process.env.TEST_DATABASE_URL!, prefix, services);
  });

  it('sets exactly the given passwords, generates only the one not given, and prints no given password', async () => {
    const out = await dbRoles();
    expect(out).toContain(`role ${prefix}ledger (ledger): own schema only, at most 200 connections; password of LEDGER_DATABASE_URL set`);
    expect(out).toContain(`role ${prefix}escrow (escrow): own schema only, at most 200 connections; password of ESCROW_DATABASE_URL set`);
    expect(out).toContain(`role ${prefix}agents (agents): own schema only, at most 200 connections; password generated`);
    expect(out).not.toContain(passwords.ledger);
    expect(out).not.toContain(passwords.escrow);
    expect(passwordMatches(await stored(`${prefix}ledger`), `${prefix}ledger`, passwords.ledger)).toBe(true);
    expect(passwordMatches(await stored(`${prefix}escrow`), `${prefix}escrow`, passwords.escrow)).toBe(true);
    // The generated one is printed as the agents service's URL, and is what its role has.
    const agentsUrl = new URL(/^AGENTS_DATABASE_URL=(.+)$/m.exec(out)![1]);
    expect(agentsUrl.username).toBe(`${prefix}agents`);
    expect(passwordMatches(await stored(`${prefix}agents`), `${prefix}agents`, decodeURIComponent(agentsUrl.password))).toBe(true);
  }, 60_000);

  it('is idempotent: a re-run with the same URLs leaves the given passwords exactly as they were', async () => {
    const before = { ledger: await stored(`${prefix}ledger`), escrow: await stored(`${prefix}escrow`) };
    const out = await dbRoles();
    expect(out).toContain(`role ${prefix}ledger (ledger): own schema only, at most 200 connections; password of LEDGER_DATABASE_URL unchanged`);
    expect(out).toContain(`role ${prefix}escrow (escrow): own schema only, at most 200 connections; password of ESCROW_DATABASE_URL unchanged`);
    expect(await stored(`${prefix}ledger`)).toBe(before.ledger);
    expect(await stored(`${prefix}escrow`)).toBe(before.escrow);
    // A changed URL (a rotated Secret) sets the new password.
    const rotated = new URL(urls.escrow);
    rotated.password = `s${base62(20)}`;
    const out2 = await dbRoles({ ESCROW_DATABASE_URL: rotated.toString() });
    expect(out2).toContain('password of ESCROW_DATABASE_URL set');
    expect(passwordMatches(await stored(`${prefix}escrow`), `${prefix}escrow`, rotated.password)).toBe(true);
    expect(await stored(`${prefix}ledger`)).toBe(before.ledger);
  }, 60_000);

  it('matches what PostgreSQL itself stores for a password (the SCRAM verifier is computed the same way)', async () => {
    const role = `${prefix}escrow`;
    const pw = `s${base62(20)}`;
    await admin.query("SET password_encryption = 'scram-sha-256'");
    await admin.query(`ALTER ROLE ${role} PASSWORD ${admin.escapeLiteral(pw)}`);
    expect(passwordMatches(await stored(role), role, pw)).toBe(true);
    expect(passwordMatches(await stored(role), role, `${pw}x`)).toBe(false);
  });

  it('with the ledger role’s URL, SELECT count(*) FROM escrow.purchases is permission denied', async () => {
    // The tests above rotated escrow's password: back to the URLs' own (where the server checks passwords,
    // as in CI's container, logging in with them proves the verifiers too).
    await dbRoles();
    for (const [schema, migrations, url] of [
      ['escrow', escrowMigrations, urls.escrow],
      ['ledger', ledgerMigrations, urls.ledger],
    ] as const) {
      const db = openDb({ databaseUrl: url, dataDir: 'memory://' }, schema);
      await migrate(db, migrations);
      await db.close();
    }
    const ledger = new Client({ connectionString: urls.ledger });
    await ledger.connect();
    try {
      expect((await ledger.query('SELECT current_user AS u')).rows[0].u).toBe(`${prefix}ledger`);
      await expect(ledger.query('SELECT count(*) FROM escrow.purchases')).rejects.toThrow(/permission denied/);
      expect((await ledger.query('SELECT count(*)::int AS n FROM ledger.schema_migrations')).rows[0].n).toBeGreaterThan(0);
    } finally {
      await ledger.end();
    }
  }, 60_000);
});
