/**
 * ask_help's vocabulary as data (issue #36): how agents say things the documentation says otherwise.
 * Phrases are matched on word boundaries in the lower-cased question; nothing here is a regex, a
 * question or an answer. States and tools are named by the machine and the catalogue — these tables
 * only map paraphrases onto them.
 */

/** An asker's phrase → the documentation's words (added to the search query). */
export const SYNONYMS: Record<string, string> = {
  withdraw: 'cashout request_cashout',
  'paid out': 'cashout request_cashout',
  'pay out': 'cashout request_cashout',
  payout: 'cashout request_cashout',
  bitcoin: 'cashout btc',
  'cash out': 'cashout request_cashout',
  'cashing out': 'cashout request_cashout',
  liquidate: 'cashout',
  'my earnings': 'cashout earnings sale_earn',
  'btc address': 'connect_payouts',
  'top up': 'gas buy_gas',
  'link expired': 'buy_gas start gas purchase checkouturl',
  'checkout expired': 'buy_gas start gas purchase checkouturl',
  credits: 'gas buy_gas',
  'more gas': 'gas buy_gas',
  'get gas': 'gas buy_gas',
  'buy gas': 'buy_gas',
  'add funds': 'gas buy_gas',
  'checkout link': 'get_checkout checkouturl',
  'checkout url': 'get_checkout checkouturl',
  'payment link': 'get_checkout checkouturl',
  'api key': 'register key',
  'sign up': 'register',
  signup: 'register',
  'new key': 'register',
  'put up for sale': 'list_service listing',
  'offer my': 'list_service listing',
  'sell my': 'list_service listing',
  publish: 'list_service listing',
  'create a listing': 'list_service',
  'edit my listing': 'update_service',
  'change my listing': 'update_service',
  'change the price': 'update_service pricegas',
  pause: 'update_service paused',
  browse: 'search_services',
  find: 'search_services',
  'look for': 'search_services',
  hire: 'purchase_service search_services',
  'buy a service': 'purchase_service escrow held',
  'buy a listing': 'purchase_service escrow held',
  'when i buy': 'purchase_service escrow held',
  'back out': 'refund request_refund',
  'way out': 'refund request_refund',
  'get out of': 'refund request_refund',
  'pull out': 'refund request_refund',
  'bow out': 'refund request_refund',
  'opt out': 'refund request_refund',
  'no capacity': 'refund request_refund',
  cancel: 'refund request_refund',
  "can't do": 'refund request_refund',
  'cannot do': 'refund request_refund',
  'unable to': 'refund request_refund',
  'money back': 'refund request_refund',
  'gas back': 'refund request_refund',
  'never delivered': 'refund request_refund not delivered',
  "hasn't delivered": 'refund request_refund not delivered',
  'work is done': 'deliver_work deliver',
  'finished the work': 'deliver_work deliver',
  'hand over': 'deliver_work deliver',
  'hand in': 'deliver_work deliver',
  submit: 'deliver_work deliver',
  'send the work': 'deliver_work deliver',
  'send the result': 'deliver_work deliver',
  'tell the buyer': 'deliver_work send_message',
  'i started': 'ack_purchase acknowledge',
  'working on it': 'ack_purchase acknowledge',
  acknowledge: 'ack_purchase',
  'read the delivery': 'get_delivery',
  'they sent': 'get_delivery delivery',
  'sent me': 'get_delivery delivery',
  safe: 'escrow held',
  'see the delivery': 'get_delivery',
  'what the seller sent': 'get_delivery',
  'seller delivered': 'get_delivery delivery',
  'what was delivered': 'get_delivery delivery',
  'review the delivery': 'get_delivery delivery',
  'review it': 'get_delivery delivery',
  'ask the buyer': 'send_message message',
  'ask the seller': 'send_message message',
  'more details': 'send_message message',
  'message the': 'send_message message',
  'release the': 'confirm_delivery release escrow',
  'release escrow': 'confirm_delivery release escrow',
  'new sales': 'list_orders orders seller',
  'new orders': 'list_orders orders seller',
  'see orders': 'list_orders orders',
  'my orders': 'list_orders orders',
  balance: 'wallet gasbalance',
  'how much is': 'gas usd',
  'how much gas': 'wallet gasbalance',
  promised: 'dispute misrepresentation refund',
  'half the': 'dispute misrepresentation refund',
  missing: 'dispute misrepresentation refund',
  'read it': 'list_messages',
  'read the message': 'list_messages',
  'finished the': 'deliver_work deliver',
  bump: 'update_service pricegas',
  'requirements for a listing': 'listing quality passscore title description minimum moderation',
  'to be accepted': 'listing quality passscore moderation',
  raise: 'update_service pricegas',
  'afford': 'buy_gas pack starter',
  'release payment': 'confirm_delivery release escrow',
  accept: 'confirm_delivery',
  approve: 'confirm_delivery',
  'happy with': 'confirm_delivery',
  'get paid': 'confirm_delivery sale_earn paid',
  'paid yet': 'confirm_delivery auto-release sale_earn',
  'forget to confirm': 'auto-release auto-releases days confirm_delivery',
  'never confirm': 'auto-release auto-releases days confirm_delivery',
  "don't confirm": 'auto-release auto-releases days confirm_delivery',
  'how long': 'days hours',
  'leave a review': 'rate_purchase rating',
  'rate the seller': 'rate_purchase rating',
  'for sale': 'list_service listing',
  stars: 'rate_purchase rating',
  'leave feedback': 'rate_purchase rating',
  complain: 'dispute dispute_purchase',
  complaint: 'dispute dispute_purchase',
  scam: 'dispute dispute_purchase misrepresentation',
  'not what': 'dispute misrepresentation refund',
  contact: 'send_message message',
  'talk to': 'send_message message',
  'reach the': 'send_message message',
  ask: 'send_message',
  notified: 'webhook set_webhook',
  notify: 'webhook set_webhook',
  callback: 'webhook set_webhook',
  'instead of polling': 'webhook set_webhook',
  budget: 'spending limits',
  allowance: 'spending limits',
  'set something up': 'spending limits',
  'my owner': 'spending limits human owner',
  cap: 'limit',
  'refused buying': 'spending limits forbidden',
  invite: 'referral referredby',
  'referral bonus': 'referral bonus',
  commission: 'fee platform',
  cut: 'fee platform',
  'end up with': 'fee cashout net',
  keep: 'fee seller net',
  'retry safely': 'idempotency',
  'buy twice': 'idempotency',
  'charged twice': 'idempotency',
  claude: 'mcp',
  cursor: 'mcp',
  'tool list': 'mcp tools modules',
  bug: 'report_bug',
  crash: 'report_bug internal',
};

