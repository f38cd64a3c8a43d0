/**
 * ask_help through the real tool router: a table of questions agents ask with the facts each answer
 * must hold, the caller's context (error codes, own failed requests, stuck state), and the optional
 * LLM against a local stand-in of the chat-completions API.
 */
import { expectLedgerClean } from '../../../test/kit/ledger';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestApp, type TestApp } from '../../../test/kit';
import { knowledgeSections, renderLlmsFull, exampleArguments } from '../../../packages/knowledge';
import { newAgent, LISTING, expectValidNextStep, numbersIn, type TestAgent } from './helpers';

// ---- a tiny stand-in of an OpenAI-compatible /chat/completions endpoint -------------------------
type LlmMode = 'down' | 'grounded' | 'invents' | 'slow';
let llmMode: LlmMode = 'down';
const llmRequests: Array<{ auth: string | undefined; body: any }> = [];
const llm = http.createServer((req, res) => {
  let raw = '';
  req.on('data', (d) => (raw += d));
  req.on('end', () => {
    llmRequests.push({ auth: req.headers.authorization, body: JSON.parse(raw || '{}') });
    const reply = (content: string) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }] }));
    };
    if (req.url !== '/v1/chat/completions') return void res.writeHead(404).end();
    if (llmMode === 'down') return void res.writeHead(503).end('{"error":"overloaded"}');
    if (llmMode === 'grounded') return reply('First connect a BTC address with connect_payouts, then call request_cashout. The minimum is 500 gas and the fee is 2%.');
    if (llmMode === 'invents') return reply('Call withdraw_now to cash out instantly; the fee is 7%.');
    // slow: answer after the client gave up — never within the timeout of the test's request
    setTimeout(() => reply('too late'), 20_000).unref();
  });
});

const ADMIN_TOKEN = 'adm_ask_help_test_0123456789';
let app: TestApp;
let alice: TestAgent;
let bob: TestAgent;

beforeAll(async () => {
  await new Promise<void>((r) => llm.listen(0, '127.0.0.1', r));
  const port = (llm.address() as AddressInfo).port;
  app = await startTestApp({ env: { ADMIN_TOKEN, HELP_LLM_URL: `http://127.0.0.1:${port}/v1`, HELP_LLM_KEY: 'sk-test-standin', HELP_LLM_MODEL: 'stand-in' } });
  [alice, bob] = await Promise.all([newAgent(app.api, 'Alice'), newAgent(app.api, 'Bob')]);
});

afterAll(async () => {
  await app?.stop();
  llm.closeAllConnections();
  await new Promise((r) => llm.close(r));
});

async function ask(args: Record<string, unknown>, who: TestAgent = alice) {
  return app.api.ok('ask_help', args, who.apiKey);
}

interface Row {
  q: string;
  stuckState?: string;
  context?: Record<string, string>;
  facts: string[];
  next?: string;
  nextArgs?: Record<string, unknown>;
}

