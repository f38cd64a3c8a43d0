/** Public discovery documents: info, llms.txt (+ CORS copy), llms-full.txt, openapi.json (+ redocly lint), /docs. */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Ajv from 'ajv';
import { REPO_ROOT, startTestApp, type TestApp } from '../../../test/kit';
import { TOOLS, toolInputSchema } from '../../../packages/tool-catalogue';
import { renderLlmsFull, renderLlmsTxt } from '../../../packages/knowledge';

const REDOCLY = path.join(REPO_ROOT, 'node_modules/.bin/redocly');
const pascal = (name: string) => name.split('_').map((p) => p[0].toUpperCase() + p.slice(1)).join('');

describe('public discovery', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app?.stop();
  });

  test('GET /api/public/info: brief, every tool with module and auth, how to register, MCP, support', async () => {
    const r = await app.api.get('/api/public/info');
    expect(r.status).toBe(200);
    const info = r.body;
    expect(info).toMatchObject({ ok: true, name: 'Agent Market', version: '0.1.0' });
    expect(info.brief).toMatch(/gas/);
    expect(info.tools.map((t: any) => t.name)).toEqual(TOOLS.map((t) => t.name));
    expect(info.tools.find((t: any) => t.name === 'search_services')).toMatchObject({ module: 'buy', auth: false });
    expect(info.tools.find((t: any) => t.name === 'purchase_service')).toMatchObject({ module: 'buy', auth: true, movesMoney: true });
    expect(info.register.url).toMatch(/\/api\/agent\/register$/);
    expect(info.register.curl).toContain('displayName');
    expect(info.mcp.remote).toMatch(/\/mcp$/);
    expect(info.mcp.modules.sell).toContain('list_service');
    // Selections fit a role (issue 37): the buyer's has whoami and wallet, the seller's ack_purchase; the spec module stays.
    expect(info.mcp.modules.buy).toEqual(expect.arrayContaining(['whoami', 'wallet', 'ask_help', 'purchase_service']));
    expect(info.mcp.modules.sell).toEqual(expect.arrayContaining(['ack_purchase', 'ask_help']));
    expect(info.mcp.inEverySelection).toEqual(['whoami', 'wallet', 'ask_help']);
    expect(info.tools.find((t: any) => t.name === 'wallet')).toMatchObject({ module: 'sell', offeredIn: ['buy', 'sell', 'shared'] });
    expect(info.support.tools).toEqual(['ask_help', 'report_bug', 'report_experience']);
    // Counts only (or null when support is not deployed), never report contents.
    if (info.support.counts !== null) expect(JSON.stringify(info.support.counts)).not.toMatch(/description|whatFailed|question/);
  });

  test('/llms.txt and /api/public/llms serve the same brief (the latter with CORS *); /llms-full.txt the full one', async () => {
    const llms = await app.api.get('/llms.txt');
    const cors = await app.api.get('/api/public/llms');
    const full = await app.api.get('/llms-full.txt');
    expect(llms.status).toBe(200);
    expect(llms.headers.get('content-type')).toMatch(/text\/markdown/);
    expect(cors.text).toBe(llms.text);
    expect(cors.headers.get('access-control-allow-origin')).toBe('*');
    expect(llms.text).toBe(renderLlmsTxt(app.config.publicBaseUrl));
    expect(full.text).toBe(renderLlmsFull(app.config.publicBaseUrl));
    // Zero to a first purchase, in order, without other docs.
    expect(llms.text).toMatch(/register[\s\S]*buy_gas[\s\S]*checkoutUrl[\s\S]*search_services[\s\S]*purchase_service[\s\S]*confirm_delivery/);
    for (const t of TOOLS) expect(full.text).toContain(t.name);
  });

  test('/openapi.json is OpenAPI 3.1.0, version 0.1.0, generated from the catalogue', async () => {
    const r = await app.api.get('/openapi.json');
    expect(r.status).toBe(200);
    const doc = r.body;
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('0.1.0');
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    const call = doc.paths['/api/agent'].post;
    expect(call.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/ToolCall');
    const toolCall = doc.components.schemas.ToolCall;
    expect(toolCall.oneOf).toHaveLength(TOOLS.length);
    expect(Object.keys(toolCall.discriminator.mapping)).toEqual(TOOLS.map((t) => t.name));
    for (const t of TOOLS) {
      const args = doc.components.schemas[`${pascal(t.name)}Arguments`];
      const { description: _d, ...schema } = args;
      expect(schema).toEqual(toolInputSchema(t));
      expect(doc.components.schemas[`${pascal(t.name)}Call`].properties.tool.const).toBe(t.name);
    }
    expect(doc.components.schemas.ErrorEnvelope.required).toEqual(['ok', 'error', 'requestId']);
    for (const p of ['/api/agent/register', '/api/listings', '/api/public/stats', '/api/public/liquidity', '/api/public/info', '/api/public/llms', '/llms.txt', '/llms-full.txt']) {
      expect(doc.paths).toHaveProperty([p]);
    }
    expect(doc.paths['/api/agent']).toHaveProperty('get');
    expect(call.responses['402'].content['application/json'].schema.$ref).toBe('#/components/schemas/ErrorEnvelope');
  });

  test('public GETs answer {ok, …fields at the top level} and match their /openapi.json response schemas', async () => {
    const doc = (await app.api.get('/openapi.json')).body;
    const seller = await app.api.register('Public Shapes Seller');
    await app.api.ok(
      'list_service',
      {
        title: 'Write Jest unit tests for a TypeScript module',
        description: 'Send me the path of a TypeScript module and a short note on its public functions. I deliver a Jest test file with ten or more unit tests covering edge cases, plus a short Markdown coverage summary.',
        priceGas: 250,
        category: 'codegen',
      },
      seller.apiKey,
    );
    const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
    const checks: Array<[string, string[]]> = [
      [`/api/listings?sellerId=${seller.agent.id}&minPriceGas=100&maxPriceGas=300&sort=price_asc&limit=5`, ['listings', 'nextCursor']],
      ['/api/public/stats', ['total', 'byCategory']],
      ['/api/public/liquidity', ['purchases7d', 'registrations', 'density', 'byCategory7d']],
      ['/api/public/info', ['name', 'tools', 'mcp']],
    ];
    for (const [url, fields] of checks) {
      const r = await app.api.get(url);
      expect(r.status).toBe(200);
      expect(r.body.ok).toBe(true);
      for (const f of fields) expect(r.body).toHaveProperty([f]);
      const schema = doc.paths[url.split('?')[0]].get.responses['200'].content['application/json'].schema;
      const validate = ajv.compile({ ...schema, components: doc.components });
      if (!validate(r.body)) throw new Error(`${url}: ${JSON.stringify(validate.errors)}`);
    }
    const listings = (await app.api.get(`/api/listings?sellerId=${seller.agent.id}`)).body;
    expect(listings.listings).toHaveLength(1);
    expect(listings.listings[0].seller.id).toBe(seller.agent.id);
    // every query parameter /api/listings accepts is documented, from search_services' own arguments
    const params = doc.paths['/api/listings'].get.parameters.map((p: any) => p.name);
    expect(params).toEqual(Object.keys(toolInputSchema(TOOLS.find((t) => t.name === 'search_services')!).properties));
    expect(params).toEqual(expect.arrayContaining(['q', 'category', 'minPriceGas', 'maxPriceGas', 'sellerId', 'sort', 'limit', 'cursor']));
    for (const p of doc.paths['/api/listings'].get.parameters) expect(p.description).not.toBe(p.name);
  });

  test('/docs is a self-contained HTML reference rendered from the OpenAPI document', async () => {
    for (const p of ['/docs', '/api/docs']) {
      const r = await app.api.get(p);
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toMatch(/text\/html/);
      for (const t of TOOLS) expect(r.text).toContain(`id="tool-${t.name}"`);
      expect(r.text).toContain('POST /api/agent/register');
      expect(r.text).not.toMatch(/<script|<link[^>]+href="https?:/i);
    }
  });

  test('/docs can be navigated: the site links (home first), a contents list naming every tool, links to the other forms of the reference', async () => {
    const r = await app.api.get('/docs');
    const nav = r.text.match(/<nav class="site" aria-label="Main">(.*?)<\/nav>/)![1];
    expect([...nav.matchAll(/href="([^"]+)"/g)].map((m) => m[1])).toEqual(['/', '/listings', '/docs', '/llms.txt']);
    expect(nav).toContain('href="/docs" aria-current="page"');
    const contents = r.text.slice(r.text.indexOf('<h2 id="contents">'), r.text.indexOf('<h2 id="errors">'));
    for (const t of TOOLS) expect(contents).toContain(`href="#tool-${t.name}"`);
    for (const href of ['/llms.txt', '/llms-full.txt', '/openapi.json', '/terms', '#errors']) expect(contents).toContain(`href="${href}"`);
    expect(r.text).toContain('<a href="#contents">↑ Contents</a>');
    expect(r.text).toContain('<link rel="icon" href="/favicon.svg"');
    expect(r.headers.get('content-security-policy')).toContain("img-src 'self'");
  });

  (fs.existsSync(REDOCLY) ? test : test.skip)('/openapi.json passes redocly lint (recommended rules) with no errors', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'openapi-'));
    const file = path.join(dir, 'openapi.json');
    fs.writeFileSync(file, (await app.api.get('/openapi.json')).text);
    const { code, out } = await new Promise<{ code: number | null; out: string }>((resolve) =>
      execFile(
        REDOCLY,
        ['lint', file, '--format', 'stylish'],
        { timeout: 90_000, killSignal: 'SIGKILL', env: { ...process.env, REDOCLY_TELEMETRY: 'off', NODE_OPTIONS: '' } },
        (err: any, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : null) : 0, out: `${stdout}\n${stderr}` }),
      ),
    );
    fs.rmSync(dir, { recursive: true, force: true });
    expect({ code, errors: out.split('\n').filter((l) => /\berror\b/i.test(l) && !/0 errors?/i.test(l)) }).toEqual({ code: 0, errors: [] });
  });
});
