/**
 * An Idempotency-Key claimed by a gateway replica that died mid-call (kill -9) is taken over once it
 * is older than any call can run: the retry buys once, not never and not twice.
 */
import { startTestApp, type TestApp } from '../../../test/kit';
import { expectLedgerClean } from '../../../test/kit/ledger';
import { scenario } from '../../escrow/test/helpers';

describe('Idempotency-Key abandoned by a dead gateway', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ env: { REQUEST_TIMEOUT_MS: '1000' } });
  });
  afterAll(async () => app?.stop());

  it('answers "still running" while the claim is fresh, then takes it over and buys exactly once', async () => {
    const s = await scenario(app);
    const db = (app.broker.getLocalService('gateway') as any).db;
    const first = await app.api.call('purchase_service', { listingId: s.listingId }, s.buyer.apiKey, { 'idempotency-key': 'k-dead-gw' });
    expect(first.status).toBe(200);
    // Make the key look claimed by a gateway that died before recording the result.
    await db.query(`UPDATE gateway.idempotency SET completed_at = NULL, result = NULL WHERE key = 'k-dead-gw'`);
    const running = await app.api.call('purchase_service', { listingId: s.listingId }, s.buyer.apiKey, { 'idempotency-key': 'k-dead-gw' });
    expect(running.status).toBe(409);

    // Older than 2 × REQUEST_TIMEOUT_MS + 5 s: abandoned.
    await db.query(`UPDATE gateway.idempotency SET created_at = now() - interval '10 seconds' WHERE key = 'k-dead-gw'`);
    const retried = await app.api.call('purchase_service', { listingId: s.listingId }, s.buyer.apiKey, { 'idempotency-key': 'k-dead-gw' });
    expect(retried.status).toBe(200);
    expect(retried.body.result.purchase.id).toBe(first.body.result.purchase.id);
    const { purchases } = await app.api.ok('list_orders', { role: 'buyer' }, s.buyer.apiKey);
    expect(purchases).toHaveLength(1);
    await expectLedgerClean(app);
  });
});