const TABLE: Row[] = [
  { q: 'How do I cash out?', facts: ['connect_payouts', 'request_cashout', '500 gas', '2%'], next: 'connect_payouts' },
  { q: 'How do I get gas?', facts: ['buy_gas', 'checkoutUrl', 'starter', '500 gas', 'human'], next: 'buy_gas' },
  { q: 'Why was my listing rejected?', facts: ['55', 'listing_rejected', 'qualityReport', 'hint'], next: 'list_service' },
  { q: 'How does escrow work?', facts: ['held', 'confirm_delivery', '3 days', 'refund'] },
  { q: 'What are the fees?', facts: ['10%', 'price 250 → fee 25, seller 225', '2%'] },
  { q: 'How much does the platform take from a 250 gas sale?', facts: ['fee 25', 'seller 225'] },
  { q: 'What is the minimum cash-out?', facts: ['500 gas'] },
  { q: 'Can I withdraw the gas I bought?', facts: ['sale_earn', 'withdrawable'] },
  { q: 'What is the difference between a refund and a dispute?', facts: ['request_refund', 'dispute_purchase', 'operator', 'frozen'] },
  { q: 'The seller never delivered, how do I get my money back?', facts: ['request_refund', 'refunded at once'], next: 'request_refund' },
  { q: 'How do I connect over MCP in Cursor?', facts: ['/mcp', 'api_key', 'agent-market-mcp', 'MARKET_BASE_URL', 'MARKET_API_KEY', 'modules'] },
  { q: 'How does the referral bonus work?', facts: ['50 gas', 'at most 10', 'referredBy', 'first purchase'] },
  { q: 'Which sellers can I trust for a first purchase?', facts: ['isSeed', 'salesCount > 0'], next: 'search_services' },
  { q: 'I lost my API key, what now?', facts: ['register', 'once'], next: 'register' },
  { q: 'What happens if I do not confirm the delivery?', facts: ['3 days', 'completed'] },
  { q: 'How do I list a service?', facts: ['list_service', '55', 'free'], next: 'list_service' },
  { q: 'What should I charge for a research task?', facts: ['research 200', 'standard 150–400'] },
  { q: 'How do I rate a purchase?', facts: ['rate_purchase', '1–5'], next: 'rate_purchase' },
  { q: 'How do I retry safely without buying twice?', facts: ['Idempotency-Key', '24 hours'] },
  { q: 'How do I message the seller?', facts: ['send_message'], next: 'send_message' },
  { q: 'How long does the seller have to deliver?', facts: ['deliveryDays', 'default 7'] },
  { q: 'How many dollars is gas worth?', facts: ['100 gas = 1.00 USD'] },
  { q: 'Where is the payment approved?', facts: ['checkoutUrl', 'human'], next: 'buy_gas' },
  { q: 'What do I do with a requestId?', facts: ['report_bug', 'context.requestId'] },
  // every error code
  { q: 'What does invalid_arguments mean?', facts: ['400', 'details.errors'] },
  { q: 'I called a tool and got unknown_tool', facts: ['400', 'validTools'] },
  { q: 'Why do I get unauthorized?', facts: ['401', 'Authorization: Bearer'], next: 'register' },
  { q: 'purchase_service answered insufficient_gas', facts: ['402', 'buy_gas', 'starter'], next: 'buy_gas', nextArgs: { packId: 'starter' } },
  { q: 'What is forbidden (403)?', facts: ['403', 'own listing'] },
  { q: 'It says not_found', context: { toolName: 'purchase_service' }, facts: ['404', 'search_services'], next: 'search_services' },
  { q: 'What does invalid_state mean?', facts: ['409', 'get_purchase'], next: 'get_purchase' },
  { q: 'I got listing_rejected, what now?', facts: ['422', '55', 'hint'], next: 'list_service' },
  { q: 'I am rate_limited', facts: ['429', 'Retry-After'] },
  { q: 'The server said internal', facts: ['500', 'report_bug', 'requestId'], next: 'report_bug' },
  { q: 'The tool answered not_implemented', facts: ['501'] },
  { q: 'What should I do about service_unavailable?', facts: ['503', 'Idempotency-Key'] },
  // context narrows the answer
  { q: 'what now?', context: { toolName: 'purchase_service', error: 'insufficient_gas: Not enough gas (short by 1200).' }, facts: ['1200', 'builder', '2000 gas'], next: 'buy_gas', nextArgs: { packId: 'builder' } },
  { q: 'How do I get my gas back?', stuckState: 'my purchase is delivered but wrong', facts: ['From delivered', 'confirm_delivery', 'refundRequestedAt', 'dispute_purchase'] },
];

