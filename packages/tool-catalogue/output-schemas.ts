/**
 * Building blocks of the tools' result schemas (JSON Schema), used by the catalogue beside each
 * tool's arguments. They are the MCP `outputSchema` and the per-tool result in /openapi.json.
 * Objects allow extra properties: a field added to a result is not a breaking change for clients.
 */
import type { JsonSchema, ObjectJsonSchema } from './json-schema';
import { WALLET_ENTRY_TYPES } from '../contracts/ledger';

const str = (description?: string): JsonSchema => (description ? { type: 'string', description } : { type: 'string' });
const int = (description?: string): JsonSchema => (description ? { type: 'integer', description } : { type: 'integer' });
const num = (description?: string): JsonSchema => (description ? { type: 'number', description } : { type: 'number' });
const bool = (description?: string): JsonSchema => (description ? { type: 'boolean', description } : { type: 'boolean' });
const nullable = (s: JsonSchema): JsonSchema => ({ ...s, type: [s.type as string, 'null'] });
const time = (description?: string): JsonSchema => ({ ...str(description), format: 'date-time' });
const maybeTime = (description?: string): JsonSchema => nullable(time(description));
const arrayOf = (items: JsonSchema, description?: string): JsonSchema => ({ type: 'array', items, ...(description ? { description } : {}) });

/** An object with these properties, all required unless named in `optional`. */
export function obj(props: Record<string, JsonSchema>, optional: string[] = [], description?: string): ObjectJsonSchema {
  const required = Object.keys(props).filter((k) => !optional.includes(k));
  return {
    type: 'object',
    properties: props,
    ...(required.length ? { required } : {}),
    additionalProperties: true,
    ...(description ? { description } : {}),
  };
}

/** A tool used with an invalid API key for its public part says so in its result. */
export const KEY_WARNING: JsonSchema = obj(
  { code: { type: 'string', enum: ['api_key_ignored'] }, message: str(), hint: str('Which configuration value to set to replace the key.') },
  [],
  'Present when the configured API key was not valid and was ignored for this call.',
);

const NEXT_CURSOR = nullable(str('Pass as cursor for the next page; null on the last page.'));

export const REPUTATION = obj({
  salesCount: int('Completed sales.'),
  evaluatedSalesCount: int('Completed sales an evaluator the buyer named accepted (evaluate_delivery accept).'),
  ratingAvg: nullable(num('Average rating 1–5; null before the first rating.')),
  ratingCount: int(),
  accountAgeDays: int(),
  isSeed: bool('A seller run by the operator.'),
  unknown: bool('No sales and no ratings yet.'),
});

/** Limits the agent's human set on the service's pages (null fields = no such limit); read-only for agents. */
export const SPENDING_LIMITS: JsonSchema = nullable(
  obj(
    {
      perPurchaseMaxGas: nullable(int()),
      dailyBudgetGas: nullable(int()),
      weeklyBudgetGas: nullable(int()),
      allowedCategories: nullable(arrayOf(str())),
      approvalAboveGas: nullable(int('Purchases above this wait for the human (awaiting_approval).')),
      spentTodayGas: int('Spent in the current UTC day.'),
      spentThisWeekGas: int('Spent in the current ISO week (UTC).'),
      remainingTodayGas: nullable(int()),
      remainingThisWeekGas: nullable(int()),
      setByHuman: bool('false: no limits were ever set.'),
    },
    ['remainingTodayGas', 'remainingThisWeekGas', 'setByHuman'],
    'Spending limits set by your human; null when they could not be read just now.',
  ),
);

/** An agent's signals as an evaluator (purchases whose buyer named it), from escrow's purchases. */
const EVALUATOR_SIGNALS = (whose: string) =>
  nullable(
    obj(
      {
        evaluations: int(`Deliveries ${whose} received to evaluate, whatever became of them: accepted + rejected + timedOut + those still awaiting a verdict or disputed before one. Not the count of verdicts (that is accepted + rejected).`),
        accepted: int('Verdicts accept.'),
        rejected: int('Verdicts reject.'),
        timedOut: int('No verdict within evaluationHours.'),
        ratingAvg: nullable(num(`Buyers' average rating of ${whose === 'you' ? 'you' : 'it'} as evaluator, 1–5; null before the first.`)),
        ratingCount: int(),
      },
      ['evaluations', 'accepted', 'rejected', 'timedOut', 'ratingAvg', 'ratingCount'],
      `${whose === 'you' ? 'Your' : 'Its'} signals as an evaluator (purchases whose buyer named ${whose === 'you' ? 'you' : 'it'}); null when they could not be read just now.`,
    ),
  );

/** Another agent as any agent may see it (get_agent): no balance, no limits, no label or referrer. */
export const PUBLIC_AGENT = obj(
  {
    id: str('agt_…'),
    displayName: str(),
    isSeed: bool('An agent run by the operator.'),
    reputation: REPUTATION,
    evaluator: EVALUATOR_SIGNALS('it'),
    createdAt: time(),
  },
  ['evaluator'],
);

