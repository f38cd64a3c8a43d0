/**
 * Every tool's real result validates against the outputSchema the catalogue declares for it. The SDK
 * client validates structuredContent against tools/list's outputSchema on every call; this suite also
 * validates it with Ajv itself and checks that every tool of the catalogue was called successfully.
 */
import Ajv from 'ajv';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startTestApp, type TestApp } from '../../../test/kit';
import { TOOLS } from '../../../packages/tool-catalogue';
import { expectLedgerClean } from '../../../test/kit/ledger';
import { callOk, connect, httpTransport, runJourneys, buyGasAndApprove } from './mcp-helpers';

describe('every tool result matches its outputSchema', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  });
  afterAll(async () => {
    await app?.stop();
  });

  test('tools/list shows an outputSchema on every tool: the catalogue\'s', async () => {
    const client = await connect(httpTransport(app.baseUrl));
    const { tools } = await client.listTools();
    expect(tools).toHaveLength(TOOLS.length);
    for (const t of tools) expect(t.outputSchema).toEqual(TOOLS.find((d) => d.name === t.name)!.output);
    await client.close();
  });

  test('a journey through every tool', async () => {
    const seen = new Map<string, unknown[]>();
    const record = (client: Client): Client => {
      const orig = client.callTool.bind(client);
      (client as any).callTool = async (params: any, ...rest: any[]) => {
        const r: any = await orig(params, ...rest);
        if (!r.isError) {
          const list = seen.get(params.name) ?? [];
          list.push(r.structuredContent);
          seen.set(params.name, list);
        }
        return r;
      };
      return client;
    };
    const anon = record(await connect(httpTransport(app.baseUrl)));
    const keys: string[] = [];
    for (const displayName of ['Schema Seller', 'Schema Buyer']) {
      const reg = await callOk(anon, 'register', { provider: 'other', displayName });
      keys.push(reg.apiKey);
    }
    const seller = record(await connect(httpTransport(app.baseUrl, { apiKey: keys[0] })));
    const buyer = record(await connect(httpTransport(app.baseUrl, { apiKey: keys[1] })));
    await runJourneys(app, seller, buyer, 'schemas');

    await callOk(buyer, 'whoami');
    await callOk(buyer, 'buy_credits', { packId: 'starter', idempotencyKey: 'credits-1' });
    await callOk(buyer, 'get_checkout');

    // Refund, dispute and a sale big enough to cash out twice (the minimum is 500 gas).
    const { listing } = await callOk(seller, 'list_service', {
      title: 'Summarise a research paper into a one-page brief',
      description:
        'Send me the PDF or the link of one research paper. I deliver a one-page Markdown brief: the question, the method, the main results with numbers, and the limits, within 2 days.',
      priceGas: 800,
      category: 'research',
    });
    await callOk(seller, 'update_service', { listingId: listing.id, priceGas: 900 });
    await buyGasAndApprove(buyer, app.baseUrl, 'builder');
    for (let i = 0; i < 100 && (await callOk(buyer, 'wallet')).gasBalance < 2250; i++) await new Promise((r) => setTimeout(r, 100));
    const refunded = (await callOk(buyer, 'purchase_service', { listingId: listing.id })).purchase;
    await callOk(buyer, 'request_refund', { purchaseId: refunded.id, reason: 'Changed my mind.' });
    const sold = (await callOk(buyer, 'purchase_service', { listingId: listing.id })).purchase;
    await callOk(seller, 'deliver_work', { purchaseId: sold.id, delivery: { summary: 'The one-page brief.' } });
    await callOk(buyer, 'confirm_delivery', { purchaseId: sold.id });
    for (let i = 0; i < 100 && (await callOk(seller, 'wallet')).withdrawableGas < 1035; i++) await new Promise((r) => setTimeout(r, 100));
    await callOk(seller, 'request_cashout', { amountGas: 500 });
    await callOk(seller, 'cash_out', {});
    // (A dispute pauses the seller's cash-outs, so it comes last.)
    const disputed = (await callOk(buyer, 'purchase_service', { listingId: listing.id })).purchase;
    await callOk(buyer, 'dispute_purchase', { purchaseId: disputed.id, reason: 'The seller never answered my messages.' });
    // An evaluator checks a delivery (issue #35).
    const evalKey = (await callOk(anon, 'register', { provider: 'other', displayName: 'Schema Evaluator' })).apiKey;
    const evaluator = record(await connect(httpTransport(app.baseUrl, { apiKey: evalKey })));
    const evaluatorId = (await callOk(evaluator, 'whoami')).agent.id;
    await callOk(buyer, 'get_agent', { agentId: evaluatorId });
    const small = (await callOk(seller, 'list_service', {
      title: 'Review a pull request for obvious bugs',
      description:
        'Send me the link of one pull request under 300 lines. I deliver a Markdown review listing each bug I find with the file, the line and a suggested fix, within 1 day.',
      priceGas: 100,
      category: 'codegen',
    })).listing;
    const evaluated = (await callOk(buyer, 'purchase_service', { listingId: small.id, evaluator: { agentId: evaluatorId, feeGas: 20 } })).purchase;
    await callOk(seller, 'deliver_work', { purchaseId: evaluated.id, delivery: { summary: 'The review.' } });
    await callOk(evaluator, 'evaluate_delivery', { purchaseId: evaluated.id, verdict: 'accept', report: 'Two real bugs found, both with fixes.' });

    // Webhooks (a local target is allowed in tests; nothing needs to answer for these three results).
    const { webhook } = await callOk(seller, 'set_webhook', { url: 'http://127.0.0.1:9/market-hook', events: ['purchase.created'] });
    await callOk(seller, 'list_webhook_deliveries', {});
    await callOk(seller, 'delete_webhook', { webhookId: webhook.id });

    await callOk(buyer, 'report_bug', { title: 'A bug title', description: 'Something went wrong in a tool call.' });
    await callOk(buyer, 'report_experience', { rating: 4, journeyStep: 'buy_gas', whatWorked: 'checkout' });
    await callOk(buyer, 'ask_help', { question: 'How do I cash out?' });
    await callOk(anon, 'search_services', {});
    // A stale key: the public part answers, with the warning the schema names.
    const stale = record(await connect(httpTransport(app.baseUrl, { apiKey: 'rk_live_notAKeyAnyMore000000' })));
    await callOk(stale, 'whoami');
    await callOk(stale, 'search_services', { q: 'brief' });
    await callOk(stale, 'ask_help', { question: 'How do I get a new key?' });

    // Every tool answered at least once, and every answer is valid against the catalogue's schema.
    expect(TOOLS.map((t) => t.name).filter((n) => !seen.has(n))).toEqual([]);
    const ajv = new Ajv({ strict: false, allErrors: true });
    ajv.addFormat('date-time', true);
    for (const tool of TOOLS) {
      const validate = ajv.compile(tool.output);
      for (const result of seen.get(tool.name)!) {
        if (!validate(result)) throw new Error(`${tool.name}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(result)}`);
      }
    }
    await expectLedgerClean(app);
  }, 120_000);
});
