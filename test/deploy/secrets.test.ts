/**
 * Secrets per process: scripts/market-secrets.sh writes one env file per process with only what it
 * needs (compose's env_file, and Kubernetes' `kubectl create secret generic --from-env-file`), and
 * docker-compose.yml hands each container only its own file. Checked without Docker; the compose
 * suite (test/containers) then runs the result.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { REPO_ROOT } from '../kit';

const SERVICES = ['gateway', 'agents', 'listings', 'escrow', 'ledger', 'payments', 'support', 'notifications'];
const SCRIPT = path.join(REPO_ROOT, 'scripts/market-secrets.sh');

function readEnv(file: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const eq = line.indexOf('=');
    out[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return out;
}

describe('scripts/market-secrets.sh: one env file per process, only its own credentials', () => {
  let dir: string;
  const generate = (extra: NodeJS.ProcessEnv = {}) =>
    execFileSync(SCRIPT, [dir], { env: { PATH: process.env.PATH, ...extra }, encoding: 'utf8' });
  const env = (name: string) => readEnv(path.join(dir, `${name}.env`));

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'market-secrets-test-'));
    generate({ ADMIN_TOKEN: 'adm_'.padEnd(40, 'x'), STRIPE_SECRET_KEY: 'sk_test_standin', STRIPE_WEBHOOK_SECRET: 'whsec_standin' });
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('writes a file per service, for NATS, the role bootstrap and the compose PostgreSQL, readable by the owner only', () => {
    const files = fs.readdirSync(dir).sort();
    expect(files).toEqual([...SERVICES.map((s) => `${s}.env`), 'db-admin.env', 'nats.env', 'postgres.env'].sort());
    for (const f of files) expect({ f, mode: (fs.statSync(path.join(dir, f)).mode & 0o777).toString(8) }).toEqual({ f, mode: '600' });
  });

  it('each service gets its own NATS user and database role, and nothing of the others', () => {
    const nats = env('nats');
    const passwords = new Set<string>();
    for (const s of SERVICES) {
      const S = s.toUpperCase();
      const e = env(s);
      expect(e.NATS_USER).toBe(s);
      expect(e.NATS_PASSWORD).toMatch(/^s[0-9a-f]{48}$/); // starts with a letter: nats-server would read 4230e46… as a number
      expect(e.NATS_PASSWORD).toBe(nats[`NATS_PASSWORD_${S}`]);
      expect(e[`${S}_DATABASE_URL`]).toMatch(new RegExp(`^postgres://market_${s}:s[0-9a-f]{48}@postgres:5432/market$`));
      const dbKeys = Object.keys(e).filter((k) => k.endsWith('DATABASE_URL'));
      expect(dbKeys).toEqual([`${S}_DATABASE_URL`]);
      passwords.add(e.NATS_PASSWORD);
      passwords.add(new URL(e[`${S}_DATABASE_URL`]).password);
    }
    expect(passwords.size).toBe(SERVICES.length * 2);
    expect(Object.keys(nats).sort()).toEqual(SERVICES.map((s) => `NATS_PASSWORD_${s.toUpperCase()}`).sort());
  });

  it('ADMIN_TOKEN only in the gateway, the Stripe keys only in payments', () => {
    for (const s of SERVICES) {
      const keys = Object.keys(env(s));
      expect({ s, admin: keys.includes('ADMIN_TOKEN') }).toEqual({ s, admin: s === 'gateway' });
      expect({ s, stripe: keys.filter((k) => k.startsWith('STRIPE_')) }).toEqual({ s, stripe: s === 'payments' ? ['STRIPE_SECRET_KEY', 'STRIPE_WEBHOOK_SECRET'] : [] });
    }
    expect(env('gateway').ADMIN_TOKEN).toBe('adm_'.padEnd(40, 'x'));
    expect(env('payments')).toMatchObject({ STRIPE_SECRET_KEY: 'sk_test_standin', STRIPE_WEBHOOK_SECRET: 'whsec_standin' });
    for (const f of ['nats', 'db-admin', 'postgres']) expect(Object.keys(env(f)).filter((k) => /ADMIN_TOKEN|STRIPE/.test(k))).toEqual([]);
  });

  it("the role bootstrap gets the admin's URL and every role's URL (to create them), nothing else", () => {
    const e = env('db-admin');
    expect(Object.keys(e).sort()).toEqual(['DATABASE_ADMIN_URL', ...SERVICES.map((s) => `${s.toUpperCase()}_DATABASE_URL`)].sort());
    expect(new URL(e.DATABASE_ADMIN_URL).username).toBe('market');
    expect(new URL(e.DATABASE_ADMIN_URL).password).toBe(env('postgres').POSTGRES_PASSWORD);
    for (const s of SERVICES) expect(e[`${s.toUpperCase()}_DATABASE_URL`]).toBe(env(s)[`${s.toUpperCase()}_DATABASE_URL`]);
  });

  it('running it again keeps every password (a running database and bus keep working); DB_HOST etc. shape the URLs', () => {
    const before = Object.fromEntries(['ledger', 'nats', 'postgres', 'gateway'].map((f) => [f, env(f)]));
    generate();
    for (const f of Object.keys(before)) expect(env(f)).toEqual(before[f]);
    generate({ DB_HOST: 'db.internal', DB_PORT: '6432', DB_NAME: 'mkt', DB_PARAMS: 'sslmode=require' });
    expect(env('ledger').LEDGER_DATABASE_URL).toBe(
      `postgres://market_ledger:${new URL(before.ledger.LEDGER_DATABASE_URL).password}@db.internal:6432/mkt?sslmode=require`,
    );
  });
});

describe('docker-compose.yml hands each container only its own credentials', () => {
  const compose = parse(fs.readFileSync(path.join(REPO_ROOT, 'docker-compose.yml'), 'utf8'), { merge: true });
  const services = compose.services as Record<string, any>;
  const envFile = (name: string) => services[name].env_file;
  const file = (name: string) => [`\${MARKET_SECRETS_DIR:-./deploy/compose/secrets}/${name}.env`];

  it.each(SERVICES)('%s: its own env file, no secret in its environment, started after the role bootstrap', (s) => {
    expect(envFile(s)).toEqual(file(s));
    expect(services[s].environment.SERVICES).toBe(s);
    for (const key of Object.keys(services[s].environment)) expect(key).not.toMatch(/PASSWORD|TOKEN|SECRET|DATABASE_URL|STRIPE/);
    expect(services[s].depends_on['db-roles']).toEqual({ condition: 'service_completed_successfully' });
    expect(services[s].environment.TRANSPORTER).toBe('nats://nats:4222');
  });

  it('NATS runs the shared config (authentication, JetStream) with the passwords of nats.env', () => {
    expect(services.nats.command).toEqual(['-c', '/etc/nats/nats-server.conf', '-sd', '/data']);
    expect(services.nats.volumes).toEqual(expect.arrayContaining(['./deploy/nats:/etc/nats:ro']));
    expect(envFile('nats')).toEqual(file('nats'));
    expect(services['db-roles'].env_file).toEqual(file('db-admin'));
    expect(services.postgres.env_file).toEqual(file('postgres'));
    expect(services.postgres.environment).toBeUndefined();
  });

  it("the gateway trusts exactly its own nginx, which replaces X-Forwarded-For with the client's address", () => {
    expect(services.gateway.environment.TRUST_PROXY).toBe('1');
    expect(services.gateway.ports).toBeUndefined();
    const nginx = fs.readFileSync(path.join(REPO_ROOT, 'deploy/compose/nginx.conf'), 'utf8');
    expect(nginx).toMatch(/proxy_set_header X-Forwarded-For \$remote_addr;/);
    for (const s of SERVICES.filter((x) => x !== 'gateway')) expect(services[s].environment.TRUST_PROXY).toBeUndefined();
  });
});

/** The Compose CLI (v2 plugin or docker-compose v1); `config` needs no engine. */
function composeCli(): string[] | null {
  for (const cmd of [['docker', 'compose'], ['docker-compose']]) {
    if (spawnSync(cmd[0], [...cmd.slice(1), 'version'], { stdio: 'ignore', timeout: 10_000 }).status === 0) return cmd;
  }
  return null;
}