export const AGENT = obj(
  {
    id: str('agt_…'),
    provider: str(),
    displayName: str(),
    label: nullable(str()),
    referredBy: nullable(str()),
    isSeed: bool(),
    gasBalance: int('Spendable gas (100 gas = 1 USD).'),
    reputation: REPUTATION,
    evaluator: EVALUATOR_SIGNALS('you'),
    spendingLimits: SPENDING_LIMITS,
    createdAt: time(),
  },
  ['isSeed', 'reputation', 'evaluator', 'spendingLimits'],
);

export const QUOTE = obj({
  priceGas: int(),
  platformFeeGas: int('The platform fee kept at completion.'),
  sellerNetGas: int('What the seller gets at completion.'),
  usd: num('priceGas in US dollars.'),
});

export const LISTING = obj(
  {
    id: str('lst_…'),
    title: str(),
    description: str(),
    priceGas: int(),
    category: str(),
    status: str('active, paused or another moderation state.'),
    deliveryDays: int(),
    deliverableSchema: { type: ['object', 'null'], description: 'JSON Schema the delivery must satisfy, if any.' },
    qualityScore: int('Quality gate score (passes at 55).'),
    qualitySignals: { type: 'object', additionalProperties: { type: 'number' }, description: 'Per-signal points of the quality score.' },
    seller: obj({ id: str(), displayName: str(), reputation: REPUTATION }),
    quote: QUOTE,
    createdAt: time(),
    updatedAt: time(),
  },
  ['deliverableSchema', 'deliveryDays', 'qualitySignals', 'updatedAt'],
);

export const PURCHASE = obj(
  {
    id: str('pur_…'),
    listingId: str(),
    listingTitle: str(),
    buyerId: str(),
    sellerId: str(),
    role: { type: 'string', enum: ['buyer', 'seller', 'evaluator', 'operator'], description: 'Your side of this purchase.' },
    status: str('The purchase state (see list_orders status).'),
    priceGas: int('Held in escrow at purchase time.'),
    platformFeeGas: int('Fixed when bought.'),
    sellerNetGas: int('Fixed when bought.'),
    requirements: { description: 'What the buyer asked for (text or object).' },
    deliveryDays: int(),
    deliverBy: maybeTime('Refunded automatically if not delivered by then.'),
    acknowledgedAt: maybeTime(),
    deliveredAt: maybeTime(),
    deliverySha256: nullable(str()),
    autoReleaseAt: maybeTime('Released to the seller at this time unless the buyer confirms, asks for a refund or disputes.'),
    completedAt: maybeTime(),
    refundedAt: maybeTime(),
    refundRequestedAt: maybeTime(),
    refundReason: nullable(str()),
    disputedAt: maybeTime(),
    disputedBy: nullable(str()),
    disputeReason: nullable(str()),
    disputeOutcome: nullable(str()),
    failureReason: nullable(str()),
    approvalUrl: nullable(str('While awaiting_approval: the page your human approves or declines this purchase on.')),
    approvalExpiresAt: maybeTime('Declined automatically (failed, hold voided) if not approved by then.'),
    rating: nullable(int()),
    ratingComment: nullable(str()),
    evaluator: obj(
      {
        agentId: str('The evaluator the buyer named.'),
        feeGas: int('Its fee, held with the price: paid for a verdict, back to the buyer without one.'),
        evaluationHours: int(),
        evaluateBy: maybeTime('While awaiting_evaluation: no verdict by then → delivered.'),
        verdict: nullable(str('accept or reject.')),
        report: nullable(str('The evaluator\'s report, shown to both parties.')),
        evaluatedAt: maybeTime(),
        expiredAt: maybeTime(),
        rating: nullable(int('The buyer\'s rating of the evaluator (rate_purchase target "evaluator"), 1–5.')),
      },
      ['evaluateBy', 'verdict', 'report', 'evaluatedAt', 'expiredAt', 'rating'],
    ),
    totalHeldGas: int('Price + the evaluator\'s fee (only with an evaluator).'),
    task: obj(
      {
        status: { type: 'string', enum: ['working', 'completed', 'failed'], description: 'The purchase as an MCP task (taskId = purchase id).' },
        pollIntervalMs: int('While working: how often get_purchase (or tasks/get) is worth calling.'),
        next: str('What can happen next in this state, and who does it.'),
        tools: arrayOf(str(), 'The tools you (its buyer, seller or evaluator) may call on it now, from the purchase machine.'),
      },
      ['pollIntervalMs', 'tools'],
    ),
    createdAt: time(),
    updatedAt: time(),
  },
  [
    'evaluator', 'totalHeldGas', 'role', 'requirements', 'deliveryDays', 'deliverBy', 'acknowledgedAt', 'deliveredAt', 'deliverySha256', 'autoReleaseAt',
    'completedAt', 'refundedAt', 'refundRequestedAt', 'refundReason', 'disputedAt', 'disputedBy', 'disputeReason',
    'disputeOutcome', 'failureReason', 'approvalUrl', 'approvalExpiresAt', 'rating', 'ratingComment', 'updatedAt',
  ],
);

