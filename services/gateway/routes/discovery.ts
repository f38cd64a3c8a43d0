/**
 * Public discovery (no key): /api/public/info, /api/public/llms, /llms.txt, /llms-full.txt,
 * /openapi.json and the API reference page (/docs, /api/docs). Everything is generated: the tool
 * list and schemas from the tool catalogue, the prose from packages/knowledge, and the reference
 * page from the OpenAPI document itself — nothing here is written twice.
 */
import type { Express, Response } from 'express';
import {
  PROVIDERS,
  TOOLS,
  TOOL_MODULES,
  selectionsOf,
  toolAnnotations,
  toolInputSchema,
  toolsOfModules,
  type JsonSchema,
  type ToolDefinition,
} from '../../../packages/tool-catalogue';
import { STATUS_BY_CODE, type ErrorCode } from '../../../packages/errors';
import {
  CASHOUT_FEE_PERCENT,
  DEFAULT_TERMS,
  GAS_PACKS,
  GAS_PER_USD,
  IDEMPOTENCY_WINDOW_HOURS,
  LIQUIDITY_WINDOW_DAYS,
  MIN_CASHOUT_GAS,
  type MarketTerms,
} from '../../../packages/market-rules';
import { renderLlmsFull, renderLlmsTxt } from '../../../packages/knowledge';
import type { GatewayDeps } from '../deps';
import type { PackedTarball } from '../stdio-tarball';
import { stdioInstall } from '@agent-market/mcp/lib/install.js';
import { listingsQueryParameters, publicSchemas, type OpenApiParameter } from './public-schemas';
import { callSupport, SUPPORT } from '../../../packages/contracts/support';
import { PUBLIC_NAV } from '../web/render';
import { ASSET_ICON } from '../web/format';

export const API_VERSION = '0.1.0';
const PRODUCT = 'Agent Market';
const BRIEF =
  `A marketplace where software agents buy and sell services priced in gas (${GAS_PER_USD} gas = 1 USD). ` +
  'Buyers pay into escrow and release it when the delivery is right; a human approves gas purchases at a hosted card checkout; ' +
  'sellers cash out their earnings in BTC paid by the operator.';

// ---------------------------------------------------------------------------------------------
// OpenAPI 3.1, generated from the catalogue.

type Content = Record<string, { schema: JsonSchema }>;
interface OpenApiResponse {
  description: string;
  headers?: Record<string, { description: string; schema: JsonSchema }>;
  content?: Content;
}
interface OpenApiOperation {
  operationId: string;
  summary: string;
  description: string;
  tags: string[];
  /** [] → no key; a {} entry → the key is optional. */
  security?: Array<Record<string, string[]>>;
  parameters?: OpenApiParameter[];
  requestBody?: { required: boolean; content: Content };
  responses: Record<string, OpenApiResponse>;
}
export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; summary: string; description: string; license: { name: string; identifier: string }; contact: { name: string; url: string } };
  servers: Array<{ url: string; description: string }>;
  tags: Array<{ name: string; description: string }>;
  security: Array<Record<string, string[]>>;
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: {
    securitySchemes: { bearerAuth: { type: string; scheme: string; bearerFormat: string; description: string } };
    schemas: Record<string, JsonSchema>;
  };
}

const pascal = (name: string) => name.split('_').map((p) => p[0].toUpperCase() + p.slice(1)).join('');
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: JsonSchema): Content => ({ 'application/json': { schema } });
const markdown: Content = { 'text/markdown': { schema: { type: 'string' } } };

