/**
 * Third-party checkers against the real /mcp: the official conformance suite and the MCP Inspector
 * CLI. Each suite skips itself when its binary is not installed, and every run is time-bounded.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT, startTestApp, type TestApp } from '../../../test/kit';

const BIN = path.join(REPO_ROOT, 'node_modules/.bin');
const CONFORMANCE = path.join(BIN, 'conformance');
const INSPECTOR = path.join(BIN, 'mcp-inspector-cli');
const BASELINE = path.join(__dirname, 'conformance-baseline.yml');

function run(cmd: string, args: string[], opts: { cwd?: string; timeoutMs: number }): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    execFile(
      cmd,
      args,
      { cwd: opts.cwd, timeout: opts.timeoutMs, killSignal: 'SIGKILL', maxBuffer: 16 * 1024 * 1024, env: { ...process.env, NODE_OPTIONS: '' } },
      (err: any, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : null) : 0, out: `${stdout}\n${stderr}` }),
    );
  });
}

const describeIf = (bin: string) => (fs.existsSync(bin) ? describe : describe.skip);

describe('third-party MCP checkers', () => {
  let app: TestApp;
  let apiKey: string;
  beforeAll(async () => {
    app = await startTestApp();
    apiKey = (await app.api.register('Checker')).apiKey;
  });
  afterAll(async () => {
    await app?.stop();
  });

  describeIf(CONFORMANCE)('@modelcontextprotocol/conformance server', () => {
    test('passes every scenario that applies to a marketplace; the baseline lists only fixture scenarios and the stateless-session one', async () => {
      const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-conformance-'));
      const url = `${app.baseUrl}/mcp?api_key=${apiKey}`;
      const { code, out } = await run(CONFORMANCE, ['server', '--url', url, '--expected-failures', BASELINE], { cwd: outDir, timeoutMs: 120_000 });
      for (const scenario of ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection', 'resources-list', 'prompts-list', 'logging-set-level', 'completion-complete']) {
        expect(out).toMatch(new RegExp(`✓ ${scenario}: [1-9]\\d* passed, 0 failed`));
      }
      const listed = fs.readFileSync(BASELINE, 'utf8').split('\n').filter((l) => /^\s+- /.test(l)).map((l) => l.trim().slice(2));
      expect(listed.filter((s) => !/^(tools-call-|elicitation-|resources-(read|templates-read|subscribe|unsubscribe)|prompts-get-)/.test(s))).toEqual(['server-sse-multiple-streams']);
      // Exit 0: no unexpected failure and no stale baseline entry.
      expect({ code, tail: code === 0 ? '' : out.slice(-3000) }).toEqual({ code: 0, tail: '' });
      fs.rmSync(outDir, { recursive: true, force: true });
    });
  });

  describeIf(INSPECTOR)('@modelcontextprotocol/inspector-cli', () => {
    // inspector-cli 1.0.3 resolves its own package.json relative to the working directory; its build dir works.
    const cwd = path.join(REPO_ROOT, 'node_modules/@modelcontextprotocol/inspector-cli/build');
    const json = (out: string) => JSON.parse(out.slice(out.indexOf('{'), out.lastIndexOf('}') + 1));

    test('lists the tools and calls search_services with a bearer header', async () => {
      const base = ['--cli', `${app.baseUrl}/mcp`, '--transport', 'http', '--header', `Authorization: Bearer ${apiKey}`];
      const list = await run(INSPECTOR, [...base, '--method', 'tools/list'], { cwd, timeoutMs: 60_000 });
      expect({ code: list.code, out: list.code ? list.out : '' }).toEqual({ code: 0, out: '' });
      const names = json(list.out).tools.map((t: any) => t.name);
      expect(names).toEqual(expect.arrayContaining(['register', 'search_services', 'purchase_service', 'whoami']));

      const call = await run(INSPECTOR, [...base, '--method', 'tools/call', '--tool-name', 'search_services', '--tool-arg', 'q=tests'], { cwd, timeoutMs: 60_000 });
      expect({ code: call.code, out: call.code ? call.out : '' }).toEqual({ code: 0, out: '' });
      const result = json(call.out);
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toHaveProperty('listings');
    });
  });
});