/** What the asker says of its own side of a purchase: phrase → side. */
export const SIDE_PHRASES: Record<string, 'buyer' | 'seller'> = {
  'my listing': 'seller',
  'my listings': 'seller',
  'my buyer': 'seller',
  'the buyer': 'seller',
  'a buyer': 'seller',
  'my customer': 'seller',
  'i sold': 'seller',
  'i sell': 'seller',
  'as a seller': 'seller',
  'new seller': 'seller',
  "i'm a seller": 'seller',
  'i am a seller': 'seller',
  'seller here': 'seller',
  'seller side': 'seller',
  'seller agent': 'seller',
  'buyer here': 'buyer',
  'buyer side': 'buyer',
  'as the seller': 'seller',
  "i'm the seller": 'seller',
  'i am the seller': 'seller',
  'i received an order': 'seller',
  'got an order': 'seller',
  'new order': 'seller',
  'new orders': 'seller',
  'new sales': 'seller',
  'my sale': 'seller',
  'i delivered': 'seller',
  'i finished': 'seller',
  'i shipped': 'seller',
  'i deliver': 'seller',
  'my earnings': 'seller',
  'i bought': 'buyer',
  'i confirmed': 'buyer',
  'i never confirmed': 'buyer',
  "i haven't confirmed": 'buyer',
  'i purchased': 'buyer',
  'i ordered': 'buyer',
  'i paid': 'buyer',
  'i hired': 'buyer',
  'my seller': 'buyer',
  'the seller': 'buyer',
  'a seller': 'buyer',
  'seller i hired': 'buyer',
  'as a buyer': 'buyer',
  'as the buyer': 'buyer',
  // (The asker naming itself outweighs "a buyer" read as the other party.)
  "i'm a buyer": 'buyer',
  'i am a buyer': 'buyer',
  'im a buyer': 'buyer',
  'im the buyer': 'buyer',
  'im a seller': 'seller',
  'im the seller': 'seller',
  "i'm the buyer": 'buyer',
  'i am the buyer': 'buyer',
  'my purchase': 'buyer',
  'i want to buy': 'buyer',
  'i paid for': 'buyer',
  'paid for a listing': 'buyer',
  'paid for a service': 'buyer',
};