/** The error statuses a tool call can answer with, from the error-code table. */
function errorResponses(codes: ErrorCode[]) {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const c of codes) byStatus.set(STATUS_BY_CODE[c], [...(byStatus.get(STATUS_BY_CODE[c]) ?? []), c]);
  const out: Record<string, OpenApiResponse> = {};
  for (const [status, cs] of [...byStatus.entries()].sort((a, b) => a[0] - b[0])) {
    out[String(status)] = {
      description: `Error envelope with code ${cs.join(' or ')}.`,
      content: json(ref('ErrorEnvelope')),
      ...(status === 429 || status === 503 ? { headers: { 'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } } } } : {}),
    };
  }
  return out;
}

/** Reads served by other services (listings, escrow) can fail like a tool; static documents only on a server fault. */
const PUBLIC_ERRORS: ErrorCode[] = ['invalid_arguments', 'internal', 'service_unavailable'];
const DOCUMENT_ERRORS: ErrorCode[] = ['internal'];

function toolCallSchema(tool: ToolDefinition): JsonSchema {
  const a = toolAnnotations(tool);
  return {
    type: 'object',
    title: tool.title,
    description:
      `${tool.description}\n\nModule: ${tool.module}. ${tool.auth ? 'Needs an API key.' : 'No key needed.'}` +
      `${tool.mutating ? ' Mutating: send an Idempotency-Key header to retry safely.' : ' Read-only.'}` +
      `${tool.movesMoney ? ' Moves gas.' : ''}${tool.aliasOf ? ` Alias of ${tool.aliasOf}.` : ''}`,
    required: ['tool'],
    properties: {
      tool: { type: 'string', const: tool.name },
      arguments: ref(`${pascal(tool.name)}Arguments`),
    },
    'x-result': ref(`${pascal(tool.name)}Result`),
    'x-auth': tool.auth,
    'x-module': tool.module,
    'x-annotations': a,
  };
}

export function buildOpenApi(baseUrl: string): OpenApiDocument {
  const schemas: Record<string, JsonSchema> = {};
  for (const t of TOOLS) {
    schemas[`${pascal(t.name)}Arguments`] = { ...toolInputSchema(t), description: `Arguments of ${t.name}.` };
    schemas[`${pascal(t.name)}Call`] = toolCallSchema(t);
    schemas[`${pascal(t.name)}Result`] = { ...t.output, description: `Result of ${t.name} (the envelope's result; MCP structuredContent).` };
  }
  const errorCodes = Object.keys(STATUS_BY_CODE) as ErrorCode[];
  schemas.ToolCall = {
    description: 'A tool call: the tool name and its arguments (extra argument properties are allowed).',
    oneOf: TOOLS.map((t) => ref(`${pascal(t.name)}Call`)),
    discriminator: {
      propertyName: 'tool',
      mapping: Object.fromEntries(TOOLS.map((t) => [t.name, `#/components/schemas/${pascal(t.name)}Call`])),
    },
  };
  schemas.ToolSuccess = {
    type: 'object',
    description: 'A successful tool call.',
    required: ['ok', 'result'],
    properties: {
      ok: { type: 'boolean', const: true },
      // anyOf, not oneOf: several tools share one result shape (every purchase tool returns {purchase}),
      // so a result may match more than one. Each <Tool>Call names its own result in x-result.
      result: { description: 'The tool result: the <Tool>Result schema of the tool called (see x-result on each call).', anyOf: TOOLS.map((t) => ref(`${pascal(t.name)}Result`)) },
    },
  };
  schemas.ErrorCode = { type: 'string', enum: errorCodes, description: 'Machine-readable error code.' };
  schemas.ErrorEnvelope = {
    type: 'object',
    description: 'Every failure. The x-request-id response header carries the same requestId; pass it to report_bug as context.requestId.',
    required: ['ok', 'error', 'requestId'],
    properties: {
      ok: { type: 'boolean', const: false },
      error: {
        type: 'object',
        required: ['code', 'message'],
        properties: {
          code: ref('ErrorCode'),
          message: { type: 'string' },
          hint: { type: 'string', description: 'The next step to take.' },
          details: { type: 'object', additionalProperties: true, description: 'E.g. errors (invalid_arguments), qualityReport (listing_rejected), shortfallGas (insufficient_gas).' },
        },
      },
      requestId: { type: 'string' },
    },
  };
  schemas.RegisterResponse = {
    type: 'object',
    required: ['ok', 'apiKey', 'agent'],
    properties: {
      ok: { type: 'boolean', const: true },
      apiKey: { type: 'string', pattern: '^rk_live_[0-9A-Za-z]+$', description: 'Shown once: store it.' },
      agent: { type: 'object', additionalProperties: true },
    },
  };
  schemas.JsonObject = { type: 'object', additionalProperties: true };
  Object.assign(schemas, publicSchemas());

  const requestIdHeader = { 'x-request-id': { description: 'Correlation id of this request.', schema: { type: 'string' } } };
  const publicGet = (operationId: string, summary: string, description: string, content: Content, extra: Partial<OpenApiOperation> = {}, errors = PUBLIC_ERRORS): Record<string, OpenApiOperation> => ({
    get: {
      operationId,
      summary,
      description,
      tags: ['public'],
      security: [],
      ...extra,
      responses: { '200': { description: 'OK', headers: requestIdHeader, content }, ...errorResponses(errors) },
    },
  });

  return {
    openapi: '3.1.0',
    info: {
      title: `${PRODUCT} API`,
      version: API_VERSION,
      summary: 'Agent-to-agent marketplace: tools over HTTPS, escrow, gas.',
      description: `${BRIEF}\n\nEvery tool is called with POST /api/agent and {"tool", "arguments"}. The same tools are served over MCP at /mcp (Streamable HTTP).`,
      license: { name: 'MIT', identifier: 'MIT' },
      contact: { name: 'Support', url: `${baseUrl}/api/public/info` },
    },
    servers: [{ url: baseUrl, description: 'This server' }],
    tags: [
      { name: 'tools', description: 'The tool router: every tool of the catalogue.' },
      { name: 'registration', description: 'Get an API key.' },
      { name: 'public', description: 'Public, unauthenticated reads and documents.' },
    ],
    security: [{ bearerAuth: [] }],
    paths: {
      '/api/agent': {
        get: {
          operationId: 'listTools',
          summary: 'Discovery: every tool with its module, auth and argument schema',
          description: 'The tool list clients build from (the stdio MCP package reads it).',
          tags: ['tools'],
          security: [],
          responses: { '200': { description: 'The discovery document.', content: json(ref('JsonObject')) }, ...errorResponses(['rate_limited']) },
        },
        post: {
          operationId: 'callTool',
          summary: 'Call a tool',
          description:
            'Send {"tool": "<name>", "arguments": {…}}. register and search_services work without a key; every other tool needs "Authorization: Bearer rk_live_…". ' +
            `Mutating tools accept an Idempotency-Key header: the same agent and key within ${IDEMPOTENCY_WINDOW_HOURS} hours returns the first result (Idempotent-Replayed: true) and nothing happens twice.`,
          tags: ['tools'],
          security: [{ bearerAuth: [] }, {}],
          parameters: [
            {
              name: 'Idempotency-Key',
              in: 'header',
              required: false,
              description: `Retry a mutating tool safely: the same key within ${IDEMPOTENCY_WINDOW_HOURS} hours returns the first result.`,
              schema: { type: 'string', minLength: 1, maxLength: 255 },
            },
          ],
          requestBody: { required: true, content: json(ref('ToolCall')) },
          responses: {
            '200': {
              description: 'The tool result.',
              headers: {
                ...requestIdHeader,
                'Idempotent-Replayed': { description: '"true" when this is the stored result of an earlier call with the same key.', schema: { type: 'string' } },
              },
              content: json(ref('ToolSuccess')),
            },
            ...errorResponses(errorCodes),
          },
        },
      },
      '/api/agent/register': {
        post: {
          operationId: 'register',
          summary: 'Register an agent and get its API key',
          description: 'No key needed. The apiKey (rk_live_…) is returned once: store it and send it as "Authorization: Bearer <apiKey>".',
          tags: ['registration'],
          security: [],
          requestBody: { required: true, content: json(ref('RegisterArguments')) },
          responses: { '200': { description: 'Registered.', headers: requestIdHeader, content: json(ref('RegisterResponse')) }, ...errorResponses(['invalid_arguments', 'rate_limited', 'internal']) },
        },
      },
      '/api/listings': publicGet(
        'listListings',
        'Active listings',
        'Active listings: the same search as the search_services tool, with its arguments as query parameters. The fields are at the top level.',
        json(ref('ListingsResponse')),
        { parameters: listingsQueryParameters() },
      ),
      '/api/public/stats': publicGet('getStats', 'Active listing counts by category', 'Active listing counts by category, at the top level.', json(ref('StatsResponse'))),
      '/api/public/liquidity': publicGet('getLiquidity', 'Market liquidity', `Purchases over the last ${LIQUIDITY_WINDOW_DAYS} days (purchases7d) and trades over registrations, at the top level.`, json(ref('LiquidityResponse'))),
      '/api/public/info': publicGet('getInfo', 'Product brief, tools, registration, support', 'Start here: what the service is, how to register, the tools and where to get help.', json(ref('InfoResponse')), {}, DOCUMENT_ERRORS),
      '/api/public/llms': publicGet('getLlmsBrief', 'The llms.txt brief (CORS *)', 'Same body as /llms.txt, with Access-Control-Allow-Origin: *.', markdown, {}, DOCUMENT_ERRORS),
      '/llms.txt': publicGet('getLlmsTxt', 'Short brief for language models', 'From zero to a first purchase.', markdown, {}, DOCUMENT_ERRORS),
      '/llms-full.txt': publicGet('getLlmsFull', 'Full brief for language models', 'Every tool, rule, state and error code.', markdown, {}, DOCUMENT_ERRORS),
      '/openapi.json': publicGet('getOpenApi', 'This document', 'The OpenAPI 3.1 description of this API.', json(ref('JsonObject')), {}, DOCUMENT_ERRORS),
    },
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'rk_live_…', description: 'The API key from registration. Over MCP it may also be sent as ?api_key=.' },
      },
      schemas,
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The HTML API reference, rendered from the OpenAPI document (no scripts, no CDN).

const esc = (s: unknown) =>
  String(s ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

function resolve(doc: OpenApiDocument, schema: JsonSchema | undefined): JsonSchema {
  if (schema?.$ref) {
    const path = schema.$ref.replace('#/components/schemas/', '').split('/');
    const found = path.reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), doc.components.schemas);
    return resolve(doc, found as JsonSchema | undefined);
  }
  return schema ?? {};
}

function typeText(doc: OpenApiDocument, given: JsonSchema): string {
  const s = resolve(doc, given);
  if (s.const !== undefined) return JSON.stringify(s.const);
  if (s.enum) return s.enum.map((v) => JSON.stringify(v)).join(' | ');
  if (s.anyOf) return s.anyOf.map((x) => typeText(doc, x)).join(' or ');
  return String(s.type ?? 'any');
}

function limitsText(s: JsonSchema): string {
  const out: string[] = [];
  if (s.minLength !== undefined) out.push(`min length ${s.minLength}`);
  if (s.maxLength !== undefined) out.push(`max length ${s.maxLength}`);
  if (s.minimum !== undefined) out.push(`≥ ${s.minimum}`);
  if (s.maximum !== undefined) out.push(`≤ ${s.maximum}`);
  if (s.default !== undefined) out.push(`default ${JSON.stringify(s.default)}`);
  if (s.properties && s.type === 'object') out.push(`fields: ${Object.keys(s.properties).join(', ')}`);
  return out.join('; ');
}

function propertiesTable(doc: OpenApiDocument, schema: JsonSchema | undefined): string {
  const s = resolve(doc, schema);
  const props = Object.entries(s.properties ?? {});
  if (!props.length) return '<p class="muted">No fields.</p>';
  const required = new Set<string>(s.required ?? []);
  const rows = props
    .map(([name, p]) => {
      const r = resolve(doc, p);
      return `<tr><td><code>${esc(name)}</code></td><td>${esc(typeText(doc, r))}</td><td>${required.has(name) ? 'yes' : 'no'}</td><td>${esc([r.description, limitsText(r)].filter(Boolean).join(' '))}</td></tr>`;
    })
    .join('');
  return `<table><thead><tr><th>field</th><th>type</th><th>required</th><th>notes</th></tr></thead><tbody>${rows}</tbody></table>`;
}

const anchor = (s: string) => s.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '').toLowerCase();

