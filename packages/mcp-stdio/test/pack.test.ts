/**
 * The published package as a user gets it: `npm pack` this folder, install the tarball into an empty
 * folder (its one dependency comes from the npm registry), then run the installed bin with the MCP
 * SDK client against the real app: the same tools, prompts and resources as /mcp, and a buyer (and
 * seller) journey through two installed processes, ending with the ledger audit.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestApp, type TestApp } from '../../../test/kit';
import { connect, runJourneys } from '../../../services/gateway/test/mcp-helpers';

const run = promisify(execFile);
const PACKAGE_DIR = path.resolve(__dirname, '..');
const pkg = JSON.parse(fs.readFileSync(path.join(PACKAGE_DIR, 'package.json'), 'utf8'));

describe(`${pkg.name} packed and installed into an empty folder`, () => {
  let app: TestApp;
  let work: string;
  let bin: string | null = null;
  let skipReason = '';
  let packed: string[] = [];

  beforeAll(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-market-pack-'));
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', work], { cwd: PACKAGE_DIR, maxBuffer: 10_000_000 });
    const [info] = JSON.parse(stdout);
    packed = info.files.map((f: { path: string }) => f.path);
    const project = path.join(work, 'user-project');
    fs.mkdirSync(project);
    fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'user-project', private: true }));
    try {
      await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', path.join(work, info.filename)], { cwd: project, timeout: 300_000, maxBuffer: 10_000_000 });
      bin = path.join(project, 'node_modules', '.bin', 'agent-market-mcp');
    } catch (err: any) {
      const why = `${err.stderr ?? err.message}`;
      if (!/ENOTFOUND|EAI_AGAIN|ETIMEDOUT|ECONNREFUSED|ENETUNREACH|network/i.test(why)) throw err;
      skipReason = `npm registry not reachable: ${why.split('\n')[0]}`;
      console.warn(`skipping the installed-package journey (${skipReason})`);
    }
    app = await startTestApp();
  }, 360_000);
  afterAll(async () => {
    await app?.stop();
    fs.rmSync(work, { recursive: true, force: true });
  });

  test('the tarball holds the bin, the library, README, LICENSE and server.json, and nothing of the repo', () => {
    expect(pkg.name).toBe('@agent-market/mcp');
    expect(pkg.bin).toEqual({ 'agent-market-mcp': 'bin/agent-market-mcp.js' });
    expect(pkg.repository?.url).toMatch(/^git\+https:/);
    expect(pkg.homepage).toMatch(/^https:/);
    expect(packed.sort()).toEqual(
      ['LICENSE', 'README.md', 'bin/agent-market-mcp.js', 'lib/install.d.ts', 'lib/install.js', 'lib/proxy.js', 'lib/market-server.d.ts', 'lib/market-server.js', 'lib/tasks.d.ts', 'lib/tasks.js', 'package.json', 'server.json'].sort(),
    );
    const readme = fs.readFileSync(path.join(PACKAGE_DIR, 'README.md'), 'utf8');
    expect(readme).not.toMatch(/\]\(\.\.\//); // standalone: no link out of the package
    for (const client of ['Claude Code', 'Cursor', 'VS Code']) expect(readme).toContain(client);
    // Issue 37: the configs run the tarball a deployment serves (this version); the registry form is "once published".
    const tarball = `https://market.example/downloads/agent-market-mcp-${pkg.version}.tgz`;
    expect(readme).toContain(`"args": ["-y", "--package=${tarball}", "agent-market-mcp"]`);
    expect(readme).not.toContain('"args": ["-y", "@agent-market/mcp"]');
    expect(readme).toMatch(/once `@agent-market\/mcp` is published/);
    const server = JSON.parse(fs.readFileSync(path.join(PACKAGE_DIR, 'server.json'), 'utf8'));
    expect(server.name).toBe(pkg.mcpName);
    expect(server.version).toBe(pkg.version);
    expect(server.packages[0]).toMatchObject({ registryType: 'npm', identifier: pkg.name, version: pkg.version, transport: { type: 'stdio' } });
    expect(server._meta['io.modelcontextprotocol.registry/publisher-provided'].fromDeployment.args).toEqual([
      '-y',
      `--package={MARKET_BASE_URL}/downloads/agent-market-mcp-${pkg.version}.tgz`,
      'agent-market-mcp',
    ]);
  });

  test('npm publish --dry-run passes: name, bin, files, engines, license and repository for provenance', async () => {
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
    const { stdout } = await run('npm', ['publish', '--dry-run', '--json'], { cwd: PACKAGE_DIR, env, maxBuffer: 10_000_000 });
    const parsed = JSON.parse(stdout.slice(stdout.indexOf('{')));
    const info = parsed[pkg.name] ?? parsed; // npm 11 keys the report by package name
    expect(info).toMatchObject({ name: pkg.name, version: pkg.version, filename: `agent-market-mcp-${pkg.version}.tgz` });
    expect(info.files.map((f: { path: string }) => f.path).sort()).toEqual(packed.sort());
    expect(pkg).toMatchObject({ license: 'MIT', engines: { node: '>=20' }, publishConfig: { access: 'public' } });
    expect(pkg.repository).toMatchObject({ type: 'git', directory: 'packages/mcp-stdio' });
  });

  test('the installed bin serves what /mcp serves and completes the buyer and seller journeys', async () => {
    if (!bin) {
      console.warn(`skipped: ${skipReason}`);
      return;
    }
    const installed = (apiKey?: string) =>
      new StdioClientTransport({
        command: process.execPath,
        args: [bin!],
        env: { PATH: process.env.PATH ?? '', MARKET_BASE_URL: app.baseUrl, ...(apiKey ? { MARKET_API_KEY: apiKey } : {}) },
        stderr: 'pipe',
      });
    const anon = await connect(installed());
    const remote = await connect(new StreamableHTTPClientTransport(new URL(`${app.baseUrl}/mcp`)));
    expect((await anon.listTools()).tools).toEqual((await remote.listTools()).tools);
    expect((await anon.listPrompts()).prompts).toEqual((await remote.listPrompts()).prompts);
    expect((await anon.listResources()).resources).toEqual((await remote.listResources()).resources);
    expect((await anon.listResourceTemplates()).resourceTemplates).toEqual((await remote.listResourceTemplates()).resourceTemplates);
    expect(anon.getInstructions()).toBe(remote.getInstructions());
    await remote.close();
    await anon.close();

    const s = await app.api.register('Seller via the installed package');
    const b = await app.api.register('Buyer via the installed package');
    const seller = await connect(installed(s.apiKey));
    const buyer = await connect(installed(b.apiKey));
    await runJourneys(app, seller, buyer, 'packed');
    await seller.close();
    await buyer.close();
  }, 120_000);
});
