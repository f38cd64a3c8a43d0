/**
 * npm run help:examples [-- --postgres]: the acceptance walk of issue #36, as an agent would do it.
 * A whole marketplace starts in this process; a buyer and a seller register, the seller lists, the
 * buyer is credited gas and buys, the seller delivers. Then ask_help is asked 10 questions about that
 * purchase from each side and 5 that state a situation the account does not show; every answer is
 * printed with its length and the suggested call.
 */
export {};

// The testkit defines jest's describe variants at load; outside jest they are never called.
const g = globalThis as Record<string, unknown>;
g.describe ??= Object.assign(() => undefined, { skip: () => undefined });

const BUYER = [
  'What should I do now with my purchase?',
  'Where do I read what the seller sent me?',
  'How do I release the escrow to the seller?',
  'The delivery is not what the listing promised. What can I do?',
  'What happens if I never confirm?',
  'Can I still get a refund?',
  'How do I rate the seller?',
  'How do I ask the seller a question about the delivery?',
  'How much of my price does the seller get?',
  'Can I dispute this purchase?',
];
const SELLER = [
  'What should I do now with my order?',
  'When do I get paid for this sale?',
  'The buyer has not confirmed. Do I have to chase them?',
  'I attached the wrong file to my delivery. What now?',
  'How do I cash out what I earn from this sale?',
  'What do I end up with from this 250 gas sale after cashing out?',
  'Can I give the buyer their gas back?',
  'How do I message my buyer?',
  'Can I deliver again?',
  'How do I see my new orders?',
];
const UNSHOWN = [
  'My purchase pur_notmine0001 was disputed by the seller. What now?',
  "I'm the seller of an order that was refunded yesterday. Can I still deliver?",
  'I was refused buying a 900 gas listing though my wallet holds 3,000. My human set something up.',
  'The seller I hired never delivered, it has been 8 days.',
  'I confirmed the delivery but the seller says they were not paid.',
];

async function main(): Promise<void> {
  const { startTestApp } = await import('../test/kit');
  const { creditGas } = await import('../test/kit/ledger');
  const { LISTING } = await import('./help-setups');
  const app = await startTestApp({ postgres: process.argv.includes('--postgres') });
  try {
    const buyer = await app.api.register('Example Buyer');
    const seller = await app.api.register('Example Seller');
    const { listing } = await app.api.ok('list_service', LISTING, seller.apiKey);
    await creditGas(app, buyer.agent.id, 500);
    const { purchase } = await app.api.ok('purchase_service', { listingId: listing.id, maxPriceGas: LISTING.priceGas }, buyer.apiKey, { 'idempotency-key': 'examples-1' });
    await app.api.ok('deliver_work', { purchaseId: purchase.id, delivery: { summary: 'Added 14 Jest tests for parser.ts; coverage summary attached.' } }, seller.apiKey);
    console.log(`purchase ${purchase.id}: ${LISTING.priceGas} gas, delivered\n`);
    const lengths: number[] = [];
    for (const [who, key, questions] of [['buyer', buyer.apiKey, BUYER], ['seller', seller.apiKey, SELLER], ['buyer (situation not shown)', buyer.apiKey, UNSHOWN]] as const) {
      console.log(`## asked by the ${who}\n`);
      for (const question of questions) {
        const a = await app.api.ok('ask_help', { question }, key);
        lengths.push(a.answer.length);
        console.log(`Q: ${question}\nA (${a.answer.length} chars${a.declined ? ', declined' : ''}): ${a.answer}\nnextStep: ${a.nextStep ? JSON.stringify(a.nextStep) : 'null'}\n`);
      }
    }
    const sorted = [...lengths].sort((x, y) => x - y);
    console.log(`${lengths.length} answers; median ${sorted[Math.floor((sorted.length - 1) / 2)]} chars, longest ${sorted.at(-1)}`);
  } finally {
    await app.stop();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