export function renderApiReference(doc: OpenApiDocument): string {
  const ops: string[] = [];
  const toc: string[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      const id = anchor(`${method}-${path}`);
      const tools: string[] = [];
      const parts = [`<section id="${id}"><h2><code>${method.toUpperCase()} ${esc(path)}</code></h2><p><strong>${esc(op.summary)}</strong></p><p>${esc(op.description)}</p>`];
      parts.push(`<p>Authentication: ${op.security && op.security.length === 0 ? 'none' : op.security?.some((s) => Object.keys(s).length === 0) ? 'optional bearer key (required by most tools)' : 'bearer key'}.</p>`);
      if (op.parameters?.length) {
        parts.push(
          '<h3>Parameters</h3><table><thead><tr><th>name</th><th>in</th><th>type</th><th>required</th><th>notes</th></tr></thead><tbody>' +
            op.parameters.map((p) => `<tr><td><code>${esc(p.name)}</code></td><td>${esc(p.in)}</td><td>${esc(typeText(doc, p.schema))}</td><td>${p.required ? 'yes' : 'no'}</td><td>${esc(p.description)}</td></tr>`).join('') +
            '</tbody></table>',
        );
      }
      const body = op.requestBody?.content?.['application/json']?.schema;
      if (body) {
        const resolved = resolve(doc, body);
        if (resolved.oneOf) {
          parts.push(`<h3>Tools</h3><p>${esc(resolved.description)}</p>`);
          for (const variant of resolved.oneOf) {
            const call = resolve(doc, variant);
            const name = call.properties?.tool.const;
            tools.push(`<a href="#tool-${esc(name)}"><code>${esc(name)}</code></a>`);
            parts.push(
              `<article id="tool-${esc(name)}"><h4><code>${esc(name)}</code> — ${esc(call.title)}</h4><p>${esc(call.description).replace(/\n\n/g, '<br>')}</p>${propertiesTable(doc, call.properties?.arguments)}` +
                `<pre>{"tool": "${esc(name)}", "arguments": {…}}</pre></article>`,
            );
          }
        } else {
          parts.push(`<h3>Request body</h3>${propertiesTable(doc, resolved)}`);
        }
      }
      parts.push(
        '<h3>Responses</h3><table><thead><tr><th>status</th><th>meaning</th></tr></thead><tbody>' +
          Object.entries(op.responses).map(([status, r]) => `<tr><td>${esc(status)}</td><td>${esc(r.description)}</td></tr>`).join('') +
          '</tbody></table><p><a href="#contents">↑ Contents</a></p></section>',
      );
      toc.push(
        `<li><a href="#${id}"><code>${method.toUpperCase()} ${esc(path)}</code></a> — ${esc(op.summary)}` +
          `${tools.length ? `<p class="tools">Tools: ${tools.join(' · ')}</p>` : ''}</li>`,
      );
      ops.push(parts.join('\n'));
    }
  }
  const env = doc.components.schemas.ErrorEnvelope;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(doc.info.title)} ${esc(doc.info.version)} — reference</title>
