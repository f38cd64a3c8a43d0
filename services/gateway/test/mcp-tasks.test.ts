/**
 * Purchases as MCP tasks over /mcp (issue #26), in one process (PGlite in memory): the shared
 * scenario, plus what is quicker to show on a server built here — the bounded tasks/result wait.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { startTestApp, type TestApp } from '../../../test/kit';
import { creditGas, expectLedgerClean } from '../../../test/kit/ledger';
import { PURCHASE_STATUSES } from '../../../packages/tool-catalogue';
import { purchaseTask } from '../../../packages/contracts/purchase-machine';
import { taskStatusOf } from '@agent-market/mcp/lib/tasks.js';
import { newAgent, newListing } from '../../escrow/test/helpers';
import { ALL_MODULES, createMcpServer } from '../mcp/server';
import type { ToolDispatcher } from '../dispatch';
import { runPurchaseTasks } from './mcp-tasks-scenario';

describe('purchases as MCP tasks (/mcp, in process)', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app?.stop();
  });

  test('every purchase state maps to a task state (the machine\'s, read from the view); a delivery makes it completed for good, unless awaiting or rejected by an evaluator', () => {
    const facts = (delivered: boolean, verdict: 'accept' | 'reject' | null = null) => ({ delivered, verdict });
    const mapped = Object.fromEntries(PURCHASE_STATUSES.map((s) => [s, purchaseTask(s, facts(false)).status]));
    expect(mapped).toEqual({
      pending: 'working',
      awaiting_approval: 'working',
      awaiting_delivery: 'working',
      awaiting_evaluation: 'working', // never without a delivery in practice
      delivered: 'completed', // never without a delivery in practice
      completed: 'completed',
      refunded: 'failed',
      disputed: 'working',
      failed: 'failed',
    });
    for (const s of PURCHASE_STATUSES) expect(purchaseTask(s, facts(true)).status).toBe(s === 'awaiting_evaluation' ? 'working' : 'completed');
    expect(purchaseTask('refunded', facts(true, 'reject')).status).toBe('failed');
    expect(purchaseTask('completed', facts(true, 'accept')).status).toBe('completed');
    // The stdio package restates none of it: it reads the view's task.
    expect(taskStatusOf({ status: 'some_new_state', task: { status: 'failed' } })).toBe('failed');
    expect(purchaseTask('awaiting_approval', facts(false)).pollIntervalMs).toBe(30_000);
  });

  test('buy as a task, read its state, await the delivery; a refund fails it; only the buyer sees it; audit clean', async () => {
    await runPurchaseTasks(
      {
        api: app.api,
        replicas: [app.baseUrl],
        fund: (agent) => creditGas(app, agent.id, 1000),
        audit: () => expectLedgerClean(app),
      },
      'local',
    );
  }, 60_000);

  test('tasks/result waits a bounded time, then says the task is still working and how to keep waiting', async () => {
    const seller = await newAgent(app, 'Bound Seller');
    const buyer = await newAgent(app, 'Bound Buyer');
    await creditGas(app, buyer.id, 500);
    const listing = await newListing(app, seller);
    const { purchase } = await app.api.ok('purchase_service', { listingId: listing.id }, buyer.apiKey);

    // The gateway's own server (its dispatcher), with a short wait, on an in-memory transport carrying the caller.
    const dispatcher = (app.broker.getLocalService('gateway') as unknown as { dispatcher: ToolDispatcher }).dispatcher;
    const server = createMcpServer({ dispatcher, baseUrl: app.baseUrl, modules: ALL_MODULES, tasks: { waitMs: 1200, readIntervalMs: 200 } });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const send = clientSide.send.bind(clientSide);
    const authInfo = { token: buyer.apiKey, clientId: buyer.id, scopes: [], extra: { apiKey: buyer.apiKey, agentId: buyer.id, requestId: 'req_bound', clientIp: '127.0.0.1' } };
    clientSide.send = (message, options) => send(message, { ...options, authInfo });
    await server.connect(serverSide);
    const client = new Client({ name: 'bound-test', version: '1' });
    await client.connect(clientSide);

    const t0 = Date.now();
    const err = await client.experimental.tasks.getTaskResult(purchase.id, CallToolResultSchema).catch((e) => e);
    const waited = Date.now() - t0;
    expect(waited).toBeGreaterThanOrEqual(1100);
    expect(waited).toBeLessThan(5000);
    expect(err).toMatchObject({ code: -32001, data: { taskId: purchase.id, status: 'working', purchaseStatus: 'awaiting_delivery', pollInterval: 5000 } });
    expect(err.message).toMatch(/still working after 1 s.*Call tasks\/result again/);
    // A purchase not bought as a task is a task all the same (its buyer can await it).
    expect((await client.experimental.tasks.getTask(purchase.id)).status).toBe('working');
    await app.api.ok('request_refund', { purchaseId: purchase.id }, buyer.apiKey);
    const refunded: any = await client.experimental.tasks.getTaskResult(purchase.id, CallToolResultSchema);
    expect(refunded.isError).toBe(true);
    await client.close();
    await server.close();
    await expectLedgerClean(app);
  }, 30_000);

  test('with an evaluator (issue #35) the task keeps working after the delivery and completes after the verdict, with the report; a rejection fails it', async () => {
    const seller = await newAgent(app, 'Eval Seller');
    const buyer = await newAgent(app, 'Eval Buyer');
    const evaluator = await newAgent(app, 'Evaluator');
    await creditGas(app, buyer.id, 1000);
    const listing = await newListing(app, seller);
    const dispatcher = (app.broker.getLocalService('gateway') as unknown as { dispatcher: ToolDispatcher }).dispatcher;
    const server = createMcpServer({ dispatcher, baseUrl: app.baseUrl, modules: ALL_MODULES, tasks: { waitMs: 600, readIntervalMs: 100 } });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const send = clientSide.send.bind(clientSide);
    const authInfo = { token: buyer.apiKey, clientId: buyer.id, scopes: [], extra: { apiKey: buyer.apiKey, agentId: buyer.id, requestId: 'req_eval', clientIp: '127.0.0.1' } };
    clientSide.send = (message, options) => send(message, { ...options, authInfo });
    await server.connect(serverSide);
    const client = new Client({ name: 'eval-test', version: '1' });
    await client.connect(clientSide);

    // Bought as a task, the first answer names what is held: the price and the evaluator's fee together.
    const created = await client.request({ method: 'tools/call', params: { name: 'purchase_service', arguments: { listingId: listing.id, evaluator: { agentId: evaluator.id, feeGas: 30 } }, task: {} } }, CreateTaskResultSchema);
    expect(created._meta?.['agent-market/purchase']).toMatchObject({ priceGas: 250, totalHeldGas: 280 });
    expect(created._meta?.['io.modelcontextprotocol/model-immediate-response']).toContain('280 gas (price 250 + evaluator fee 30) held in escrow');
    for (const verdict of ['accept', 'reject'] as const) {
      const { purchase } =
        verdict === 'accept'
          ? { purchase: { id: created.task.taskId } }
          : await app.api.ok('purchase_service', { listingId: listing.id, evaluator: { agentId: evaluator.id, feeGas: 30 } }, buyer.apiKey);
      await app.api.ok('deliver_work', { purchaseId: purchase.id, delivery: { summary: 'the tests' } }, seller.apiKey);
      const waiting = await client.experimental.tasks.getTask(purchase.id);
      expect(waiting).toMatchObject({ status: 'working', pollInterval: 10_000 });
      expect(waiting.statusMessage).toMatch(/evaluate_delivery/);
      await app.api.ok('evaluate_delivery', { purchaseId: purchase.id, verdict, report: `verdict ${verdict}: 12 tests run` }, evaluator.apiKey);
      const result: any = await client.experimental.tasks.getTaskResult(purchase.id, CallToolResultSchema);
      if (verdict === 'accept') {
        expect(result.isError).toBeFalsy();
        expect(result.structuredContent.delivery.delivery.summary).toBe('the tests');
        expect(result.structuredContent.purchase.evaluator).toMatchObject({ verdict: 'accept', report: 'verdict accept: 12 tests run' });
      } else {
        expect(result.isError).toBe(true);
        expect(result.content[0].text).toMatch(/verdict reject: 12 tests run/);
      }
    }
    await client.close();
    await server.close();
    await expectLedgerClean(app);
  }, 30_000);
});
