/**
 * Issue 37: the deployment serves its own stdio MCP package (/downloads/<file>.tgz, its .sha256, the
 * deployment's /server.json), and every config it shows runs that package from this server.
 */
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startTestApp, type TestApp } from '../../../test/kit';
import { stdioInstall, TARBALL, TARBALL_PATH } from '@agent-market/mcp/lib/install.js';
import { sourceHash, stdioPackageDir } from '../stdio-tarball';

const run = promisify(execFile);
const pkg = JSON.parse(fs.readFileSync(path.join(stdioPackageDir(), 'package.json'), 'utf8'));

describe('GET /downloads: the stdio MCP package served by the deployment', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app?.stop();
  });

  test('the tarball: npm pack of packages/mcp-stdio, gzip, ETag and Cache-Control, 304 on If-None-Match, sha256 beside it', async () => {
    expect(TARBALL).toBe(`agent-market-mcp-${pkg.version}.tgz`);
    const r = await fetch(`${app.baseUrl}${TARBALL_PATH}`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/gzip');
    expect(r.headers.get('cache-control')).toBe('public, max-age=3600');
    const bytes = Buffer.from(await r.arrayBuffer());
    const sha256 = crypto.createHash('sha256').update(bytes).digest('hex');
    expect(r.headers.get('etag')).toBe(`"sha256-${sha256}"`);
    expect(r.headers.get('repr-digest')).toBe(`sha-256=:${crypto.createHash('sha256').update(bytes).digest('base64')}:`);

    // (fetch adds Cache-Control: no-cache to a conditional request unless told otherwise; npm does not.)
    const again = await fetch(`${app.baseUrl}${TARBALL_PATH}`, { headers: { 'if-none-match': r.headers.get('etag')!, 'cache-control': 'max-age=0' } });
    expect(again.status).toBe(304);
    const head = await fetch(`${app.baseUrl}${TARBALL_PATH}`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(bytes.length));

    const sum = await fetch(`${app.baseUrl}${TARBALL_PATH}.sha256`);
    expect(sum.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await sum.text()).toBe(`${sha256}  ${TARBALL}\n`);

    // What npm would publish: the package's files under package/, nothing else of the repo.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-market-download-'));
    try {
      fs.writeFileSync(path.join(dir, TARBALL), bytes);
      const { stdout } = await run('tar', ['-tzf', path.join(dir, TARBALL)]);
      const files = stdout.trim().split('\n').sort();
      expect(files).toEqual(expect.arrayContaining(['package/package.json', 'package/bin/agent-market-mcp.js', 'package/lib/proxy.js', 'package/lib/install.js', 'package/server.json']));
      expect(files.every((f) => f.startsWith('package/') && !f.includes('/test/'))).toBe(true);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }

    // Cached by the package's content: a restart with the same files does not pack again.
    expect(fs.existsSync(path.join(os.tmpdir(), 'agent-market-downloads', sourceHash(stdioPackageDir()).slice(0, 16), TARBALL))).toBe(true);

    const other = await app.api.get('/downloads/agent-market-mcp-0.0.1.tgz');
    expect(other.status).toBe(404);
    expect(other.body.error.hint).toContain(TARBALL);
  });

  test('every config the service shows runs the package from this server; the registry form is "once published"', async () => {
    const base = app.config.publicBaseUrl;
    const install = stdioInstall(base);
    expect(install.commandLine).toBe(`npx -y --package=${base}/downloads/${TARBALL} agent-market-mcp`);
    const sha256 = (await (await fetch(`${app.baseUrl}${TARBALL_PATH}.sha256`)).text()).split(' ')[0];

    const info = (await app.api.get('/api/public/info')).body;
    expect(info.mcp.stdio).toMatchObject({
      package: '@agent-market/mcp',
      version: pkg.version,
      bin: 'agent-market-mcp',
      command: install.commandLine,
      config: { command: 'npx', args: ['-y', `--package=${base}/downloads/${TARBALL}`, 'agent-market-mcp'], env: { MARKET_BASE_URL: base } },
      tarball: `${base}/downloads/${TARBALL}`,
      sha256,
      sha256Url: `${base}/downloads/${TARBALL}.sha256`,
      registry: { command: 'npx -y @agent-market/mcp', status: expect.stringMatching(/once .* published/) },
    });
    expect(info.mcp.stdio.integrity).toMatch(/^sha512-/);

    for (const doc of ['/llms.txt', '/llms-full.txt']) {
      const text = (await app.api.get(doc)).text;
      expect(text).toContain(install.commandLine);
      expect(text).not.toMatch(/npx -y @agent-market\/mcp(?! once)(?!.*published)/);
    }

    const serverJson = (await app.api.get('/server.json')).body;
    expect(serverJson.packages[0]).toMatchObject({ registryType: 'npm', identifier: pkg.name, version: pkg.version });
    const fromDeployment = serverJson._meta['io.modelcontextprotocol.registry/publisher-provided'].fromDeployment;
    expect(fromDeployment).toMatchObject({ command: 'npx', args: install.args, sha256Url: install.sha256Url });
    expect(serverJson.remotes).toEqual([expect.objectContaining({ type: 'streamable-http', url: `${base}/mcp` })]);
  });
});