/** Paraphrases of a purchase's state as the asker tells it (the state names themselves are matched from the machine). */
export const STATE_PHRASES: Record<string, string> = {
  'never delivered': 'awaiting_delivery',
  'nothing delivered': 'awaiting_delivery',
  'nothing was delivered': 'awaiting_delivery',
  'nothing has been delivered': 'awaiting_delivery',
  'before delivering': 'awaiting_delivery',
  'before delivery': 'awaiting_delivery',
  'before they deliver': 'awaiting_delivery',
  "hasn't delivered yet": 'awaiting_delivery',
  "hasn't done anything": 'awaiting_delivery',
  "hasn't delivered anything": 'awaiting_delivery',
  'not delivered yet': 'awaiting_delivery',
  "haven't delivered": 'awaiting_delivery',
  'have not delivered': 'awaiting_delivery',
  "hasn't delivered": 'awaiting_delivery',
  'has not delivered': 'awaiting_delivery',
  'not delivered': 'awaiting_delivery',
  'no delivery': 'awaiting_delivery',
  'still waiting': 'awaiting_delivery',
  'nothing arrived': 'awaiting_delivery',
  "nothing's arrived": 'awaiting_delivery',
  'nothing has arrived': 'awaiting_delivery',
  "hasn't arrived": 'awaiting_delivery',
  'not arrived': 'awaiting_delivery',
  "didn't arrive": 'awaiting_delivery',
  'no delivery yet': 'awaiting_delivery',
  "haven't received anything": 'awaiting_delivery',
  'nothing received': 'awaiting_delivery',
  'buyer has paid': 'awaiting_delivery',
  'buyer paid': 'awaiting_delivery',
  'has paid for it': 'awaiting_delivery',
  'want to deliver': 'awaiting_delivery',
  'ready to deliver': 'awaiting_delivery',
  'seller delivered': 'delivered',
  'was delivered': 'delivered',
  'got the delivery': 'delivered',
  'received the delivery': 'delivered',
  'i delivered': 'delivered',
  'i confirmed': 'completed',
  'hit confirm': 'completed',
  'buyer confirmed': 'completed',
  'they confirmed': 'completed',
  'confirmed my': 'completed',
  'after confirming': 'completed',
  'after i confirmed': 'completed',
  'after i confirm': 'completed',
  'after confirmation': 'completed',
  'once confirmed': 'completed',
  'already confirmed': 'completed',
  'it completed': 'completed',
  'is completed': 'completed',
  'opened a dispute': 'disputed',
  'in dispute': 'disputed',
  'was refunded': 'refunded',
};

/** Words that by themselves say a question is about this marketplace (besides tool names, ids and error codes). */
export const DOMAIN_WORDS = [
  'anchor', 'anchor price', 'anchor prices', 'premium band', 'price band', 'band', 'referredby',
  'categories', 'category', 'gas', 'escrow', 'listing', 'listings', 'seller', 'sellers', 'buyer', 'buyers', 'purchase', 'purchases', 'marketplace', 'market',
  'delivery', 'deliver', 'delivered', 'dispute', 'disputed', 'refund', 'refunded', 'cashout', 'cash out', 'cash-out', 'payout',
  'webhook', 'webhooks', 'mcp', 'api key', 'wallet', 'checkout', 'agent', 'agents', 'referral', 'referred', 'referrer', 'ledger',
  'order', 'orders', 'sale', 'sales', 'earnings', 'platform fee', 'platform', 'spending limit', 'approval', 'approve', 'approved', 'idempotency',
  'requestid', 'ask_help', 'quality score', 'moderation', 'rating', 'sandbox', 'tool', 'tools',
];

/** Weaker words: about this marketplace unless the question is plainly about something else (OFF_TOPIC_WORDS). */
export const WEAK_DOMAIN_WORDS = ['receive', 'received', 'earn', 'earned', 'earnings', 'sale', 'sales', 'order', 'orders', 'wallet', 'api', 'usd', 'title', 'desc', 'description', 'list', 'docs', 'doc', 'documentation', 'machine readable', 'schema', 'endpoint', 'endpoints', 'buy', 'sell', 'bought', 'sold', 'price', 'pay', 'paid', 'money', 'card', 'fee', 'fees', 'key', 'account', 'balance', 'message', 'limit', 'budget', 'service', 'services', 'hire', 'register', 'error', 'bug', 'withdraw', 'credits', 'job', 'work', 'bitcoin', 'btc', 'back', 'module', 'modules'];

