/**
 * Issue #24: one purchase lifecycle is one trace across separate service processes over NATS, and the
 * log lines of every service carry the request id and trace id. An OTLP-over-HTTP receiver (JSON
 * protocol) runs in this test as a plain node:http server and decodes what the processes export.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { ServiceBroker } from 'moleculer';
import { createBroker } from '../../packages/broker';
import { loadConfig } from '../../packages/config';
import {
  ApiClient,
  createTestDatabase,
  describeDistributed,
  eventually,
  freePort,
  spawnServices,
  TEST_NATS_URL,
  type ServiceProcess,
  type TestDatabase,
  waitForGateway,
} from '../kit';
import { creditGas, expectLedgerClean } from '../kit/ledger';
import { base62 } from '../../packages/ids';
import { LISTING_DESCRIPTION } from '../../services/escrow/test/helpers';
import { startReceiver as startWebhookReceiver, type Receiver as WebhookReceiver } from '../../services/notifications/test/receiver';

interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
}

/** OTLP/JSON ids are hex; accept base64 too (the proto3 JSON mapping). */
function hexId(id: unknown): string {
  if (typeof id !== 'string' || id === '') return '';
  return /^[0-9a-f]+$/i.test(id) && (id.length === 32 || id.length === 16) ? id.toLowerCase() : Buffer.from(id, 'base64').toString('hex');
}

function attributesOf(list: any[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const a of list ?? []) {
    const v = a.value ?? {};
    out[a.key] = v.stringValue ?? v.intValue ?? v.boolValue ?? v.doubleValue ?? null;
  }
  return out;
}

/** A minimal OTLP/HTTP trace receiver: POST /v1/traces with a JSON ExportTraceServiceRequest. */
function startReceiver(): Promise<{ url: string; spans: ReceivedSpan[]; requests: { contentType: string }[]; close(): void }> {
  const spans: ReceivedSpan[] = [];
  const requests: { contentType: string }[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      requests.push({ contentType: String(req.headers['content-type'] ?? '') });
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      for (const rs of body.resourceSpans ?? []) {
        const service = String(attributesOf(rs.resource?.attributes)['service.name'] ?? '');
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            spans.push({
              service,
              traceId: hexId(s.traceId),
              spanId: hexId(s.spanId),
              parentSpanId: hexId(s.parentSpanId) || null,
              name: s.name,
              kind: s.kind,
              attributes: attributesOf(s.attributes),
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      resolve({ url: `http://127.0.0.1:${port}`, spans, requests, close: () => server.close() });
    });
  });
}

function jsonLines(output: string): any[] {
  return output
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => {
      try {
        return JSON.parse(l);
      } catch {
        return null;
      }
    })
    .filter(Boolean);
}

