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
  });
});
