/**
 * docker-compose.yml for real: PostgreSQL (a role per service, made by the one-shot db-roles service),
 * NATS (JetStream, authentication), every service from the built image with its own credentials
 * (scripts/market-secrets.sh writes them first, as a user does) and nginx in front, brought up with
 * the Compose CLI; a buyer/seller journey through the published port (register → buy gas in the
 * sandbox → purchase → deliver → confirm → ledger audit with the image's own `audit-ledger`); the bus
 * refusing a connection without credentials and the ledger's role refused another service's table;
 * then the gateway scaled to two behind the same port, then everything removed with its volumes. Runs when a Docker engine and a Compose CLI (v2 plugin or docker-compose v1) answer.
 * Images come from the environment like the compose file's (MARKET_IMAGE, POSTGRES_IMAGE, NATS_IMAGE,
 * NGINX_IMAGE); a missing MARKET_IMAGE is built first (BASE_IMAGE picks the Node base).
 */
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ApiClient, eventually, freePort, REPO_ROOT, waitForGateway } from '../kit';
import { base62 } from '../../packages/ids';
import { decideSandboxCheckout } from '../kit/checkout';

const run = promisify(execFile);
const MARKET_IMAGE = process.env.MARKET_IMAGE || 'agent-market:local';
const SERVICES = ['gateway', 'agents', 'listings', 'escrow', 'ledger', 'payments', 'support'];

function works(cmd: string, args: string[]): boolean {
  try {
    execFileSync(cmd, args, { stdio: 'ignore', timeout: 10_000 });
    return true;
  } catch {
    return false;
  }
}

/** The Compose CLI to use, or why there is none. */
function composeCli(): { cmd: string; pre: string[] } | { skip: string } {
  if (process.env.TEST_COMPOSE === 'off') return { skip: 'TEST_COMPOSE=off' };
  if (!works('docker', ['version'])) return { skip: `no Docker engine reachable at ${process.env.DOCKER_HOST || 'the default socket'}` };
  if (works('docker', ['compose', 'version'])) return { cmd: 'docker', pre: ['compose'] };
  if (works('docker-compose', ['version'])) return { cmd: 'docker-compose', pre: [] };
  return { skip: 'no Compose CLI (docker compose or docker-compose)' };
}

const cli = composeCli();
const describeCompose = 'skip' in cli ? (name: string, fn: () => void) => describe.skip(`${name} [skipped: ${cli.skip}]`, fn) : describe;

