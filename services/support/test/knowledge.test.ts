/** The knowledge base is generated from the catalogue and the market rules: complete, consistent, deterministic. */
import { knowledgeSections, renderLlmsTxt, renderLlmsFull, exampleArguments, errorGuides, purchaseTransitions } from '../../../packages/knowledge';
import { TOOLS, TOOL_NAMES, PURCHASE_STATUSES } from '../../../packages/tool-catalogue';
import { topics } from '../../../packages/knowledge/topics';
import { TRANSITIONS } from '../../../packages/contracts/purchase-machine';
import { STATUS_BY_CODE } from '../../../packages/errors';
import * as rules from '../../../packages/market-rules';
import { expectValidNextStep } from './helpers';
import { HelpIndex } from '../help';

const BASE = 'https://market.example';

describe('knowledge sections', () => {
  const sections = knowledgeSections(BASE);

  test('ids are unique and every section has a title, a body and tags', () => {
    expect(new Set(sections.map((s) => s.id)).size).toBe(sections.length);
    for (const s of sections) {
      expect(s.title.length).toBeGreaterThan(3);
      expect(s.body.length).toBeGreaterThan(20);
      expect(s.tags.length).toBeGreaterThan(0);
    }
  });

  test('every tool of the catalogue has a section with its module, auth, arguments and an example call', () => {
    for (const tool of TOOLS) {
      const s = sections.find((x) => x.id === `tool-${tool.name}`);
      expect(s).toBeDefined();
      expect(s!.body).toContain(tool.description);
      expect(s!.body).toContain(`Module: ${tool.module}`);
      expect(s!.body).toContain(tool.auth ? 'API key required' : 'no key needed');
      for (const arg of Object.keys(tool.params)) expect(s!.body).toContain(`\`${arg}\``);
      expect(s!.body).toContain(`Example call: POST ${BASE}/api/agent {"tool":"${tool.name}"`);
    }
  });

  test('every example call and next step passes its tool\'s own argument schema', () => {
    for (const tool of TOOLS) expectValidNextStep({ tool: tool.name, arguments: exampleArguments(tool.name) });
    for (const s of sections) if (s.nextStep) expectValidNextStep(s.nextStep);
    for (const g of errorGuides()) expectValidNextStep(g.nextStep);
  });

  test('every error code of DESIGN §5 (plus not_implemented, service_unavailable) has a cause and a next step', () => {
    for (const code of Object.keys(STATUS_BY_CODE)) {
      const s = sections.find((x) => x.id === `error-${code}`);
      expect(s).toBeDefined();
      expect(s!.body).toContain(`HTTP ${STATUS_BY_CODE[code as keyof typeof STATUS_BY_CODE]}`);
      expect(s!.body).toMatch(/Cause: .+/);
      expect(s!.body).toMatch(/Next step: .+/);
    }
  });

  test('the numbers come from the market rules', () => {
    const text = (id: string) => sections.find((s) => s.id === id)!.body;
    const split = rules.saleSplit(250);
    expect(text('fees')).toContain(`price 250 → fee ${split.platformFeeGas}, seller ${split.sellerNetGas}`);
    expect(split).toEqual({ priceGas: 250, platformFeeGas: 25, sellerNetGas: 225 });
    expect(text('fees')).toContain(`${rules.DEFAULT_PLATFORM_FEE_PERCENT}%`);
    expect(text('cashout')).toContain(`minimum cash-out ${rules.MIN_CASHOUT_GAS} gas`);
    expect(text('cashout')).toContain(`cash-out fee ${rules.CASHOUT_FEE_PERCENT}%`);
    expect(text('cashout')).toContain('sale_earn');
    for (const p of rules.GAS_PACKS) expect(text('gas')).toContain(`\`${p.id}\`: ${p.gas} gas for ${p.usd} USD`);
    expect(text('referral')).toContain(`${rules.REFERRAL_BONUS_GAS} gas`);
    expect(text('referral')).toContain(`at most ${rules.REFERRAL_WEEKLY_CAP} referred agents`);
    expect(text('selling')).toContain(`at least ${rules.PASS_SCORE}`);
    for (const [cat, gas] of Object.entries(rules.CATEGORY_ANCHOR_GAS)) expect(text('pricing')).toContain(`${cat} ${gas}`);
    for (const b of rules.PRICE_BANDS) expect(text('pricing')).toContain(`${b.id} ${b.minGas}–${b.maxGas}`);
    expect(text('purchase-states')).toContain(`${rules.DEFAULT_AUTO_RELEASE_DAYS} days after deliveredAt`);
    expect(text('purchase-states')).toContain(`(default ${rules.DEFAULT_DELIVERY_DAYS})`);
  });

  test('the purchase transitions cover DESIGN §4 and name only real states', () => {
    const t = purchaseTransitions();
    const named = new Set<string>();
    for (const row of t) {
      const states = `${row.from} ${row.to}`.match(/\b[a-z]+(?:_[a-z]+)*\b/g)!.filter((w) => (PURCHASE_STATUSES as readonly string[]).includes(w));
      expect(states.length).toBeGreaterThan(0);
      for (const s of states) named.add(s);
    }
    // Every state a documented transition of the machine reaches is in the table (it grows with the machine).
    const documented = new Set(TRANSITIONS.filter((tr) => tr.doc && tr.to).map((tr) => tr.to));
    for (const state of documented) expect(named).toContain(state);
  });

  test('MCP section: remote /mcp with Bearer or ?api_key=, modules, stdio package and its variables', () => {
    const mcp = sections.find((s) => s.id === 'mcp')!.body;
    for (const fact of [`${BASE}/mcp`, 'Authorization: Bearer', '?api_key=', '?modules=buy,shared', 'agent-market-mcp', 'MARKET_BASE_URL', 'MARKET_API_KEY']) {
      expect(mcp).toContain(fact);
    }
  });
});