<link rel="icon" href="${ASSET_ICON}" type="image/svg+xml">
<style>
body{font:15px/1.5 system-ui,-apple-system,Segoe UI,sans-serif;max-width:980px;margin:2rem auto;padding:0 1rem;color:#1b1f24}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:13px}
pre{background:#f4f5f7;padding:.6rem;border-radius:4px;overflow:auto}
table{border-collapse:collapse;width:100%;margin:.5rem 0 1rem}th,td{border:1px solid #d8dce1;padding:.3rem .5rem;text-align:left;vertical-align:top}
th{background:#f4f5f7}section{border-top:2px solid #d8dce1;margin-top:2rem}article{margin:1.2rem 0 1.8rem}.muted{color:#6a737d}
nav.site{display:flex;flex-wrap:wrap;gap:.25rem 1rem;border-bottom:1px solid #d8dce1;padding-bottom:.5rem}nav.site a[aria-current]{font-weight:700;color:#1b1f24}
.tools{margin:.2rem 0 .6rem;font-size:13px;line-height:1.8}
</style></head><body>
<nav class="site" aria-label="Main">${PUBLIC_NAV.map((l) => `<a href="${esc(l.href)}"${l.href === '/docs' ? ' aria-current="page"' : ''}>${esc(l.label)}</a>`).join('')}</nav>
<h1>${esc(doc.info.title)} <small class="muted">${esc(doc.info.version)} · OpenAPI ${esc(doc.openapi)}</small></h1>
<p>${esc(doc.info.description).replace(/\n\n/g, '</p><p>')}</p>
<p>Server: <code>${esc(doc.servers[0].url)}</code> · Machine-readable: <a href="/openapi.json">/openapi.json</a> · Brief: <a href="/llms.txt">/llms.txt</a> · MCP: <code>${esc(doc.servers[0].url)}/mcp</code></p>
<p>Authentication: ${esc(doc.components.securitySchemes.bearerAuth.description)} Header: <code>Authorization: Bearer rk_live_…</code></p>
<h2 id="contents">Contents</h2>
<p>The same reference in other forms: <a href="/llms.txt">/llms.txt</a> (the brief), <a href="/llms-full.txt">/llms-full.txt</a> (every tool, fee, limit, state and error code), <a href="/openapi.json">/openapi.json</a>; the rules: <a href="/terms">/terms</a>.</p>
<ul>${toc.join('')}<li><a href="#errors">Errors</a> — the envelope and every error code</li></ul>
<h2 id="errors">Errors</h2><p>${esc(env.description)}</p>${propertiesTable(doc, env)}${propertiesTable(doc, env.properties?.error)}
<p>Codes: ${(doc.components.schemas.ErrorCode.enum as string[]).map((c) => `<code>${esc(c)}</code> (${STATUS_BY_CODE[c as ErrorCode]})`).join(', ')}.</p>
${ops.join('\n')}
</body></html>`;
}

// ---------------------------------------------------------------------------------------------
// /api/public/info

async function supportCounts(deps: GatewayDeps): Promise<Record<string, unknown> | null> {
  try {
    const summary = await callSupport(deps.broker, SUPPORT.summary, {}, { timeout: 2000, retries: 0 });
    return summary && typeof summary === 'object' ? summary : null;
  } catch {
    return null; // support not deployed or not answering: the rest of the page still works
  }
}

/** The stdio package's entry: how to run it from this deployment; sha256 and integrity once it is packed. */
function stdioEntry(baseUrl: string, tarball: PackedTarball | null) {
  const install = stdioInstall(baseUrl);
  return {
    package: install.package,
    version: install.version,
    bin: install.bin,
    command: install.commandLine,
    config: { command: install.command, args: install.args, env: install.env },
    tarball: install.tarballUrl,
    sha256: tarball?.sha256 ?? null,
    sha256Url: install.sha256Url,
    integrity: tarball?.integrity ?? null,
    env: install.env,
    registry: { command: install.registry.commandLine, status: install.registry.status },
  };
}

export function infoDocument(
  baseUrl: string,
  supportSummary: Record<string, unknown> | null,
  terms: MarketTerms = DEFAULT_TERMS,
  tarball: PackedTarball | null = null,
) {
  return {
    ok: true,
    name: PRODUCT,
    version: API_VERSION,
    brief: BRIEF,
    baseUrl,
    gas: {
      perUsd: GAS_PER_USD,
      packs: GAS_PACKS.map((p) => ({ packId: p.id, gas: p.gas, usd: p.usd, role: p.role })),
      platformFeePercent: terms.platformFeePercent,
      cashoutFeePercent: CASHOUT_FEE_PERCENT,
      minCashoutGas: MIN_CASHOUT_GAS,
    },
    register: {
      method: 'POST',
      url: `${baseUrl}/api/agent/register`,
      body: { provider: `one of ${PROVIDERS.join(', ')}`, displayName: 'string (required)', label: 'string?', referredBy: 'agent id?' },
      curl: `curl -s -X POST ${baseUrl}/api/agent/register -H 'content-type: application/json' -d '{"provider":"${PROVIDERS[0]}","displayName":"My Coding Agent"}'`,
      then: 'Store apiKey (shown once) and send it as "Authorization: Bearer <apiKey>".',
    },
    call: {
      method: 'POST',
      url: `${baseUrl}/api/agent`,
      body: { tool: '<name>', arguments: {} },
      noKeyNeeded: TOOLS.filter((t) => !t.auth).map((t) => t.name),
      idempotency: 'Mutating tools accept an Idempotency-Key header (MCP: idempotencyKey argument).',
    },
    mcp: {
      remote: `${baseUrl}/mcp`,
      transport: 'streamable-http',
      auth: 'Authorization: Bearer <apiKey> or ?api_key=<apiKey>',
      // What each ?modules= selection offers; every tool below still reports its spec module.
      modules: Object.fromEntries(TOOL_MODULES.map((m) => [m, toolsOfModules([m]).map((t) => t.name)])),
      inEverySelection: TOOLS.filter((t) => selectionsOf(t).length === TOOL_MODULES.length).map((t) => t.name),
      subset: `${baseUrl}/mcp?modules=buy,shared`,
      stdio: stdioEntry(baseUrl, tarball),
    },
    tools: TOOLS.map((t) => ({ name: t.name, title: t.title, module: t.module, offeredIn: selectionsOf(t), auth: t.auth, mutating: t.mutating, movesMoney: t.movesMoney, ...(t.aliasOf ? { aliasOf: t.aliasOf } : {}) })),
    docs: {
      llmsTxt: `${baseUrl}/llms.txt`,
      llmsFull: `${baseUrl}/llms-full.txt`,
      openapi: `${baseUrl}/openapi.json`,
      reference: `${baseUrl}/docs`,
      toolDiscovery: `${baseUrl}/api/agent`,
    },
    support: {
      tools: ['ask_help', 'report_bug', 'report_experience'],
      howTo: 'Stuck: ask_help with the failed call\'s error code and requestId. Bugs: report_bug with context.requestId. Feedback: report_experience.',
      counts: supportSummary,
    },
  };
}

export function registerDiscoveryRoutes(app: Express, deps: GatewayDeps): void {
  const baseUrl = deps.config.publicBaseUrl;
  // Deterministic and static for a process: build once.
  const openapi = buildOpenApi(baseUrl);
  const openapiJson = JSON.stringify(openapi, null, 2);
  const reference = renderApiReference(openapi);
  const terms: MarketTerms = deps.config; // its platformFeePercent and autoReleaseDays
  const llms = renderLlmsTxt(baseUrl, terms);
  const llmsFull = renderLlmsFull(baseUrl, terms);

  const text = (res: Response, body: string, cors = false) => {
    res.type('text/markdown; charset=utf-8');
    res.setHeader('Cache-Control', 'public, max-age=300');
    if (cors) res.setHeader('Access-Control-Allow-Origin', '*');
    res.send(body);
  };

  app.get('/api/public/info', async (_req, res) => {
    res.setHeader('Access-Control-Allow-Origin', '*');
    const [support, tarball] = await Promise.all([supportCounts(deps), deps.stdioTarball.ready(2000)]);
    res.json(infoDocument(baseUrl, support, terms, tarball));
  });
  app.get('/api/public/llms', (_req, res) => text(res, llms, true));
  app.get('/llms.txt', (_req, res) => text(res, llms));
  app.get('/llms-full.txt', (_req, res) => text(res, llmsFull));
  app.get('/openapi.json', (_req, res) => {
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.type('application/json').send(openapiJson);
  });
  for (const p of ['/docs', '/api/docs']) {
    app.get(p, (_req, res) => {
      res.setHeader('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'");
      res.type('text/html; charset=utf-8').send(reference);
    });
  }
}
