/**
 * Tracing off by default (nothing loaded, spans are plain calls), and on with OTEL_EXPORTER_OTLP_ENDPOINT:
 * OTLP over HTTP in protobuf by default, to a real local receiver. The request context's fields reach the
 * log mixin. (The distributed trace across processes: test/distributed/tracing.test.ts.)
 */
import http from 'node:http';
import { logMixin, withRequestContext } from '../context';
import { flushTracing, shutdownTracing, startTracing, tracingEnabled, traceServiceName, withSpan } from '../tracing';

describe('tracing', () => {
  afterAll(async () => {
    await shutdownTracing();
  });

  it('is off without OTEL_EXPORTER_OTLP_ENDPOINT: no SDK, spans are plain calls, logs carry the requestId only', async () => {
    expect(startTracing({})).toBe(false);
    expect(tracingEnabled()).toBe(false);
    await expect(withSpan('x', {}, (span) => (span === null ? 'ran' : 'span'))).resolves.toBe('ran');
    expect(withRequestContext({ requestId: 'req_abc12345' }, () => logMixin())).toEqual({ requestId: 'req_abc12345' });
    expect(logMixin()).toEqual({});
    expect(traceServiceName({ SERVICES: 'escrow,ledger' })).toBe('market-escrow+ledger');
    expect(traceServiceName({ OTEL_SERVICE_NAME: 'x' })).toBe('x');
  });

  it('on: exports OTLP/HTTP protobuf by default to the endpoint\'s /v1/traces; log lines inside a span carry its traceId', async () => {
    const got: { path: string; type: string; bytes: number }[] = [];
    const server = http.createServer((req, res) => {
      let bytes = 0;
      req.on('data', (c: Buffer) => (bytes += c.length));
      req.on('end', () => {
        got.push({ path: req.url ?? '', type: String(req.headers['content-type']), bytes });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    expect(startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, SERVICES: 'ledger' })).toBe(true);
    let traceId = '';
    await withSpan('unit span', {}, (span) => {
      traceId = span!.spanContext().traceId;
      expect(withRequestContext({ requestId: 'req_abc12345' }, () => logMixin())).toEqual({ requestId: 'req_abc12345', traceId });
    });
    await flushTracing();
    expect(got).toEqual([{ path: '/v1/traces', type: 'application/x-protobuf', bytes: expect.any(Number) }]);
    expect(got[0].bytes).toBeGreaterThan(0);
    server.close();
    await shutdownTracing();
    expect(tracingEnabled()).toBe(false);
  });

  it('http/json: the span reaches the receiver unflushed within OTEL_BSP_SCHEDULE_DELAY, with the service\'s resource attributes', async () => {
    const bodies: { resourceSpans?: { resource?: { attributes?: { key: string; value: { stringValue?: string } }[] }; scopeSpans?: { spans?: { name: string; traceId: string }[] }[] }[] }[] = [];
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        expect(req.url).toBe('/v1/traces');
        expect(req.headers['content-type']).toBe('application/json');
        bodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const on = startTracing({
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}/`,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      SERVICES: 'escrow,ledger',
      NAMESPACE: 'market-test',
    });
    expect(on).toBe(true);
    let traceId = '';
    await withSpan('json span', {}, (span) => {
      traceId = span!.spanContext().traceId;
    });
    // No flush: the batch goes out on its 100 ms schedule (the SDK's default would be 5 s).
    const started = Date.now();
    while (bodies.length === 0 && Date.now() - started < 3_000) await new Promise((r) => setTimeout(r, 25));
    expect(Date.now() - started).toBeLessThan(3_000);
    const rs = bodies[0].resourceSpans![0];
    const attrs = Object.fromEntries((rs.resource?.attributes ?? []).map((a) => [a.key, a.value.stringValue]));
    expect(attrs).toMatchObject({ 'service.name': 'market-escrow+ledger', 'service.namespace': 'market-test' });
    const spans = rs.scopeSpans!.flatMap((s) => s.spans ?? []);
    expect(spans).toEqual([expect.objectContaining({ name: 'json span', traceId })]);
    server.close();
  });
});