/** Words that say a question is about something else, when it names nothing of the marketplace strongly. */
export const OFF_TOPIC_WORDS = [
  'cover letter', 'resume', 'job application', 'write an email', 'write me an email', 'email to my', 'blog post', 'tweet',
  'weather', 'poem', 'recipe', 'capital of', 'homework', 'translate', 'joke', 'movie', 'football', 'election', 'president', 'stock', 'stocks',
  'essay', 'song', 'lyrics', 'history of', 'diet', 'medical', 'lawyer', 'horoscope', 'dating', 'girlfriend', 'boyfriend', 'novel', 'chess',
  'sort an array', 'regex for', 'python script', 'my code', 'kubernetes', 'linux', 'tax return', 'bitcoin price', 'eth price', 'crypto',
];


/** Tasks that are not about this marketplace whatever else the question names (declined as off-topic). */
/** Said outright: the question is not about the marketplace, whatever it names. */
export const UNRELATED_MARKERS = ['unrelated but', 'unrelated, but', 'off topic but', 'off-topic but', 'off topic, but', 'off-topic, but', 'not marketplace related', 'not related to the marketplace', 'ignore the marketplace', 'not a marketplace thing', 'not a marketplace question', 'unrelated to the market', 'nothing to do with the marketplace', 'nothing to do with marketplace', 'nothing to do w/ marketplace', 'nothing to do w/ the marketplace', 'not about the marketplace', 'off topic', 'off-topic'];
/** Kinds of unrelated work (and markers): declined when asked for, or when the question names nothing of the marketplace — a delivery may be a blog post. */
export const UNRELATED_TASKS = ['unrelated but', 'unrelated, but', 'off topic but', 'off-topic but', 'off topic, but', 'off-topic, but', 'not marketplace related', 'not related to the marketplace', 'ignore the marketplace', 'python lib', 'useeffect', 'not a marketplace thing', 'not a marketplace question', 'unrelated to the market', 'nothing to do with the marketplace', 'off topic', 'off-topic', 'haiku', 'my build fails', 'ts build', 'type instantiation', 'cover letter', 'write an email', 'write me an email', 'email to my boss', 'job application', 'my resume', 'my cv', 'blog post', 'wedding speech'];

/** Words that place a service in a listing category (a price question is answered with that category's anchor). */
export const CATEGORY_WORDS: Record<string, string> = {
  codegen: 'codegen', code: 'codegen', tests: 'codegen', 'unit tests': 'codegen', refactor: 'codegen', 'code review': 'codegen', 'code-review': 'codegen', typescript: 'codegen', python: 'codegen', rust: 'codegen', lint: 'codegen', 'lint-fix': 'codegen', bugfix: 'codegen', port: 'codegen',
  research: 'research', report: 'research', analysis: 'research', 'literature': 'research', survey: 'research', summary: 'research', citations: 'research',
  ops: 'ops', docker: 'ops', dockerfile: 'ops', deploy: 'ops', deployment: 'ops', ci: 'ops', kubernetes: 'ops', infra: 'ops', terraform: 'ops', monitoring: 'ops', hardening: 'ops',
  design: 'design', logo: 'design', ui: 'design', figma: 'design', icon: 'design', branding: 'design', mockup: 'design',
  data: 'data', csv: 'data', dataset: 'data', dedupe: 'data', etl: 'data', spreadsheet: 'data', sql: 'data', postgres: 'data', database: 'data', mysql: 'data', cleanup: 'data', 'data-cleaning': 'data', scraping: 'data',
  general: 'general',
};

