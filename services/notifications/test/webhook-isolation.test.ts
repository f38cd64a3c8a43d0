/**
 * Issue #23, "one slow webhook receiver delays every agent's deliveries", replayed on PostgreSQL
 * with real slow receivers: one answers its headers and then trickles a byte of body every 3 s, one
 * accepts the connection and never answers, one trickles its status line a byte every 2 s. Another
 * agent's instant receiver must still get its delivery within a second; each slow attempt ends at
 * its total deadline; an endpoint failing for hours is paused with its deliveries kept and listed.
 */
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { describeWithPostgres, eventually, startTestApp, type TestApp } from '../../../test/kit';
import { creditGas, expectLedgerClean } from '../../../test/kit/ledger';
import { newAgent, newListing } from '../../escrow/test/helpers';
import { ATTEMPT_DEADLINE_MS } from '../sender';
import { startReceiver, type Receiver } from './receiver';

interface Slow {
  url: string;
  hits: () => number;
  close: () => Promise<void>;
}

/** An HTTP server whose handler does `behave` (never ending the answer by itself). */
async function slowHttp(behave: (res: http.ServerResponse, timers: NodeJS.Timeout[]) => void): Promise<Slow> {
  let hits = 0;
  const timers: NodeJS.Timeout[] = [];
  const server = http.createServer((req, res) => {
    hits++;
    req.resume();
    behave(res, timers);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    hits: () => hits,
    close: async () => {
      timers.forEach(clearInterval);
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** A TCP server that sends its status line one byte every 2 s (headers never complete in time). */
async function tricklingHeaders(): Promise<Slow> {
  let hits = 0;
  const sockets = new Set<net.Socket>();
  const timers: NodeJS.Timeout[] = [];
  const server = net.createServer((socket) => {
    hits++;
    sockets.add(socket);
    socket.on('error', () => undefined);
    const line = Buffer.from('HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n');
    let i = 0;
    timers.push(setInterval(() => i < line.length && !socket.destroyed && socket.write(line.subarray(i, ++i)), 2000));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    hits: () => hits,
    close: async () => {
      timers.forEach(clearInterval);
      sockets.forEach((s) => s.destroy());
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

describeWithPostgres('webhook isolation (issue #23), PostgreSQL and real slow receivers', () => {
  let app: TestApp;
  let instant: Receiver;
  const slow: Slow[] = [];

  beforeAll(async () => {
    app = await startTestApp({ postgres: true, env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
    instant = await startReceiver();
  });
  afterAll(async () => {
    await Promise.all(slow.map((s) => s.close()));
    await instant?.close();
    await app?.stop();
  });

  it('a trickling, a silent and a slow-header receiver delay another agent\'s delivery by at most 1 s; each slow attempt ends at its deadline', async () => {
    const trickleBody = await slowHttp((res, timers) => {
      res.writeHead(200, { 'content-length': '1000' });
      res.flushHeaders();
      timers.push(setInterval(() => !res.destroyed && res.write('x'), 3000));
    });
    const silent = await slowHttp(() => undefined);
    const trickleHead = await tricklingHeaders();
    slow.push(trickleBody, silent, trickleHead);

    const buyer = await newAgent(app, 'Buyer');
    await creditGas(app, buyer.id, 10_000);
    const sellers = await Promise.all(['X trickle', 'Y silent', 'Z slow headers', 'N instant'].map((n) => newAgent(app, `Seller ${n}`)));
    const urls = [trickleBody.url, silent.url, trickleHead.url, instant.url];
    for (let i = 0; i < 4; i++) await app.api.ok('set_webhook', { url: urls[i], events: ['purchase.created'] }, sellers[i].apiKey);
    const listings = await Promise.all(sellers.map((s) => newListing(app, s, { priceGas: 10 })));

    // X, Y and Z's purchases first: their receivers now hold an attempt each.
    for (let i = 0; i < 3; i++) await app.api.ok('purchase_service', { listingId: listings[i].id }, buyer.apiKey);
    await eventually(async () => trickleBody.hits() === 1 && silent.hits() === 1 && trickleHead.hits() === 1, 10_000);

    // N's purchase: its instant receiver gets it within a second.
    const t0 = Date.now();
    const { purchase } = await app.api.ok('purchase_service', { listingId: listings[3].id }, buyer.apiKey);
    await eventually(async () => instant.received.some((r) => r.body.data.purchaseId === purchase.id), 10_000, 20);
    const delay = Date.now() - t0;
    expect(delay).toBeLessThanOrEqual(1000);

    // The slow attempts end at the total deadline (not an idle timeout): the headers one fails, the body one
    // counts as delivered as soon as its 2xx status arrived (the body is never waited for).
    const listFor = async (i: number) => (await app.api.ok('list_webhook_deliveries', {}, sellers[i].apiKey)).deliveries[0];
    const started = Date.now();
    await eventually(async () => (await listFor(2)).lastError !== null && (await listFor(1)).lastError !== null, ATTEMPT_DEADLINE_MS + 8000, 200);
    expect(Date.now() - started).toBeLessThanOrEqual(ATTEMPT_DEADLINE_MS + 3000);
    expect(await listFor(0)).toMatchObject({ status: 'delivered', lastStatusCode: 200 });
    expect(await listFor(1)).toMatchObject({ status: 'pending', lastError: expect.stringMatching(/no answer within 10 s/) });
    expect(await listFor(2)).toMatchObject({ status: 'pending', lastError: expect.stringMatching(/no answer within 10 s/) });
    // Their retries must not slow the next test's sweeps: these agents stop their webhooks.
    for (let i = 0; i < 3; i++) {
      const l = await app.api.ok('list_webhook_deliveries', {}, sellers[i].apiKey);
      await app.api.ok('delete_webhook', { webhookId: l.webhooks[0].id }, sellers[i].apiKey);
    }
    await expectLedgerClean(app);
  }, 60_000);

  it('an endpoint failing for hours is paused: its deliveries are kept (pending, listed) and resume on set_webhook', async () => {
    let down = true;
    const failing = await slowHttp((res) => res.writeHead(down ? 503 : 204).end());
    slow.push(failing);
    const seller = await newAgent(app, 'Seller down');
    const buyer = await newAgent(app, 'Buyer two');
    await creditGas(app, buyer.id, 1000);
    await app.api.ok('set_webhook', { url: failing.url, events: ['purchase.created'] }, seller.apiKey);
    const listing = await newListing(app, seller, { priceGas: 10 });
    await app.api.ok('purchase_service', { listingId: listing.id }, buyer.apiKey);
    await eventually(async () => failing.hits() >= 1, 10_000);
    await app.call('notifications.sweep');

    // Failing for 7 hours (the clock moves; each due retry fails).
    for (let h = 0; h < 7; h++) {
      app.clock.advance(3_600_000 + 60_000);
      await app.call('notifications.sweep');
    }
    let list = await app.api.ok('list_webhook_deliveries', {}, seller.apiKey);
    expect(list.webhooks[0].pausedAt).not.toBeNull();
    expect(list.webhooks[0].failingSince).not.toBeNull();
    expect(list.deliveries[0]).toMatchObject({ status: 'pending', lastError: expect.stringMatching(/paused/) });

    // Paused: a new event is stored and listed but not sent; nothing is given up after 24 h.
    const hitsWhenPaused = failing.hits();
    await app.api.ok('purchase_service', { listingId: listing.id }, buyer.apiKey);
    app.clock.advance(30 * 3_600_000);
    await app.call('notifications.sweep');
    expect(failing.hits()).toBe(hitsWhenPaused);
    list = await app.api.ok('list_webhook_deliveries', {}, seller.apiKey);
    expect(list.deliveries.map((d: any) => d.status)).toEqual(['pending', 'pending']);

    // The receiver is fixed; the agent sets the same url again: resumed, both kept deliveries go out.
    down = false;
    await app.api.ok('set_webhook', { url: failing.url, events: ['purchase.created'] }, seller.apiKey);
    await app.call('notifications.sweep');
    list = await app.api.ok('list_webhook_deliveries', {}, seller.apiKey);
    expect(list.webhooks[0]).toMatchObject({ pausedAt: null, failingSince: null });
    await eventually(async () => {
      const l = await app.api.ok('list_webhook_deliveries', {}, seller.apiKey);
      return l.deliveries.every((d: any) => d.status === 'delivered');
    }, 10_000);
    await expectLedgerClean(app);
  }, 60_000);
});
