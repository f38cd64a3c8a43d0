/** What a person sees at a terminal: readable log lines, and the startup banner before them. */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { formatLogLine, releaseStartupLines, terminalLogDestination, terminalLogLevels } from '../terminal-log';
import { loadConfig } from '../../config';

const ROOT = path.resolve(__dirname, '../../..');
const line = (o: Record<string, unknown>) => `${JSON.stringify({ pid: 1, hostname: 'h', nodeID: 'n', ns: 'agent-market', time: Date.UTC(2026, 0, 2, 3, 4, 5), ...o })}\n`;

describe('terminal log format', () => {
  it('LOG_FORMAT picks pretty or json; anything else is a configuration error', () => {
    expect(loadConfig({ LOG_FORMAT: 'json' }).logFormat).toBe('json');
    expect(loadConfig({ LOG_FORMAT: 'pretty' }).logFormat).toBe('pretty');
    expect(loadConfig({}).logFormat).toBe(process.stdout.isTTY ? 'pretty' : 'json');
    expect(() => loadConfig({ LOG_FORMAT: 'yaml' })).toThrow(/LOG_FORMAT must be pretty or json/);
  });

  it('one line per entry: time, level, module, message, then the fields that matter', () => {
    const text = formatLogLine(JSON.parse(line({ level: 40, mod: 'payments', svc: 'payments', msg: 'stripe: slow answer', requestId: 'req_1', ms: 812 })));
    expect(text).toMatch(/^\d\d:\d\d:\d\d WARN {2}payments +stripe: slow answer {2}requestId=req_1 ms=812\n$/);
    expect(text).not.toMatch(/hostname|nodeID|"level"/);
    const err = formatLogLine({ level: 50, mod: 'ledger', msg: 'failed', err: { message: 'boom', stack: 'Error: boom\n    at x' } });
    expect(err).toMatch(/ERROR ledger +failed\n {4}Error: boom\n {8}at x\n$/);
  });

  it("quiets Moleculer's start-up chatter unless LOG_LEVEL asks for it", () => {
    expect(terminalLogLevels('info')).toMatchObject({ BROKER: 'warn', REGISTRY: 'warn', $NODE: 'warn', '**': 'info' });
    expect(terminalLogLevels('debug')).toEqual({ '**': 'debug' });
  });

  it('holds the info lines written while starting until the banner is out; warnings never wait; lifecycle lines are dropped', () => {
    const written: string[] = [];
    const dest = terminalLogDestination('info', { write: (t: string) => written.push(t) });
    dest.write(line({ level: 30, mod: 'listings', msg: "Service 'listings' started." }));
    dest.write(line({ level: 30, mod: 'listings', msg: "Waiting for service(s) 'agents'..." }));
    dest.write(line({ level: 30, mod: 'listings', msg: 'seeded an empty marketplace: 3 seed sellers, 6 listings' }));
    dest.write(line({ level: 40, mod: 'payments', msg: 'no Stripe key: sandbox checkout' }));
    expect(written.join('')).toMatch(/^\d\d:\d\d:\d\d WARN {2}payments +no Stripe key/);
    written.push('BANNER\n');
    releaseStartupLines();
    dest.write(line({ level: 30, mod: 'gateway', msg: 'later' }));
    expect(written.join('').split('\n').map((l) => l.replace(/^\d\d:\d\d:\d\d /, ''))).toEqual([
      'WARN  payments      no Stripe key: sandbox checkout',
      'BANNER',
      'INFO  listings      seeded an empty marketplace: 3 seed sellers, 6 listings',
      'INFO  gateway       later',
      '',
    ]);
    const verbose: string[] = [];
    terminalLogDestination('debug', { write: (t: string) => verbose.push(t) }).write(line({ level: 30, mod: 'agents', msg: "Service 'agents' started." }));
    expect(verbose.join('')).toContain("Service 'agents' started.");
  });

  it('npm start in the terminal format: the banner is the first thing printed, then readable lines, no JSON', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'terminal-log-'));
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src/main.ts')], {
      cwd: ROOT,
      env: { ...process.env, NODE_OPTIONS: '', LOG_FORMAT: 'pretty', LOG_LEVEL: 'info', DATA_DIR: dataDir, PORT: String(port), SWEEP_INTERVAL_MS: '0', TRANSPORTER: '', DATABASE_URL: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no seeded line in time:\n${out}`)), 110_000);
        child.stdout.on('data', () => {
          if (/seeded an empty marketplace/.test(out)) {
            clearTimeout(timer);
            resolve();
          }
        });
        child.on('exit', (code) => reject(new Error(`exited ${code}:\n${out}`)));
      });
      const lines = out.split('\n').filter((l) => l.trim() !== '');
      expect(lines[0]).toBe(`agent-market is listening on http://localhost:${port}  (public URL http://localhost:${port})`);
      expect(lines[1]).toMatch(/^ {2}start here +http:\/\/localhost:\d+\/ /);
      expect(out).not.toMatch(/^\{/m);
      expect(out).not.toMatch(/Moleculer v|Service '\w+' started/);
      expect(lines.find((l) => l.includes('seeded'))).toMatch(/^\d\d:\d\d:\d\d INFO {2}listings +seeded an empty marketplace: 3 seed sellers, 6 listings$/);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)));
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 140_000);
});