/** What a question says, as ask_help's compose step reads it: each row a kind of statement and its phrases. */
export const ASKS = {
  /** Words that point at one purchase of the asker's (then it is the subject, whatever else the question names). */
  thisPurchase: ['my order', 'this order', 'the order', 'my purchase', 'this purchase', 'this sale', 'my sale', 'this job'],
  /** Words that say the asker reports a fault of the service (then, and only then, report_bug may lead). */
  fault: ['bug', 'crash', 'broken', 'internal', 'server error', '500', 'charged twice', 'wrong balance', 'disappeared', 'lost my gas', 'glitch'],
  /** A list is asked: the answer may be longer. */
  /** The rules of something asked for as such (not one figure of them). */
  rules: ['rules', 'requirements', 'conditions', 'spell out', 'what counts', 'can block', 'could block', 'anything that', 'what stops', 'what can stop'],
  /** An amount said as a ceiling ("at most $15", "a budget of 3000"), not a need. */
  budget: ['budget', 'at most', 'up to', 'no more than', 'max of', 'maximum of', 'can spend', 'allowed to spend', 'limit of', 'cap of', 'not more than', 'limited my spending', 'spending to'],
  list: ['list all', 'list of', 'all the', 'every', 'which tools', 'what tools', 'step by step', 'walk me through', 'overview'],
  /** Words that ask for the state's next step (then, and only then, the machine's progress decides the lead). */
  next: ['what now', 'what next', "what's next", 'next step', 'stuck', 'what do i do', 'what should i do', 'what can i do', 'nothing happened', 'nothing has happened', 'waiting'],
  /** Words that ask what to do (the lead is a call); otherwise the question asks what something is (the lead is the rule). */
  action: ['how do i', 'how can i', 'how to', 'how should i', 'what should i', 'what do i do', 'what can i do', 'next step', 'what now', 'where do i', 'where can i', 'can i', 'should i', 'i want to', 'i need to', 'help', 'what next', 'anything else', 'fix', 'check', 'show me', 'where is', 'where are', 'want to', 'trying to'],
  /** The asker sells (no purchase says which side). */
  seller: ['sales', 'sold', 'orders came', 'new orders'],
  /** The key is lost, not misplaced in the call. */
  lostKey: ['lost', 'forgot'],
  /** The buyer says it read or tested the work already. */
  readAlready: ['exactly what i asked for', 'what i asked for', 'pulled it', 'downloaded it', 'exactly what i needed', 'is great', 'looks great', 'tested', 'ran the', 'ran them', 'green', 'passed', 'already read it', "i've read it", 'i have read it', 'i read it and', "it's perfect", 'checked it', 'looks good', 'passes', 'they pass', 'tests pass', 'it works', 'works fine', 'reviewed'],
  /** Every way forward is asked, not one call (the purchase's options answer: each call this side may make, and the timer). */
  options: ['my options', 'what options', 'which options', 'options do i have', 'my choices', 'what choices', 'alternatives', 'what can i actually do', 'what are my moves'],
  /** What a state means is asked. */
  stateMeaning: ['mean', 'what does', 'why', 'is my gas gone', 'what happened', "what's that", 'what is that', "what's this", 'what is this'],
  /** What a situation does to the asker ("will it hurt me?"). */
  consequence: ['hurt me', 'hurt my', 'affect me', 'affect my', 'count against', 'penalty', 'penalised', 'penalized', 'punished', 'consequences', 'bad for me', 'my reputation', 'my record', 'ban me', 'get banned'],
  /** How to do it is asked (the call leads, figures follow). */
  howTo: ['how do i', 'how can i', 'how to', 'what do i need to do', 'what should i do', 'steps', "what's the call", 'what is the call', 'which call'],
  /** What happens if nobody acts, or when the timer runs out, is asked (the purchase's timer answers first). */
  idle: ['on its own', 'by itself', 'never deliver', 'never delivers', 'never confirm', 'never confirms', 'never respond', 'never responds', 'never answers', 'never answer', 'never reply', 'never replies', 'how long until', 'how long till', 'how long til', 'if i never confirm', "if i don't confirm", 'if i do not confirm', 'if i do nothing', "if i don't do anything", 'if i do not do anything', 'if nobody does anything', 'if i just wait', 'if i ignore it', 'if i just leave it', 'if i leave it', 'does nothing', 'do nothing', "doesn't do anything", 'does not do anything', 'never does anything', 'if they ignore it', 'ignores it'],
  /** A deadline is asked besides what to do (the purchase's timer follows the lead). */
  deadline: ['how long do i have', 'how long does the seller have', 'how long does the seller get', 'how long does the buyer have', 'how long does the buyer get', 'how much time', 'time limit', 'deadline'],
  /** Gas arriving or being bought (an open checkout answers it first). */
  gasArrival: ['checkout', 'paid', 'pay', 'gas', 'pack', 'card', 'approve', 'approved', 'balance', 'wallet', 'credited', 'arrived', 'top up'],
  /** A cash-out is asked about (the act; its payout and BTC are `payout`). */
  cashout: ['cash out', 'cash-out', 'cashout', 'cash-outs', 'cashouts', 'cashing out', 'cashed out', 'cashed it out', 'cash that out', 'cash the', 'cash it', 'withdraw', 'withdrawal', 'withdrawals', 'request_cashout'],
  payout: ['payout', 'payouts', 'btc', 'bitcoin'],
  /** "Withdraw" said of something else than gas. */
  notCashout: ['withdraw the dispute', 'withdraw my dispute', 'withdraw a dispute', 'withdraw the refund', 'withdraw my refund', 'withdraw the complaint', 'withdraw the listing', 'withdraw my listing'],
  /** The asker has not registered yet. */
  notRegistered: ['not registered', "haven't registered", 'have not registered', 'before i register', 'not signed up'],
};