describeCompose('docker-compose.yml (built image, published gateway, journey, scale-out)', () => {
  const { cmd, pre } = cli as { cmd: string; pre: string[] };
  const project = `market${base62(6).toLowerCase()}`;
  const adminToken = `adm_${base62(24)}`;
  let env: NodeJS.ProcessEnv;
  let secretsDir: string | undefined;
  let api: ApiClient;
  let baseUrl: string;

  const compose = async (...args: string[]) => {
    const { stdout } = await run(cmd, [...pre, '-p', project, '-f', `${REPO_ROOT}/docker-compose.yml`, ...args], {
      cwd: REPO_ROOT,
      env,
      maxBuffer: 64 * 1024 * 1024,
      timeout: 600_000,
    });
    return stdout;
  };

  /** Health of every container of a service (docker inspect), e.g. ['healthy', 'starting']. */
  const health = async (service: string): Promise<string[]> => {
    const ids = (await compose('ps', '-q', service)).split('\n').filter(Boolean);
    return Promise.all(ids.map(async (id) => (await run('docker', ['inspect', '-f', '{{.State.Health.Status}}', id], { env })).stdout.trim()));
  };

  beforeAll(async () => {
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    secretsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'market-secrets-'));
    env = {
      ...process.env,
      GATEWAY_PORT: String(port),
      PUBLIC_BASE_URL: `http://localhost:${port}`,
      ADMIN_TOKEN: adminToken,
      LOG_LEVEL: 'warn',
      NODE_ENV: 'development',
      MARKET_SECRETS_DIR: secretsDir,
    };
    // As docs/operations.md says: the per-process env files first (the gateway's ADMIN_TOKEN from the environment).
    await run(`${REPO_ROOT}/scripts/market-secrets.sh`, [secretsDir], { env });
    if (!works('docker', ['image', 'inspect', MARKET_IMAGE])) {
      const base = process.env.BASE_IMAGE ? ['--build-arg', `BASE_IMAGE=${process.env.BASE_IMAGE}`] : [];
      await run('docker', ['build', '-q', ...base, '-t', MARKET_IMAGE, REPO_ROOT], { env, timeout: 900_000 });
    }
    await compose('up', '-d', '--no-build');
    api = new ApiClient(baseUrl);
    await eventually(async () => (await api.get('/readyz')).status === 200, 180_000, 500);
    await waitForGateway(api, SERVICES.filter((s) => s !== 'gateway'), 180_000);
  }, 1_000_000);

  afterAll(async () => {
    if (!env) return;
    if (process.env.TEST_COMPOSE_KEEP !== '1') {
      await compose('down', '-v', '--remove-orphans', '-t', '5');
      if (secretsDir) fs.rmSync(secretsDir, { recursive: true, force: true });
    }
  }, 180_000);

  it('runs every service from the image; every one serves /readyz on PORT and turns healthy', async () => {
    const ready = await api.get('/readyz');
    expect(ready.body.services).toMatchObject({ agents: true, listings: true, escrow: true, ledger: true, payments: true, support: true });
    for (const service of SERVICES) {
      await eventually(async () => (await health(service)).every((h) => h === 'healthy'), 120_000, 1_000);
    }
  }, 300_000);

  it('serves a buyer/seller journey through the published gateway and the ledger audits clean', async () => {
    const seller = await api.register('Compose Seller');
    const buyer = await api.register('Compose Buyer');
    const gas = async (agent: { apiKey: string }) => (await api.ok('wallet', {}, agent.apiKey)).gasBalance as number;
    const [sellerStart, buyerStart] = [await gas(seller), await gas(buyer)];

    // Buy gas as a person would: open the sandbox checkout page, press Approve.
    const buy = await api.ok('buy_gas', { packId: 'starter' }, buyer.apiKey);
    const checkout = new URL(buy.checkoutUrl);
    expect(checkout.origin).toBe(`http://localhost:${new URL(baseUrl).port}`);
    // As a browser does: open the page (CSRF cookie and token), then press Approve.
    const approved = await decideSandboxCheckout(`${baseUrl}${checkout.pathname}`, 'approve');
    expect(approved.status).toBe(200);
    await eventually(async () => (await gas(buyer)) === buyerStart + buy.gas, 30_000, 250);

    const { listing } = await api.ok(
      'list_service',
      {
        title: 'Write Jest unit tests for a TypeScript module',
        description:
          'Send me the path of a TypeScript module and a short note on its public functions. I deliver a Jest test file with ten or more unit tests covering edge cases, plus a short Markdown coverage summary.',
        priceGas: 100,
        category: 'codegen',
      },
      seller.apiKey,
    );
    const { purchase } = await api.ok('purchase_service', { listingId: listing.id }, buyer.apiKey, { 'idempotency-key': `compose-${base62(8)}` });
    await api.ok('deliver_work', { purchaseId: purchase.id, delivery: { summary: 'tests attached' } }, seller.apiKey);
    await api.ok('confirm_delivery', { purchaseId: purchase.id }, buyer.apiKey);

    // Settlement travels as a durable event (outbox → JetStream → ledger).
    const fee = listing.priceGas / 10; // PLATFORM_FEE_PERCENT default 10
    await eventually(async () => (await gas(seller)) === sellerStart + listing.priceGas - fee, 30_000, 250);
    expect(await api.ok('wallet', {}, buyer.apiKey)).toMatchObject({ gasBalance: buyerStart + buy.gas - listing.priceGas, heldGas: 0 });

    // The operator's audit, from inside the image (it asks the gateway with ADMIN_TOKEN).
    const audit = await compose('exec', '-T', 'gateway', 'audit-ledger');
    expect(audit).toContain('Clean: every invariant holds.');
    process.stdout.write(`\n[compose] ${audit.trim().split('\n').join('\n[compose] ')}\n`);
  }, 180_000);

  it('the image runs Node of .nvmrc; the bus refuses a connection without credentials; the ledger\'s database role cannot read escrow\'s tables', async () => {
    const anonymous =
      "require('nats').connect({servers:'nats://nats:4222',reconnect:false}).then(()=>{console.log('CONNECTED');process.exit(1)},e=>{console.log(String(e.code||e.message));process.exit(0)})";
    expect(await compose('exec', '-T', 'gateway', 'node', '-e', anonymous)).toMatch(/AUTHORIZATION_VIOLATION/i);
    // The image runs the project's Node (.nvmrc), whatever the host's own Node is.
    const nodeMajor = fs.readFileSync(path.join(REPO_ROOT, '.nvmrc'), 'utf8').trim();
    expect((await compose('exec', '-T', 'gateway', 'node', '--version')).trim()).toMatch(new RegExp(`^v${nodeMajor}\\.`));
    const ledgerReadsEscrow =
      "const {Client}=require('pg');const c=new Client({connectionString:process.env.LEDGER_DATABASE_URL});c.connect().then(()=>c.query('SELECT count(*) FROM escrow.purchases')).then(()=>{console.log('READ');process.exit(1)},e=>{console.log(e.message);process.exit(0)})";
    expect(await compose('exec', '-T', 'ledger', 'node', '-e', ledgerReadsEscrow)).toMatch(/permission denied/);
  }, 60_000);

  it('scales the gateway to two replicas behind the same published port', async () => {
    // Only the gateway: --no-deps leaves the rest (and the one-shot db-roles) as they are.
    await compose('up', '-d', '--no-build', '--no-recreate', '--no-deps', '--scale', 'gateway=2', 'gateway');
    await eventually(async () => {
      const h = await health('gateway');
      return h.length === 2 && h.every((s) => s === 'healthy');
    }, 120_000, 1_000);
    const { apiKey } = await api.register('Scaled');
    for (let i = 0; i < 6; i++) expect((await api.call('whoami', {}, apiKey)).status).toBe(200);

    // Stop the first replica: the published port keeps answering through the other one.
    const [first] = (await compose('ps', '-q', 'gateway')).split('\n').filter(Boolean);
    await run('docker', ['stop', '-t', '5', first], { env });
    await new Promise((r) => setTimeout(r, 3_000)); // nginx re-resolves `gateway` every 2 s
    await eventually(async () => (await api.call('whoami', {}, apiKey)).status === 200, 30_000, 250);
    for (let i = 0; i < 6; i++) expect((await api.call('whoami', {}, apiKey)).status).toBe(200);
  }, 300_000);
});