describe('ask_help answers the questions agents ask', () => {
  const sectionIds = new Set(knowledgeSections('x').map((s) => s.id));
  let docNumbers: Set<string>;
  beforeAll(() => {
    llmMode = 'down';
    docNumbers = new Set(numbersIn(renderLlmsFull(app.config.publicBaseUrl)));
  });

  test('the table has at least 25 questions', () => expect(TABLE.length).toBeGreaterThanOrEqual(25));

  test.each(TABLE.map((r) => [r.q, r] as const))('%s', async (_q, row) => {
    const a = await ask({ question: row.q, ...(row.stuckState ? { stuckState: row.stuckState } : {}), ...(row.context ? { context: row.context } : {}) });
    expect(a.known).toBe(true);
    for (const fact of row.facts) expect(a.answer).toContain(fact);
    expectValidNextStep(a.nextStep);
    if (row.next) expect(a.nextStep.tool).toBe(row.next);
    if (row.nextArgs) expect(a.nextStep.arguments).toMatchObject(row.nextArgs);
    expect(a.sources.length).toBeGreaterThan(0);
    for (const s of a.sources) expect(sectionIds).toContain(s.id);
    // Never invents numbers: every number is in the documentation or in what the agent said.
    const said = new Set(numbersIn(`${row.q} ${JSON.stringify(row.context ?? {})} ${row.stuckState ?? ''}`));
    for (const n of numbersIn(a.answer)) expect(docNumbers.has(n) || said.has(n) ? n : `invented ${n}`).toBe(n);
    expect(a.generatedBy).toBe('retrieval');
  });

  test.each([['What is the weather in Paris tomorrow?'], ['Who won the football world cup in 1998?'], ['zxqv blorp']])(
    'declines what is not about the marketplace, without a false bug report: %s',
    async (q) => {
      const a = await ask({ question: q });
      expect(a.known).toBe(false);
      expect(a.declined).toBe(true);
      expect(a.confidence).toBe(0);
      expect(a.sources).toEqual([]);
      expect(a.answer).toMatch(/^I can't help with that here/);
      expect(a.answer).toContain('What ask_help can do');
      expect(a.nextStep).toBeNull();
    },
  );

  test.each([['How do I log out?'], ['Is there a mobile app?']])('says plainly when it does not know, and suggests no bug report: %s', async (q) => {
    const a = await ask({ question: q });
    expect(a.known).toBe(false);
    expect(a.declined).toBeUndefined();
    expect(a.answer).toMatch(/^I don't know/);
    expect(a.nextStep).toBeNull();
  });

  test('bad input gets the envelope with a hint and is not logged as a question', async () => {
    const before = await app.call('support.summary');
    const r = await app.api.call('ask_help', { question: '' }, alice.apiKey);
    expect(r.status).toBe(400);
    expect(r.body.error!.code).toBe('invalid_arguments');
    expect(r.body.error!.hint).toBeTruthy();
    const noKey = await app.api.call('ask_help', { question: 'How do I cash out?' });
    expect(noKey.status).toBe(401);
    expect(noKey.body.error!.code).toBe('unauthorized');
    const after = await app.call('support.summary');
    expect(after.helpQuestions.total).toBe(before.helpQuestions.total);
  });
});

describe('ask_help explains the caller\'s own failed request', () => {
  beforeAll(() => {
    llmMode = 'down';
  });

  test('an invalid_arguments request: explained, with the corrected call as next step', async () => {
    const failed = await app.api.call('rate_purchase', { purchaseId: 'pur_whatever', rating: 9 }, alice.apiKey);
    expect(failed.status).toBe(400);
    const requestId = failed.body.requestId!;
    expect(failed.headers.get('x-request-id')).toBe(requestId);
    const a = await ask({ question: 'Why did this fail?', context: { requestId } });
    expect(a.known).toBe(true);
    expect(a.request).toMatchObject({ requestId, tool: 'rate_purchase', status: 400, errorCode: 'invalid_arguments' });
    expect(a.answer).toContain(requestId);
    expect(a.answer).toContain('rate_purchase');
    expect(a.answer).toContain('rating');
    expect(a.nextStep.tool).toBe('rate_purchase');
    expectValidNextStep(a.nextStep);
  });

  test('insufficient_gas on purchase_service: explained, names buy_gas with the smallest pack covering the shortfall', async () => {
    const seller = await newAgent(app.api, 'Seller');
    const { listing } = await app.api.ok('list_service', LISTING, seller.apiKey);
    const failed = await app.api.call('purchase_service', { listingId: listing.id }, alice.apiKey);
    expect(failed.status).toBe(402);
    expect(failed.body.error!.code).toBe('insufficient_gas');
    const requestId = failed.body.requestId!;

    const a = await ask({ question: 'Why did my purchase fail?', context: { requestId } });
    expect(a.known).toBe(true);
    expect(a.request).toMatchObject({ requestId, tool: 'purchase_service', status: 402, errorCode: 'insufficient_gas' });
    expect(a.answer).toContain(requestId);
    expect(a.answer).toContain('insufficient_gas');
    expect(a.answer).toContain('short by 250 gas');
    expect(a.answer).toContain('buy_gas');
    expect(a.answer).toContain('starter');
    expect(a.nextStep).toEqual({ tool: 'buy_gas', arguments: { packId: 'starter' } });

    // Nothing moved: Alice still has no gas and nothing is held.
    const w = await app.api.ok('wallet', {}, alice.apiKey);
    expect(w.gasBalance).toBe(0);
    expect(w.heldGas).toBe(0);
    await expectLedgerClean(app);

    // Another agent passing Alice's requestId learns nothing about it.
    const other = await ask({ question: 'Why did my purchase fail?', context: { requestId } }, bob);
    expect(other.request).toBeNull();
    expect(other.answer).toContain('could not find request');
    expect(other.answer).not.toContain('purchase_service and failed');
    expect(JSON.stringify(other)).not.toContain(alice.id);

    // Filed as a bug with that requestId: the operator sees it with the request attached.
    const { bug } = await app.api.ok(
      'report_bug',
      { title: 'First purchase refused', description: 'purchase_service answered insufficient_gas on my first purchase.', context: { toolName: 'purchase_service', requestId } },
      alice.apiKey,
    );
    expect(bug.requestAttached).toBe(true);
    const seen = await app.api.get(`/api/admin/reports/bugs?agentId=${alice.id}`, { authorization: `Bearer ${ADMIN_TOKEN}` });
    expect(seen.status).toBe(200);
    expect(seen.body.result.bugs[0]).toMatchObject({
      id: bug.id,
      agentId: alice.id,
      request: { requestId, agentId: alice.id, tool: 'purchase_service', status: 402, errorCode: 'insufficient_gas' },
    });
  });

  test('a larger shortfall names the smallest pack that covers it', async () => {
    const seller = await newAgent(app.api, 'Pricey Seller');
    const { listing } = await app.api.ok('list_service', { ...LISTING, title: 'Refactor a TypeScript service module', priceGas: 1200 }, seller.apiKey);
    const failed = await app.api.call('purchase_service', { listingId: listing.id }, bob.apiKey);
    expect(failed.body.error!.code).toBe('insufficient_gas');
    const a = await ask({ question: 'What should I do?', context: { requestId: failed.body.requestId! } }, bob);
    expect(a.answer).toContain('short by 1200 gas');
    expect(a.answer).toContain('builder pack (2000 gas for 20 USD)');
    expect(a.nextStep).toEqual({ tool: 'buy_gas', arguments: { packId: 'builder' } });
  });

  test('the documented example calls work: list_service\'s example passes the real quality gate', async () => {
    const seller = await newAgent(app.api, 'Example Seller');
    const r = await app.api.call('list_service', exampleArguments('list_service'), seller.apiKey);
    expect(r.status).toBe(200);
    expect(r.body.result.listing.id).toMatch(/^lst_/);
  });

  test('an unknown requestId is said to be unknown', async () => {
    const a = await ask({ question: 'What happened to this request?', context: { requestId: 'req_doesnotexist00000000' } });
    expect(a.request).toBeNull();
    expect(a.answer).toContain('could not find request req_doesnotexist00000000');
  });
});

describe('ask_help with an LLM (HELP_LLM_URL) composes from the retrieved passages only', () => {
  test('a grounded answer is used, and the LLM saw only the retrieved passages', async () => {
    llmMode = 'grounded';
    llmRequests.length = 0;
    const a = await ask({ question: 'How do I cash out?' });
    expect(a.generatedBy).toBe('llm');
    expect(a.answer).toContain('connect_payouts');
    expect(a.answer).toContain('500 gas');
    expect(a.nextStep.tool).toBe('connect_payouts');
    expect(a.sources.map((s: any) => s.id)).toContain('cashout');
    expect(llmRequests).toHaveLength(1);
    const sent = llmRequests[0];
    expect(sent.auth).toBe('Bearer sk-test-standin');
    expect(sent.body.model).toBe('stand-in');
    const user = sent.body.messages.find((m: any) => m.role === 'user').content as string;
    expect(user).toContain('[cashout] Cashing out earnings');
    expect(user).toContain('How do I cash out?');
    expect(user).not.toContain('[referral]');
    expect(sent.body.messages[0].content).toMatch(/ONLY from the passages/);
  });

  test('an answer that invents a tool or a number falls back to the retrieval answer', async () => {
    llmMode = 'invents';
    const a = await ask({ question: 'How do I cash out?' });
    expect(a.generatedBy).toBe('retrieval');
    expect(a.answer).not.toContain('withdraw_now');
    expect(a.answer).toContain('request_cashout');
  });

  test('an LLM that is down falls back to the retrieval answer', async () => {
    llmMode = 'down';
    const a = await ask({ question: 'How do I cash out?' });
    expect(a.generatedBy).toBe('retrieval');
    expect(a.answer).toContain('2%');
  });

  test('an unknown question is not sent to the LLM', async () => {
    llmMode = 'grounded';
    llmRequests.length = 0;
    const a = await ask({ question: 'What is the weather in Paris tomorrow?' });
    expect(a.known).toBe(false);
    expect(llmRequests).toHaveLength(0);
  });
});
