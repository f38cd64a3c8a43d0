import Validator from 'fastest-validator';
import { TOOLS, TOOL_NAMES, getTool, selectionsOf, toolInputSchema, toolAnnotations, toolsInModule, toolsOfModules } from '..';

const SPEC_MODULES = {
  // + get_agent (issue #35: a buyer reads an agent's public record before naming it as evaluator)
  buy: ['search_services', 'get_agent', 'purchase_service', 'list_orders', 'get_purchase', 'get_delivery', 'confirm_delivery', 'ack_purchase', 'rate_purchase', 'request_refund', 'dispute_purchase', 'send_message', 'list_messages'],
  // + evaluate_delivery (issue #35: the evaluator is paid for a verdict, as a seller is for its work)
  sell: ['whoami', 'wallet', 'list_service', 'update_service', 'deliver_work', 'evaluate_delivery', 'request_cashout', 'cash_out', 'connect_payouts'],
  // + get_checkout (issue #15), the webhook tools (issue #18)
  shared: ['register', 'buy_gas', 'buy_credits', 'get_checkout', 'ask_help', 'report_bug', 'report_experience', 'set_webhook', 'delete_webhook', 'list_webhook_deliveries'],
};

describe('tool catalogue', () => {
  it('defines the 26 tools of spec §4.2, get_checkout (issue #15), the 3 webhook tools (issue #18), evaluate_delivery and get_agent (issue #35) once each', () => {
    expect(TOOLS).toHaveLength(32);
    expect(new Set(TOOL_NAMES).size).toBe(32);
  });

  it('groups tools into the spec §4.5 modules', () => {
    for (const [module, names] of Object.entries(SPEC_MODULES)) {
      expect(toolsInModule(module as any).map((t) => t.name).sort()).toEqual([...names].sort());
      for (const name of names) expect(getTool(name)!.module).toBe(module);
    }
  });

  it('gives every selection whoami, wallet and ask_help, and the seller ack_purchase (issue 37)', () => {
    const names = (modules: string[]) => toolsOfModules(modules as any).map((t) => t.name);
    const buyer = names(['buy', 'shared']);
    const seller = names(['sell', 'shared']);
    for (const name of ['whoami', 'wallet', 'ask_help']) {
      expect(buyer).toContain(name);
      expect(seller).toContain(name);
      expect(names(['buy'])).toContain(name);
      expect(names(['sell'])).toContain(name);
      expect(selectionsOf(getTool(name)!)).toEqual(['buy', 'sell', 'shared']);
    }
    expect(seller).toEqual(expect.arrayContaining(['ack_purchase', 'list_service', 'deliver_work', 'register', 'buy_gas']));
    expect(buyer).toEqual(expect.arrayContaining(['ack_purchase', 'purchase_service', 'confirm_delivery', 'register', 'buy_gas']));
    expect(selectionsOf(getTool('ack_purchase')!)).toEqual(['buy', 'sell']);
    // Nothing else moves: a buyer still gets no seller tool, a seller no buyer tool.
    expect(buyer).not.toContain('list_service');
    expect(seller).not.toContain('purchase_service');
    expect(names(['buy', 'sell', 'shared'])).toEqual(TOOLS.map((t) => t.name));
  });

  it('needs a key for every tool but register and search_services', () => {
    const open = TOOLS.filter((t) => !t.auth).map((t) => t.name).sort();
    expect(open).toEqual(['register', 'search_services']);
  });

  it('names a serving action for every tool, aliases share their target', () => {
    for (const t of TOOLS) expect(t.action).toMatch(/^[a-z]+\.[a-zA-Z]+$/);
    expect(getTool('buy_credits')!.action).toBe(getTool('buy_gas')!.action);
    expect(getTool('cash_out')!.action).toBe(getTool('request_cashout')!.action);
  });

  it('gives every tool a JSON Schema of its arguments that says what is required', () => {
    for (const t of TOOLS) {
      const schema = toolInputSchema(t);
      expect(schema.type).toBe('object');
      expect(schema.additionalProperties).toBe(false);
    }
    const list = toolInputSchema(getTool('list_service')!);
    expect(list.required).toEqual(['title', 'description', 'priceGas']);
    expect(list.properties.priceGas).toMatchObject({ type: 'integer', minimum: 10 });
    expect(list.properties.category.enum).toEqual(['codegen', 'research', 'ops', 'design', 'data', 'general']);
    expect(toolInputSchema(getTool('buy_gas')!).properties.packId).toMatchObject({ enum: ['starter', 'builder', 'fleet'], default: 'builder' });
  });

  it('offers idempotencyKey to MCP clients on mutating tools only', () => {
    expect(toolInputSchema(getTool('purchase_service')!, { withIdempotencyKey: true }).properties.idempotencyKey).toBeDefined();
    expect(toolInputSchema(getTool('whoami')!, { withIdempotencyKey: true }).properties.idempotencyKey).toBeUndefined();
  });

  it('annotates reads as read-only and money moves as destructive', () => {
    expect(toolAnnotations(getTool('search_services')!)).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(toolAnnotations(getTool('confirm_delivery')!)).toMatchObject({ readOnlyHint: false, destructiveHint: true });
  });

  it('annotates what an MCP client sees honestly: deleting, overwriting and spending are destructive; a repeat that changes nothing is idempotent', () => {
    const hints = (name: string) => {
      const a = toolAnnotations(getTool(name)!);
      return [a.readOnlyHint, a.destructiveHint, a.idempotentHint, a.openWorldHint].map((h) => (h ? 1 : 0)).join('');
    };
    //                                 read destr idem open
    expect(hints('delete_webhook')).toBe('0110'); // deletes; deleting twice changes nothing more
    expect(hints('set_webhook')).toBe('0101'); // the same url again rotates its secret; POSTs to the caller's URL
    expect(hints('update_service')).toBe('0110'); // overwrites the listing's fields
    expect(hints('connect_payouts')).toBe('0110'); // replaces the payout address
    expect(hints('rate_purchase')).toBe('0110'); // a rating may be changed
    expect(hints('purchase_service')).toBe('0100'); // spends; buying twice buys twice
    expect(hints('confirm_delivery')).toBe('0110'); // releases escrow once; a repeat is refused
    expect(hints('request_cashout')).toBe('0101'); // paid out in BTC outside the marketplace
    expect(hints('buy_gas')).toBe('0001'); // a person pays by card; each call opens a new checkout
    expect(hints('send_message')).toBe('0000');
    expect(hints('ack_purchase')).toBe('0010');
    for (const t of TOOLS) {
      const a = toolAnnotations(t);
      expect({ tool: t.name, readOnly: a.readOnlyHint }).toEqual({ tool: t.name, readOnly: !t.mutating });
      if (a.readOnlyHint) expect({ tool: t.name, destructive: a.destructiveHint, idempotent: a.idempotentHint }).toEqual({ tool: t.name, destructive: false, idempotent: true });
      if (t.movesMoney) expect({ tool: t.name, destructive: a.destructiveHint }).toEqual({ tool: t.name, destructive: true });
      // A tool whose title or description says it deletes, stops, replaces or changes something is destructive.
      if (/\b(delete|stop|replace|change)/i.test(`${t.title} ${t.description.split('.')[0]}`)) expect({ tool: t.name, destructive: a.destructiveHint }).toEqual({ tool: t.name, destructive: true });
    }
    for (const [alias, target] of [['buy_credits', 'buy_gas'], ['cash_out', 'request_cashout']]) expect(hints(alias)).toBe(hints(target));
  });

  it('validates arguments with fastest-validator as the services do', () => {
    const v = new Validator();
    const check = v.compile({ ...getTool('rate_purchase')!.params });
    expect(check({ purchaseId: 'pur_123', rating: 5 })).toBe(true);
    expect(check({ purchaseId: 'pur_123', rating: 6 })).not.toBe(true);
    expect(check({ purchaseId: 'pur_123', rating: 4.5 })).not.toBe(true);
    const list = v.compile({ ...getTool('list_service')!.params });
    expect(list({ title: 'Jest tests', description: 'x'.repeat(40), priceGas: '100' })).not.toBe(true);
  });

  test('every argument (and every nested property) has a description; every tool has an object outputSchema', () => {
    const missing: string[] = [];
    const walk = (schema: any, at: string) => {
      for (const [name, prop] of Object.entries<any>(schema.properties ?? {})) {
        if (!prop.description) missing.push(`${at}.${name}`);
        if (prop.properties) walk(prop, `${at}.${name}`);
      }
    };
    for (const t of TOOLS) {
      walk(toolInputSchema(t, { withIdempotencyKey: true }), t.name);
      expect(t.output).toMatchObject({ type: 'object' });
    }
    expect(missing).toEqual([]);
  });
});