const cli = composeCli();
(cli ? describe : describe.skip)(`\`compose config\` resolves each container's environment${cli ? '' : ' [skipped: no Compose CLI]'}`, () => {
  it('is valid, and each container ends up with only its own credentials', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'market-secrets-config-'));
    try {
      execFileSync(SCRIPT, [dir], { env: { PATH: process.env.PATH }, stdio: 'ignore' });
      const out = execFileSync(cli![0], [...cli!.slice(1), '-f', path.join(REPO_ROOT, 'docker-compose.yml'), 'config'], {
        cwd: REPO_ROOT,
        env: { ...process.env, MARKET_SECRETS_DIR: dir },
        encoding: 'utf8',
      });
      const services = parse(out).services as Record<string, { environment?: Record<string, string> }>;
      const secretKeys = (name: string) =>
        Object.keys(services[name].environment ?? {})
          .filter((k) => /PASSWORD|TOKEN|SECRET|DATABASE_URL/.test(k))
          .sort();
      for (const s of SERVICES) {
        const S = s.toUpperCase();
        const own = ['NATS_PASSWORD', `${S}_DATABASE_URL`, ...(s === 'gateway' ? ['ADMIN_TOKEN'] : []), ...(s === 'payments' ? ['STRIPE_SECRET_KEY', 'STRIPE_WEBHOOK_SECRET'] : [])];
        expect({ s, keys: secretKeys(s) }).toEqual({ s, keys: own.sort() });
        expect(services[s].environment!.NATS_USER).toBe(s);
      }
      expect(secretKeys('nats')).toEqual(SERVICES.map((s) => `NATS_PASSWORD_${s.toUpperCase()}`).sort());
      expect(secretKeys('edge')).toEqual([]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
