/**
 * ask_help's evaluation set: questions phrased the way agents ask (synonyms, indirect questions,
 * pasted error messages, questions outside the service), each with what a correct answer must
 * name. Written from the agent's side, not from the knowledge sections' wording: a question whose
 * words already match a section title teaches nothing. Scored by help-eval.test.ts.
 */
export interface EvalCase {
  q: string;
  /** Tool names a correct answer must mention (in its text or its next step). */
  tools?: string[];
  /** Facts (substrings, case-insensitive) a correct answer must contain. */
  facts?: string[];
  /** The answer must be "I don't know": nothing in the service's own knowledge covers it. */
  unknown?: true;
  kind: 'synonym' | 'indirect' | 'error' | 'unknown';
}

export const HELP_EVAL: EvalCase[] = [
  // ---- the three questions of issue #15 -------------------------------------------------------
  { kind: 'synonym', q: 'How much does the platform take when I sell something?', facts: ['10%'] },
  { kind: 'indirect', q: 'How long until the seller is paid if I forget to confirm?', facts: ['3 days', 'auto-release'] },
  { kind: 'indirect', q: 'What happens to my gas when I buy a service?', facts: ['escrow', 'held'] },

  // ---- money: fees, gas, cash-out ---------------------------------------------------------------
  { kind: 'synonym', q: "What's the commission on each sale?", facts: ['10%'] },
  { kind: 'synonym', q: 'What cut does the marketplace keep from my revenue?', facts: ['10%'] },
  { kind: 'synonym', q: 'Do I have to pay anything to publish an offer?', facts: ['free'] },
  { kind: 'synonym', q: 'How do I get my earnings out to a bitcoin wallet?', tools: ['connect_payouts', 'request_cashout'] },
  { kind: 'indirect', q: 'Can I turn the gas I earned into real money?', tools: ['request_cashout'], facts: ['btc'] },
  { kind: 'synonym', q: "What's the smallest amount I can withdraw?", facts: ['500 gas'] },
  { kind: 'synonym', q: 'How much is deducted when I withdraw my earnings?', facts: ['2%'] },
  { kind: 'synonym', q: 'How do I add funds to my account?', tools: ['buy_gas'], facts: ['checkoutUrl'] },
  { kind: 'indirect', q: 'My balance is zero, how am I supposed to pay for a service?', tools: ['buy_gas'] },
  { kind: 'indirect', q: 'Who enters the credit card details when I top up?', facts: ['human', 'checkoutUrl'] },
  { kind: 'synonym', q: 'What is one gas worth in dollars?', facts: ['100 gas = 1.00 USD'] },
  { kind: 'synonym', q: 'Which bundles of credits can I purchase and what do they cost?', facts: ['starter', 'builder', 'fleet'] },
  { kind: 'indirect', q: "Why can't I withdraw my whole balance?", facts: ['withdrawable', 'sale_earn'] },
  { kind: 'synonym', q: 'What does heldGas mean in my wallet?', facts: ['escrow'] },
  { kind: 'synonym', q: 'How do I check how much gas I have left?', tools: ['wallet'], facts: ['gasBalance'] },
  { kind: 'indirect', q: "I paid at the checkout page but my balance didn't change", tools: ['wallet'], facts: ['gasBalance'] },
  { kind: 'synonym', q: 'Are referral bonuses withdrawable?', facts: ['not withdrawable'] },
  { kind: 'indirect', q: 'I closed the tab with the payment page, how do I get the link again?', tools: ['get_checkout'] },

  // ---- buying ------------------------------------------------------------------------------------
  { kind: 'indirect', q: 'How can I find someone to write unit tests for me?', tools: ['search_services'] },
  { kind: 'synonym', q: 'Can I filter the offers by price range?', facts: ['minPriceGas', 'maxPriceGas'] },
  { kind: 'synonym', q: 'How do I sort results so the cheapest come first?', facts: ['price_asc'] },
  { kind: 'indirect', q: 'I bought something, what do I do now?', tools: ['get_purchase', 'confirm_delivery'] },
  { kind: 'synonym', q: 'How do I see what the seller handed over?', tools: ['get_delivery'] },
  { kind: 'synonym', q: 'How do I accept the work and pay the seller?', tools: ['confirm_delivery'] },
  { kind: 'synonym', q: 'Where can I see all my orders?', tools: ['list_orders'] },
  { kind: 'synonym', q: 'How can I tell whether a seller is legit?', facts: ['isSeed', 'salesCount'] },
  { kind: 'indirect', q: 'Will I be charged twice if my purchase request timed out and I send it again?', facts: ['Idempotency-Key'] },
  { kind: 'synonym', q: 'Can I set a maximum price so I never pay more than I expect?', facts: ['maxPriceGas'] },

  // ---- after the purchase: refunds, disputes, ratings, messages ---------------------------------
  { kind: 'indirect', q: 'I want my money back.', tools: ['request_refund'] },
  { kind: 'indirect', q: "It's been over a week and the seller still hasn't sent anything", tools: ['request_refund'] },
  { kind: 'indirect', q: "I'm unhappy with the result I received, can I get a refund?", tools: ['request_refund', 'dispute_purchase'] },
  { kind: 'synonym', q: 'How do I open a case against a seller who cheated me?', tools: ['dispute_purchase'], facts: ['operator'] },
  { kind: 'synonym', q: 'How do I leave a review for a seller?', tools: ['rate_purchase'] },
  { kind: 'synonym', q: 'Can I change my star rating later?', facts: ['7 days'] },
  { kind: 'synonym', q: 'How can I ask the seller a question about my order?', tools: ['send_message'] },
  { kind: 'synonym', q: 'Where do I read the replies the buyer sent me?', tools: ['list_messages'] },

  // ---- selling -----------------------------------------------------------------------------------
  { kind: 'synonym', q: 'How do I offer my skills to other agents?', tools: ['list_service'] },
  { kind: 'indirect', q: 'The quality check refused my offer, why?', facts: ['55', 'qualityReport'] },
  { kind: 'synonym', q: 'How can I temporarily take my listing offline?', tools: ['update_service'], facts: ['paused'] },
  { kind: 'synonym', q: 'How do I let the buyer know I have started working on it?', tools: ['ack_purchase'] },
  { kind: 'synonym', q: 'How do I hand over the finished work?', tools: ['deliver_work'], facts: ['summary'] },
  { kind: 'synonym', q: 'How many days do I have to ship an order?', facts: ['deliveryDays', '7'] },
  { kind: 'indirect', q: 'The buyer never confirmed; when do I get my money?', facts: ['3 days'] },
  { kind: 'synonym', q: 'When do sellers receive their payment?', facts: ['confirm', '3 days'] },
  { kind: 'synonym', q: 'What price should I ask for a code generation job?', facts: ['codegen'] },
  { kind: 'indirect', q: 'How do I find out whether anyone ordered my service?', tools: ['list_orders'] },

  // ---- account, setup, support -------------------------------------------------------------------
  { kind: 'synonym', q: 'I misplaced my credentials, can they be recovered?', tools: ['register'] },
  { kind: 'synonym', q: 'Where do I put my key in the HTTP request?', facts: ['Authorization: Bearer'] },
  { kind: 'synonym', q: 'How do I create an account?', tools: ['register'], facts: ['API key'] },
  { kind: 'synonym', q: 'How do I hook this up to Claude Desktop?', facts: ['/mcp', 'agent-market-mcp'] },
  { kind: 'synonym', q: 'Can I expose only the buyer tools to my MCP client?', facts: ['modules'] },
  { kind: 'synonym', q: 'How do I invite other agents and earn a reward?', facts: ['referredBy', '50 gas'] },
  { kind: 'synonym', q: 'How do I check which agent my key belongs to?', tools: ['whoami'] },
  { kind: 'synonym', q: 'Where do I file a defect I found?', tools: ['report_bug'] },
  { kind: 'synonym', q: 'How do I send feedback about how my purchase went?', tools: ['report_experience'] },

  // ---- pasted error messages ---------------------------------------------------------------------
  { kind: 'error', q: '{"ok":false,"error":{"code":"insufficient_gas","message":"Not enough gas: balance 100, required 600"}}', tools: ['buy_gas'], facts: ['starter'] },
  { kind: 'error', q: 'Error: 401 - invalid API key', facts: ['Authorization: Bearer'], tools: ['register'] },
  { kind: 'error', q: 'HTTP 429 Too Many Requests', facts: ['Retry-After'] },
  { kind: 'error', q: 'list_service failed: 422 score 40 below passScore 55', facts: ['qualityReport', 'hint'] },
  { kind: 'error', q: 'confirm_delivery -> 409 Conflict: purchase is awaiting_delivery', tools: ['get_purchase'] },
  { kind: 'error', q: 'Error 404: listing lst_8fK2 does not exist', tools: ['search_services'] },
  { kind: 'error', q: 'purchase_service returned 403: you cannot buy your own listing', facts: ['own listing'] },
  { kind: 'error', q: "unknown_tool: no tool named 'buy_service'", facts: ['validTools'] },
  { kind: 'error', q: 'invalid_arguments: priceGas must be greater than or equal to 10', facts: ['details.errors'] },
  { kind: 'error', q: 'Request failed with status code 503', facts: ['Idempotency-Key'] },
  { kind: 'error', q: 'HTTP 500 {"code":"internal","requestId":"req_9x"}', tools: ['report_bug'] },

  // ---- outside the service: must say "I don't know" ------------------------------------------------
  { kind: 'unknown', q: "What's the weather going to be like in Berlin?", unknown: true },
  { kind: 'unknown', q: 'Can you write me a poem about cats?', unknown: true },
  { kind: 'unknown', q: 'What is the capital of Australia?', unknown: true },
  { kind: 'unknown', q: 'How do I bake sourdough bread?', unknown: true },
  { kind: 'unknown', q: 'What is the current share price of NVIDIA?', unknown: true },
  { kind: 'unknown', q: 'How do I train a neural network in PyTorch?', unknown: true },
  { kind: 'unknown', q: 'Who won the chess olympiad last year?', unknown: true },
  { kind: 'unknown', q: 'How do I center a div in CSS?', unknown: true },
  { kind: 'unknown', q: 'Recommend a good pizza place nearby', unknown: true },
  { kind: 'unknown', q: 'How do I reset my password on GitHub?', unknown: true },
];
