/**
 * Signed webhooks end to end, in-process on PGlite: a local receiver gets purchase.created (seller),
 * purchase.delivered (buyer), purchase.completed (both), message.received and gas.credited, each
 * signed so that the documented check (docs/agents.md) verifies it; a failing receiver is retried with backoff.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestApp, eventually, freePort, REPO_ROOT, type TestApp } from '../../../test/kit';
import { decideSandboxCheckout } from '../../../test/kit/checkout';
import { creditGas, expectLedgerClean } from '../../../test/kit/ledger';
import { newAgent, newListing } from '../../escrow/test/helpers';
import { verifySignature } from '../signing';
import { ESCROW_TOPICS } from '../../../packages/contracts/escrow';
import { readmeVerify, startReceiver, type Receiver } from './receiver';

describe('signed webhooks', () => {
  let app: TestApp;
  let sellerHook: Receiver;
  let buyerHook: Receiver;

  beforeAll(async () => {
    app = await startTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
    [sellerHook, buyerHook] = await Promise.all([startReceiver(), startReceiver()]);
  });
  afterAll(async () => {
    await app?.stop();
    await sellerHook?.close();
    await buyerHook?.close();
  });

  const ofType = (r: Receiver, type: string) => r.received.filter((e) => e.body.type === type);

  it('delivers signed purchase events to the seller and the buyer, verifiable with the documented code', async () => {
    const seller = await newAgent(app, 'Seller');
    const buyer = await newAgent(app, 'Buyer');
    const s = await app.api.ok('set_webhook', { url: sellerHook.url }, seller.apiKey);
    expect(s.webhook).toMatchObject({ url: sellerHook.url, events: expect.arrayContaining(['purchase.created', 'purchase.completed']) });
    expect(s.webhook.secret).toMatch(/^whsec_/);
    const b = await app.api.ok('set_webhook', { url: buyerHook.url, events: ['purchase.delivered', 'purchase.completed', 'message.received'] }, buyer.apiKey);

    await creditGas(app, buyer.id, 1000);
    const listing = await newListing(app, seller);
    const { purchase } = await app.api.ok('purchase_service', { listingId: listing.id }, buyer.apiKey);

    const created = await eventually(async () => ofType(sellerHook, 'purchase.created')[0], 10_000);
    expect(created.body).toMatchObject({ type: 'purchase.created', agentId: seller.id, data: { purchaseId: purchase.id, role: 'seller', status: 'awaiting_delivery' } });
    expect(created.eventId).toBe(created.body.id);
    expect(created.signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(readmeVerify(s.webhook.secret, created.raw, created.signature)).toBe(true);
    expect(verifySignature(s.webhook.secret, created.raw, created.signature, Math.floor(Date.now() / 1000))).toBe(true);
    // Another secret, or a changed body, does not verify.
    expect(readmeVerify(b.webhook.secret, created.raw, created.signature)).toBe(false);
    expect(readmeVerify(s.webhook.secret, created.raw.replace(purchase.id, 'pur_forged'), created.signature)).toBe(false);

    await app.api.ok('send_message', { purchaseId: purchase.id, body: 'Starting now.' }, seller.apiKey);
    await app.api.ok('deliver_work', { purchaseId: purchase.id, delivery: { summary: 'Tests written.' } }, seller.apiKey);
    await app.api.ok('confirm_delivery', { purchaseId: purchase.id }, buyer.apiKey);

    const sellerDone = await eventually(async () => ofType(sellerHook, 'purchase.completed')[0], 10_000);
    const buyerDone = await eventually(async () => ofType(buyerHook, 'purchase.completed')[0], 10_000);
    expect(readmeVerify(s.webhook.secret, sellerDone.raw, sellerDone.signature)).toBe(true);
    expect(readmeVerify(b.webhook.secret, buyerDone.raw, buyerDone.signature)).toBe(true);
    expect(sellerDone.body.data).toMatchObject({ purchaseId: purchase.id, role: 'seller', sellerNetGas: expect.any(Number) });
    expect(buyerDone.body.data).toMatchObject({ purchaseId: purchase.id, role: 'buyer' });
    expect(sellerDone.eventId).not.toBe(buyerDone.eventId);

    const delivered = await eventually(async () => ofType(buyerHook, 'purchase.delivered')[0], 10_000);
    expect(delivered.body.data).toMatchObject({ purchaseId: purchase.id, status: 'delivered' });
    const message = await eventually(async () => ofType(buyerHook, 'message.received')[0], 10_000);
    expect(message.body.data).toMatchObject({ purchaseId: purchase.id, from: 'seller' });
    expect(JSON.stringify(message.body)).not.toContain('Starting now.');
    // The buyer did not subscribe to purchase.created and is never its recipient.
    expect(ofType(buyerHook, 'purchase.created')).toHaveLength(0);

    const list = await app.api.ok('list_webhook_deliveries', {}, seller.apiKey);
    expect(list.webhooks).toEqual([expect.objectContaining({ id: s.webhook.id, url: sellerHook.url })]);
    expect(list.webhooks[0].secret).toBeUndefined();
    expect(list.deliveries.map((d: any) => d.type)).toEqual(expect.arrayContaining(['purchase.created', 'purchase.completed']));
    expect(list.deliveries.every((d: any) => d.status === 'delivered' && d.attempts === 1 && d.lastStatusCode === 204)).toBe(true);
    await expectLedgerClean(app);
  }, 60_000);

  it('retries a failing receiver with backoff until it answers 2xx', async () => {
    const seller = await newAgent(app, 'Seller');
    const buyer = await newAgent(app, 'Buyer');
    const s = await app.api.ok('set_webhook', { url: sellerHook.url, events: ['purchase.created'] }, seller.apiKey);
    await creditGas(app, buyer.id, 500);
    const listing = await newListing(app, seller);
    sellerHook.failNext(2);
    const before = ofType(sellerHook, 'purchase.created').length;
    const { purchase } = await app.api.ok('purchase_service', { listingId: listing.id }, buyer.apiKey);

    const first = await eventually(async () => {
      const l = await app.api.ok('list_webhook_deliveries', {}, seller.apiKey);
      return l.deliveries.find((d: any) => d.attempts === 1 && d.status === 'pending' && d.lastStatusCode !== null);
    }, 10_000);
    expect(first).toMatchObject({ type: 'purchase.created', lastStatusCode: 500, lastError: 'HTTP 500' });
    const delay = Date.parse(first.nextAttemptAt) - app.clock.now().getTime();
    expect(delay).toBeGreaterThan(5_000); // backoff, not a hot loop

    // Not due yet: a sweep now sends nothing.
    await app.call('notifications.sweep');
    expect(ofType(sellerHook, 'purchase.created').length).toBe(before);

    app.clock.advance(delay + 1000);
    await app.call('notifications.sweep'); // second attempt: fails again, later retry
    const second = (await app.api.ok('list_webhook_deliveries', {}, seller.apiKey)).deliveries[0];
    expect(second).toMatchObject({ attempts: 2, status: 'pending' });
    expect(Date.parse(second.nextAttemptAt) - app.clock.now().getTime()).toBeGreaterThan(delay * 1.2);

    app.clock.advance(3_600_000);
    await app.call('notifications.sweep');
    const got = ofType(sellerHook, 'purchase.created').filter((e) => e.body.data.purchaseId === purchase.id);
    expect(got).toHaveLength(1);
    expect(readmeVerify(s.webhook.secret, got[0].raw, got[0].signature)).toBe(true);
    const third = (await app.api.ok('list_webhook_deliveries', {}, seller.apiKey)).deliveries[0];
    expect(third).toMatchObject({ attempts: 3, status: 'delivered', lastStatusCode: 204, nextAttemptAt: null });
    await expectLedgerClean(app);
  }, 60_000);

  it('tells the agent of gas credited by an approved checkout', async () => {
    const agent = await newAgent(app, 'Buyer');
    const hook = await app.api.ok('set_webhook', { url: buyerHook.url, events: ['gas.credited'] }, agent.apiKey);
    const checkout = await app.api.ok('buy_gas', { packId: 'starter' }, agent.apiKey);
    await decideSandboxCheckout(`${app.baseUrl}${new URL(checkout.checkoutUrl).pathname}`, 'approve');
    const credited = await eventually(async () => buyerHook.received.find((e) => e.body.type === 'gas.credited' && e.body.agentId === agent.id), 10_000);
    expect(credited.body.data).toMatchObject({ sessionId: checkout.sessionId, gas: checkout.gas });
    expect(readmeVerify(hook.webhook.secret, credited.raw, credited.signature)).toBe(true);
    await expectLedgerClean(app);
  }, 30_000);

  it("the documented receiver (docs/agents.md) verifies a real delivery (and would refuse a forged one)", async () => {
    const readme = fs.readFileSync(path.join(REPO_ROOT, 'docs/agents.md'), 'utf8');
    const code = /A receiver that verifies the signature[^\n]*\n\n```js\n([\s\S]*?)```/.exec(readme)![1];
    expect(code.trim().split('\n').length).toBeLessThanOrEqual(10);
    const port = await freePort();
    const file = path.join(os.tmpdir(), `readme-receiver-${process.pid}-${port}.js`);
    fs.writeFileSync(file, code.replace('.listen(8080)', `.listen(${port}, '127.0.0.1')`));
    const seller = await newAgent(app, 'Seller');
    const hook = await app.api.ok('set_webhook', { url: `http://127.0.0.1:${port}/`, events: ['purchase.created'] }, seller.apiKey);
    const child = spawn(process.execPath, [file], { env: { ...process.env, MARKET_WEBHOOK_SECRET: hook.webhook.secret }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (d) => (out += d.toString()));
    try {
      await eventually(async () => (await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: '{}' })).status === 400, 10_000, 100);
      const buyer = await newAgent(app, 'Buyer');
      await creditGas(app, buyer.id, 500);
      const listing = await newListing(app, seller);
      await app.api.ok('purchase_service', { listingId: listing.id }, buyer.apiKey);
      await eventually(async () => out.includes('purchase.created'), 10_000, 100);
      const list = await app.api.ok('list_webhook_deliveries', {}, seller.apiKey);
      expect(list.deliveries[0]).toMatchObject({ status: 'delivered', lastStatusCode: 204 });
      expect(out).toContain(list.deliveries[0].eventId);
    } finally {
      child.kill();
      fs.rmSync(file, { force: true });
    }
    await expectLedgerClean(app);
  }, 30_000);

  it('set_webhook validates events, delete_webhook stops deliveries', async () => {
    const agent = await newAgent(app, 'Seller');
    const bad = await app.api.call('set_webhook', { url: sellerHook.url, events: ['purchase.exploded'] }, agent.apiKey);
    expect(bad.status).toBe(400);
    expect(bad.body.error!.code).toBe('invalid_arguments');

    const first = await app.api.ok('set_webhook', { url: sellerHook.url }, agent.apiKey);
    const again = await app.api.ok('set_webhook', { url: sellerHook.url, events: ['cashout.paid'] }, agent.apiKey);
    expect(again.webhook.id).toBe(first.webhook.id);
    expect(again.webhook.secret).not.toBe(first.webhook.secret);
    expect(again.webhook.events).toEqual(['cashout.paid']);

    const del = await app.api.ok('delete_webhook', { webhookId: first.webhook.id }, agent.apiKey);
    expect(del).toMatchObject({ deleted: true });
    const twice = await app.api.call('delete_webhook', { webhookId: first.webhook.id }, agent.apiKey);
    expect(twice.status).toBe(404);
    const other = await newAgent(app, 'Other');
    const hook = await app.api.ok('set_webhook', { url: sellerHook.url }, other.apiKey);
    const notMine = await app.api.call('delete_webhook', { webhookId: hook.webhook.id }, agent.apiKey);
    expect(notMine.status).toBe(404);
  });

  it('writes notice events only for agents with webhooks (issue #22), and the money still balances', async () => {
    const escrowDb = (app.broker.getLocalService('escrow') as unknown as { db: { query: (sql: string, p: unknown[]) => Promise<{ rows: Array<{ topic: string }> }> } }).db;
    const topicsOf = async (purchaseId: string) =>
      (await escrowDb.query(`SELECT topic FROM escrow.outbox WHERE payload->>'purchaseId' = $1 ORDER BY id`, [purchaseId])).rows.map((r) => r.topic);
    const seller = await newAgent(app, 'Quiet seller');
    const buyer = await newAgent(app, 'Quiet buyer');
    await creditGas(app, buyer.id, 1000);
    const listing = await newListing(app, seller);
    const lifecycle = async () => {
      const { purchase } = await app.api.ok('purchase_service', { listingId: listing.id }, buyer.apiKey);
      await app.api.ok('deliver_work', { purchaseId: purchase.id, delivery: { summary: 'done' } }, seller.apiKey);
      await app.api.ok('confirm_delivery', { purchaseId: purchase.id }, buyer.apiKey);
      return topicsOf(purchase.id);
    };
    // Nobody has a webhook: only the money event (the ledger and listings read it).
    expect(await lifecycle()).toEqual([ESCROW_TOPICS.completed]);
    // The seller sets one: purchase_created (the seller's notice) and the completion notice are written,
    // delivered (the buyer's) is not.
    const hook = await app.api.ok('set_webhook', { url: sellerHook.url }, seller.apiKey);
    expect(await lifecycle()).toEqual([ESCROW_TOPICS.created, ESCROW_TOPICS.completed, ESCROW_TOPICS.completedNotice]);
    // Deleted: nothing for nobody again.
    await app.api.ok('delete_webhook', { webhookId: hook.webhook.id }, seller.apiKey);
    expect(await lifecycle()).toEqual([ESCROW_TOPICS.completed]);
    await expectLedgerClean(app);
  });
});