/** Payout methods the marketplace does not have (cash-out is BTC only). */
export const OTHER_PAYOUTS = ['paypal', 'bank account', 'bank transfer', 'wire', 'venmo', 'stripe', 'fiat', 'usdt', 'usdc', 'eth', 'ethereum', 'credit card', 'debit card'];

/** Chat shorthand written out, so phrases match ("pls" → "please", "b4" → "before"). */
export const SHORTHAND: Record<string, string> = { pls: 'please', plz: 'please', b4: 'before', u: 'you', ur: 'your', thx: 'thanks', cant: "can't", wont: "won't", im: "i'm", whats: "what's" };
// Contractions written without the apostrophe ("hasnt", "didnt").
for (const v of ['has', 'have', 'is', 'was', 'did', 'does', 'do', 'were', 'are', 'could', 'would', 'should']) SHORTHAND[`${v}nt`] = `${v}n't`;

/** Counts written as words ("two of my listings", "four have bought"); "one" stays a word ("one pack"). */
export const NUMBER_WORDS: Record<string, string> = { two: '2', three: '3', four: '4', five: '5', six: '6', seven: '7', eight: '8', nine: '9', ten: '10', eleven: '11', twelve: '12' };

/** The question buys something besides gas ("sell … AND buy some data cleaning"). */
export const BUYS_A_SERVICE = /\b(?:buy|buying|purchase|hire|hiring)\b (?!(?:some |any |more |the |a |my )?(?:gas|packs?|credits?)\b)/;
/** The asker means to sell or list ("I'll only be selling …") … */
export const SELLS = /\b(?:sell(?:ing|er)?|list(?:ing)?)\b/;
/** … and asks whether gas is needed ("must I buy gas before anything?"): listing needs none. */
export const NEEDS_GAS = /\b(?:have to|need to|must i|do i need|need any|needed|required?)\b[^.?!]*\bgas\b|\bgas\b[^.?!]*\b(?:first|before|needed|required)\b/;

/** Words that say what unit or form the answer takes ("in dollars", "per week"), not what the question is about: they count half in picking an intent. */
export const MODIFIER_WORDS = ['usd', 'dollar', 'dollars', 'in', 'per', 'cents', 'exactly', 'total', 'roughly'];

/** Words any question uses ("how much", "what now", "then what happens"): a question made only of them names nothing outside this marketplace. */
export const QUESTION_WORDS = new Set('much many long next now then still again here there ever really exactly okay thing things stuff happen happens happened going doing need want like know think help please thanks thank does mean meant supposed right wrong sure time soon'.split(' '));

/** Words too common to search on. */
export const STOP = new Set('a an the i me my we you your it its is are was were be been do does did to of in on at for from with and or but if then so how what why when where which who can could should would will shall not no this that there here have has had get got am as by up out about into any some just'.split(' '));

/** Words too common in the documentation to say which sentence answers. */
export const COMMON = new Set(['the', 'and', 'for', 'you', 'your', 'how', 'what', 'can', 'does', 'with', 'this', 'that', 'are', 'was', 'not', 'get', 'whats', 'when', 'why', 'who', 'which', 'there', 'have', 'from', 'will', 'should', 'would', 'could', 'about', 'any', 'call', 'tool', 'use', 'want', 'need', 'here']);

/** Words that make a question about a purchase (besides ids, states and the machine's tools). */
export const PURCHASE_WORDS = ['purchase', 'order', 'sale', 'this sale', 'delivery', 'deliver', 'delivered', 'seller', 'buyer', 'escrow', 'refund', 'dispute', 'bought', 'sold', 'job', 'work', 'paid', 'my gas', 'my money', 'my payment', 'get paid', 'been paid'];
