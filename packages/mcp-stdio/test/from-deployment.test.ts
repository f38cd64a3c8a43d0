/**
 * Issue 37: the config every page shows works as shown. A user with nothing installed runs
 * `npx -y --package=<the running server>/downloads/<file>.tgz agent-market-mcp`: npx fetches this package
 * from the server itself and its dependencies from the npm registry (a fresh npm cache in a temp folder,
 * so nothing already installed helps), and an MCP client drives it over stdio, as an IDE does.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { stdioInstall } from '@agent-market/mcp/lib/install.js';
import { startTestApp, type TestApp } from '../../../test/kit';
import { toolsOfModules } from '../../tool-catalogue';
import { callOk, connect } from '../../../services/gateway/test/mcp-helpers';

const run = promisify(execFile);
const NETWORK_ERROR = /ENOTFOUND|EAI_AGAIN|ETIMEDOUT|ECONNREFUSED|ECONNRESET|ENETUNREACH|network/i;

/** The environment of a user's shell: nothing of this repository's npm run (npm_* variables) leaks in. */
function userEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !/^npm_/i.test(k) && k !== 'NODE_OPTIONS') env[k] = v;
  return { ...env, ...extra };
}

describe('npx runs the stdio package from the deployment that serves it', () => {
  let app: TestApp;
  let work: string;
  let project: string;
  let cache: string;
  let skipReason = '';

  beforeAll(async () => {
    app = await startTestApp();
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-market-npx-'));
    project = path.join(work, 'empty-project');
    cache = path.join(work, 'npm-cache');
    fs.mkdirSync(project);
    // First run installs (tarball from the app, dependencies from the registry); the MCP run below reuses it.
    const install = stdioInstall(app.baseUrl);
    try {
      const { stdout } = await run('npx', ['--cache', cache, ...install.args, '--version'], { cwd: project, env: userEnv(), timeout: 300_000 });
      expect(stdout.trim()).toBe(install.version);
    } catch (err: any) {
      const why = `${err.stderr ?? err.message}`;
      if (!NETWORK_ERROR.test(why)) throw err;
      skipReason = `npm registry not reachable: ${why.split('\n')[0]}`;
      console.warn(`skipping the npx run (${skipReason})`);
    }
  }, 360_000);
  afterAll(async () => {
    await app?.stop();
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  test('the MCP SDK stdio client lists the tools, calls whoami and a search through npx', async () => {
    if (skipReason) {
      console.warn(`skipped: ${skipReason}`);
      return;
    }
    const install = stdioInstall(app.baseUrl);
    const { apiKey } = await app.api.register('Agent via npx from the deployment');
    const transport = new StdioClientTransport({
      command: install.command,
      args: ['--cache', cache, '--prefer-offline', ...install.args, '--modules', 'buy,shared'],
      cwd: project,
      env: userEnv({ MARKET_BASE_URL: app.baseUrl, MARKET_API_KEY: apiKey }),
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (d) => (stderr += d.toString()));
    const client = await connect(transport);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names.sort()).toEqual(toolsOfModules(['buy', 'shared']).map((t) => t.name).sort());
      expect((await callOk(client, 'whoami')).agent.displayName).toBe('Agent via npx from the deployment');
      const found = await callOk(client, 'search_services', { q: 'tests' });
      expect(Array.isArray(found.listings)).toBe(true);
    } finally {
      await client.close();
    }
    expect(stderr).toMatch(/authenticated as Agent via npx from the deployment/);
  }, 120_000);
});