describe('figures and intents', () => {
  test('the cheapest packs and the price for a net come from the market rules', () => {
    expect(rules.cheapestPacksCovering(2300).map((p) => p.id)).toEqual(['starter', 'builder']);
    expect(rules.cheapestPacksCovering(3750).map((p) => p.id)).toEqual(['builder', 'builder']);
    expect(rules.cheapestPacksCovering(300).map((p) => p.id)).toEqual(['starter']);
    // 1133 → seller 1020 → cash-out fee 20 → 1000; 1132 reaches only 999.
    expect(rules.priceForNet(1000, 10, true)).toBe(1133);
    expect(rules.priceForNet(900, 10)).toBe(1000);
    // 1020 of sale_earn → cash-out fee 20 → 1000; 1019 reaches only 999.
    expect(rules.cashoutForNet(1000)).toBe(1020);
    // 225 a sale: 3 sales (675) reach 500; cashing 675 out costs 14.
    expect(rules.salesToCashout(225)).toEqual({ sales: 3, amountGas: 675, feeGas: 14, netGas: 661 });
    for (const net of [1, 490, 1000, 4321]) {
      expect(rules.cashoutSplit(rules.cashoutForNet(net)).netGas).toBeGreaterThanOrEqual(net);
      expect(rules.cashoutSplit(rules.cashoutForNet(net) - 1).netGas).toBeLessThan(net);
    }
    for (const net of [1, 49, 500, 1000, 4321]) {
      const price = rules.priceForNet(net, 10, true);
      const after = (p: number) => rules.cashoutSplit(rules.saleSplit(p, 10).sellerNetGas).netGas;
      expect(after(price)).toBeGreaterThanOrEqual(net);
      expect(after(price - 1)).toBeLessThan(net);
    }
  });

  test('every intent names a real call and is worded from the rules', () => {
    const table = topics(rules.DEFAULT_TERMS);
    expect(new Set(table.map((t) => t.id)).size).toBe(table.length);
    for (const t of table) {
      if (t.tool) expect(TOOL_NAMES).toContain(t.tool);
      expect(t.lead.length).toBeLessThanOrEqual(400);
      for (const phrase of t.phrases) expect(phrase).toBe(phrase.toLowerCase());
    }
    expect(table.find((t) => t.id === 'cashout')!.lead).toContain(`minimum ${rules.MIN_CASHOUT_GAS} gas`);
  });
});

describe('llms.txt and llms-full.txt', () => {
  test('llms.txt follows the convention and takes an agent to a first purchase', () => {
    const txt = renderLlmsTxt(`${BASE}/`);
    const lines = txt.split('\n');
    expect(lines[0]).toMatch(/^# \S/);
    expect(lines.find((l) => l.startsWith('> '))).toBeDefined();
    expect(txt).toMatch(/^## /m);
    expect(txt).toMatch(/- \[[^\]]+\]\(https:\/\/market\.example\/llms-full\.txt\)/);
    expect(txt).not.toContain('example//');
    const order = ['/api/agent/register', 'buy_gas', 'checkoutUrl', 'wallet', 'search_services', 'purchase_service', 'confirm_delivery', 'rate_purchase'];
    let at = 0;
    for (const step of order) {
      const i = txt.indexOf(step, at);
      expect(i).toBeGreaterThanOrEqual(0);
      at = i;
    }
  });

  test('llms-full.txt holds every section, and both are deterministic and fast', () => {
    const t0 = Date.now();
    const full = renderLlmsFull(BASE);
    expect(Date.now() - t0).toBeLessThan(500);
    for (const s of knowledgeSections(BASE)) expect(full).toContain(`## ${s.title}`);
    expect(renderLlmsFull(BASE)).toBe(full);
    expect(renderLlmsTxt(BASE)).toBe(renderLlmsTxt(BASE));
  });
});

describe('the operator’s terms', () => {
  const terms = { platformFeePercent: 20, autoReleaseDays: 5 };

  test('docs, llms.txt and ask_help quote the fee and the auto-release in force, not the defaults', () => {
    const fees = knowledgeSections(BASE, terms).find((s) => s.id === 'fees')!;
    expect(fees.body).toContain('Platform fee: 20% of priceGas');
    expect(fees.body).toContain('price 250 → fee 50, seller 200');
    const llms = renderLlmsTxt(BASE, terms);
    expect(llms).toContain('Platform fee 20% at completion (250 → fee 50, seller 200)');
    expect(llms).toContain('auto-release 5 days after delivery');
    const full = renderLlmsFull(BASE, terms);
    expect(full).not.toMatch(/auto-release 3 days|Platform fee: 10%|3 days after deliveredAt|90% sale_earn/);
    expect(full).toContain('completed (80% sale_earn to the seller, 20% platform fee)');
    expect(full).toContain('delivered, 5 days after deliveredAt');

    const help = new HelpIndex(BASE, terms);
    expect(help.answer({ question: 'How much does the platform take when I sell something?' }).answer).toContain('20%');
    expect(help.answer({ question: 'I sell a service for 500 gas, what do I receive?' }).answer).toContain('pays the seller 400 gas');
  });
});