describeDistributed('one purchase lifecycle is one trace across processes (OTLP receiver, NATS, PostgreSQL)', () => {
  let tdb: TestDatabase;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const procs: Record<string, ServiceProcess> = {};
  let api: ApiClient;
  let client: ServiceBroker;
  let hooks: WebhookReceiver;

  beforeAll(async () => {
    receiver = await startReceiver();
    hooks = await startWebhookReceiver();
    tdb = await createTestDatabase();
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'market-trace-'));
    const env = {
      TRANSPORTER: TEST_NATS_URL!,
      DATABASE_URL: tdb.url,
      NAMESPACE: `t${base62(8)}`,
      DATA_DIR: dataDir,
      NODE_ENV: 'test',
      SWEEP_INTERVAL_MS: '0',
      LOG_LEVEL: 'debug',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '200',
      WEBHOOK_ALLOW_PRIVATE: 'true',
    };
    const port = await freePort();
    // Two at a time: TypeScript processes compiling at once start slowly on a small machine.
    const [ledger, escrow] = await Promise.all([spawnServices(['ledger'], env), spawnServices(['escrow'], env)]);
    const [rest, gateway] = await Promise.all([
      spawnServices(['agents', 'listings', 'notifications'], env),
      spawnServices(['gateway'], { ...env, PORT: String(port) }),
    ]);
    Object.assign(procs, { ledger, escrow, rest, gateway });
    api = new ApiClient(`http://127.0.0.1:${port}`);
    await waitForGateway(api, ['agents', 'ledger', 'listings', 'escrow', 'notifications']);
    const config = loadConfig({ ...env, SERVICES: 'support', LOG_LEVEL: 'error', OTEL_EXPORTER_OTLP_ENDPOINT: '' });
    client = createBroker({ config, services: [] });
    await client.start();
    await client.waitForServices(['ledger', 'escrow'], 30_000);
  }, 180_000);

  afterAll(async () => {
    await client?.stop();
    await Promise.all(Object.values(procs).map((p) => p.stop()));
    receiver?.close();
    await hooks?.close();
    await tdb?.drop();
  }, 60_000);

  it('purchase_service … ledger.hold and confirm_delivery … event … settle: each one trace, parents right, every hop a process', async () => {
    const seller = await api.register('Trace Seller');
    const buyer = await api.register('Trace Buyer');
    await creditGas({ call: (a, p) => client.call(a, p) }, buyer.agent.id, 1_000);
    await api.ok('set_webhook', { url: hooks.url, events: ['purchase.completed'] }, seller.apiKey);
    const listing = (await api.ok('list_service', { title: 'Write Jest unit tests for a TypeScript module', description: LISTING_DESCRIPTION, priceGas: 250, category: 'codegen' }, seller.apiKey)).listing;

    const purchaseRequest = `req_trace_purchase_${base62(8)}`;
    const { purchase } = await api.ok('purchase_service', { listingId: listing.id }, buyer.apiKey, { 'x-request-id': purchaseRequest });
    await api.ok('deliver_work', { purchaseId: purchase.id, delivery: { summary: 'tests attached' } }, seller.apiKey);
    const confirmRequest = `req_trace_confirm_${base62(8)}`;
    await api.ok('confirm_delivery', { purchaseId: purchase.id }, buyer.apiKey, { 'x-request-id': confirmRequest });
    // The settle is a durable event: wait for the seller's earnings.
    await eventually(async () => (await api.ok('wallet', {}, seller.apiKey)).lifetimeEarnedGas === 225, 30_000, 200);

    const traceOf = async (requestId: string, lastSpan: (s: ReceivedSpan) => boolean) =>
      eventually(async () => {
        const root = receiver.spans.find((s) => s.attributes['request.id'] === requestId && s.name.startsWith('tool '));
        if (!root) return null;
        const spans = receiver.spans.filter((s) => s.traceId === root.traceId);
        return spans.some(lastSpan) ? spans : null;
      }, 30_000, 200);

    // 1. purchase_service: gateway → escrow → ledger.hold, one trace.
    const purchaseTrace = await traceOf(purchaseRequest, (s) => s.name === 'ledger.hold');
    const byId = new Map(purchaseTrace.map((s) => [s.spanId, s]));
    const chain = (s: ReceivedSpan): ReceivedSpan[] => {
      const out = [s];
      for (let p = s.parentSpanId && byId.get(s.parentSpanId); p; p = p.parentSpanId ? byId.get(p.parentSpanId) : undefined) out.push(p);
      return out;
    };
    const hold = purchaseTrace.find((s) => s.name === 'ledger.hold')!;
    console.log(`purchase trace ${hold.traceId}:\n${purchaseTrace.map((s) => `  ${s.service}  ${s.name}  parent=${s.parentSpanId ? byId.get(s.parentSpanId)?.name ?? s.parentSpanId : '-'}`).join('\n')}`);
    const holdChain = chain(hold).map((s) => `${s.service}: ${s.name}`);
    // From the ledger's SERVER span up to the gateway's HTTP span, every parent in the same trace.
    expect(holdChain).toEqual(expect.arrayContaining([
      'market-ledger: ledger.hold',
      'market-escrow: call ledger.hold',
      'market-escrow: escrow.purchase',
      'market-gateway: call escrow.purchase',
      'market-gateway: tool purchase_service',
    ]));
    const root = chain(hold).at(-1)!;
    expect(root.service).toBe('market-gateway');
    expect(root.name).toMatch(/^POST/); // the HTTP server span (instrumentation-http)
    expect(root.parentSpanId).toBeNull();
    // SQL statements of the hold are spans under it (instrumentation-pg).
    expect(purchaseTrace.some((s) => s.service === 'market-ledger' && s.name.startsWith('pg.query') && chain(s).includes(hold))).toBe(true);
    expect(new Set(purchaseTrace.map((s) => s.service))).toEqual(new Set(['market-gateway', 'market-escrow', 'market-ledger', 'market-agents+listings+notifications']));

    // 2. confirm_delivery: gateway → escrow.confirm → publish → (JetStream) → consume in the ledger → settle SQL.
    const confirmTrace = await traceOf(confirmRequest, (s) => s.name === 'consume escrow.purchase.completed' && s.service === 'market-ledger');
    const cById = new Map(confirmTrace.map((s) => [s.spanId, s]));
    const consume = confirmTrace.find((s) => s.name === 'consume escrow.purchase.completed' && s.service === 'market-ledger')!;
    const publish = cById.get(consume.parentSpanId!)!;
    expect(publish).toMatchObject({ service: 'market-escrow', name: 'publish escrow.purchase.completed' });
    const confirmAction = cById.get(publish.parentSpanId!)!;
    expect(confirmAction).toMatchObject({ service: 'market-escrow', name: 'escrow.confirm' });
    expect(confirmTrace.some((s) => s.service === 'market-ledger' && s.name.startsWith('pg.query') && s.parentSpanId === consume.spanId)).toBe(true);
    console.log(`confirm trace ${consume.traceId}:\n${confirmTrace.map((s) => `  ${s.service}  ${s.name}  parent=${s.parentSpanId ? cById.get(s.parentSpanId)?.name ?? s.parentSpanId : '-'}`).join('\n')}`);

    // The three calls of the lifecycle are three traces; their tool spans carry the purchase's id, so an
    // operator finds the whole lifecycle by that attribute.
    await eventually(async () => {
      const tools = receiver.spans.filter((s) => s.attributes['market.purchase_id'] === purchase.id).map((s) => s.name);
      return ['tool purchase_service', 'tool deliver_work', 'tool confirm_delivery'].every((n) => tools.includes(n));
    }, 20_000, 250);

    // 3. Logs: JSON lines in every process, startup included; the ledger's line for the settle carries the
    //    confirm's request id and trace id, the escrow's line for the purchase the purchase's.
    for (const [name, proc] of Object.entries(procs)) {
      const lines = jsonLines(proc.output());
      expect(lines.some((l) => l.startup === true)).toBe(true);
      expect(lines.length).toBeGreaterThan(0);
      expect(proc.output().split('\n').filter((l) => l.trim() && !l.startsWith('{'))).toEqual([]);
      if (name === 'gateway') expect(lines.some((l) => l.access === true && l.requestId === purchaseRequest && l.traceId === hold.traceId)).toBe(true);
    }
    const settled = jsonLines(procs.ledger.output()).find((l) => l.topic === 'escrow.purchase.completed' && l.requestId === confirmRequest);
    expect(settled).toMatchObject({ requestId: confirmRequest, traceId: consume.traceId });
    const escrowLine = jsonLines(procs.escrow.output()).find((l) => l.action === 'escrow.purchase' && l.requestId === purchaseRequest);
    expect(escrowLine).toMatchObject({ traceId: hold.traceId });
    const ledgerHoldLine = jsonLines(procs.ledger.output()).find((l) => l.action === 'ledger.hold' && l.requestId === purchaseRequest);
    expect(ledgerHoldLine).toMatchObject({ traceId: hold.traceId });

    // 4. The webhook attempt that told the seller: a span, with its POST (instrumentation-http) under it.
    await eventually(async () => hooks.received.length > 0, 30_000, 200);
    const attempt = await eventually(async () => receiver.spans.find((s) => s.name === 'webhook attempt' && s.attributes['webhook.delivered'] === true), 30_000, 200);
    expect(attempt.service).toBe('market-agents+listings+notifications');
    expect(attempt.attributes['webhook.event_id']).toBe(hooks.received[0].eventId);
    await eventually(async () => receiver.spans.some((s) => s.parentSpanId === attempt.spanId && s.kind === 3 && /^POST/.test(s.name)), 30_000, 200);

    expect(receiver.requests.every((r) => r.contentType.startsWith('application/json'))).toBe(true);
    await expectLedgerClean({ call: (a, p) => client.call(a, p) });
  }, 120_000);
});