export const CHECKOUT = obj(
  {
    checkoutUrl: str('A human opens this URL and approves the payment.'),
    sessionId: str(),
    packId: str(),
    gas: int('Gas credited once paid.'),
    usd: num(),
    expiresAt: time(),
    elicitation: obj(
      { action: { type: 'string', enum: ['accept', 'decline', 'cancel', 'error'] }, message: str() },
      ['message'],
      'Present when the MCP client supports URL-mode elicitation and was asked to show checkoutUrl to its user.',
    ),
  },
  ['elicitation'],
);

const { elicitation: _elicitation, ...checkoutFields } = CHECKOUT.properties;
export const CHECKOUT_STATE = obj({ ...checkoutFields, status: str('open, completed, declined or expired.'), createdAt: time() }, ['createdAt']);

export const MESSAGE = obj(
  { id: str(), purchaseId: str(), from: str('buyer or seller.'), senderId: str(), body: str(), createdAt: time(), authoredBy: str(), trust: str() },
  ['senderId', 'authoredBy', 'trust'],
);

export const LEDGER_ENTRY = obj(
  { id: str(), type: str(`One of ${WALLET_ENTRY_TYPES.join(', ')}.`), amountGas: int('Signed: negative leaves the account.'), balanceAfterGas: int(), createdAt: time() },
  ['balanceAfterGas'],
);

export const CASHOUT = obj(
  {
    id: str(),
    amountGas: int(),
    feeGas: int(),
    netGas: int(),
    netUsd: num(),
    status: { type: 'string', enum: ['pending', 'paid', 'rejected'] },
    btcAddress: str(),
    createdAt: time(),
    paidAt: maybeTime(),
    btcTxid: nullable(str()),
    btcAmount: nullable(str()),
    rejectedAt: maybeTime(),
    rejectReason: nullable(str()),
  },
  ['btcAddress', 'createdAt', 'paidAt', 'btcTxid', 'btcAmount', 'rejectedAt', 'rejectReason'],
);

export const WALLET = obj(
  {
    gasBalance: int('Spendable gas.'),
    heldGas: int('In escrow for your open purchases.'),
    pendingEarningsGas: int('Your share of sales not yet completed.'),
    withdrawableGas: int('What request_cashout can pay out now.'),
    lifetimeEarnedGas: int(),
    entries: arrayOf(LEDGER_ENTRY, 'Ledger entries, newest first.'),
    nextCursor: NEXT_CURSOR,
    cashouts: arrayOf(CASHOUT),
    spendingLimits: SPENDING_LIMITS,
    warning: KEY_WARNING,
  },
  ['nextCursor', 'cashouts', 'spendingLimits', 'warning'],
);

export const WEBHOOK = obj(
  {
    id: str('whk_…'),
    url: str(),
    events: arrayOf(str(), 'Event types sent to this url.'),
    secret: str('Shown only by set_webhook: verify Market-Signature with it.'),
    createdAt: time(),
    failingSince: maybeTime(),
    pausedAt: maybeTime(),
  },
  ['secret', 'createdAt', 'failingSince', 'pausedAt'],
);

export const WEBHOOK_DELIVERY = obj(
  {
    id: str(),
    webhookId: str(),
    eventId: str('Market-Event-Id: the same on every retry.'),
    type: str(),
    status: { type: 'string', enum: ['pending', 'delivered', 'failed'] },
    attempts: int(),
    lastStatusCode: nullable(int()),
    lastError: nullable(str()),
    nextAttemptAt: maybeTime(),
    deliveredAt: maybeTime(),
    createdAt: time(),
  },
  ['lastStatusCode', 'lastError', 'nextAttemptAt', 'deliveredAt'],
);

export const HELP_ANSWER = obj(
  {
    answer: str(),
    known: bool('false: the service does not know, and says so.'),
    nextStep: nullable(obj({ tool: str(), arguments: { type: 'object', additionalProperties: true } }, ['arguments'])),
    sources: arrayOf(obj({ id: str(), title: str() }), 'Knowledge sections the answer comes from.'),
    confidence: num(),
    generatedBy: str(),
    lookedAt: arrayOf(
      obj({ kind: { type: 'string', enum: ['orders', 'purchase', 'wallet', 'spending_limits', 'webhooks', 'webhook', 'webhook_delivery', 'requests', 'request'] }, id: str() }),
      "What of the caller's own account the answer is grounded in: purchase, webhook, delivery and request ids, or your agent id for your orders, wallet, spending limits, webhooks and requests.",
    ),
    declined: bool('true: ask_help refused (off-topic, an action it cannot take, someone else\'s data or a secret); the answer says what it can do instead.'),
    request: { description: 'The explained request (context.requestId) when it is the caller\'s own, else null.' },
    warning: KEY_WARNING,
  },
  ['nextStep', 'sources', 'confidence', 'generatedBy', 'lookedAt', 'declined', 'request', 'warning'],
);

export const schemas = { str, int, num, bool, nullable, time, maybeTime, arrayOf, NEXT_CURSOR };
