/**
 * What a question asks ask_help to do, read as intents (issue #26, round 3). ask_help answers
 * questions about this marketplace; it declines when the question asks for something it must not do,
 * whatever the words: each decline intent is a few feature groups (what is asked for, who would act,
 * whose it is, by what means, to what end), each with a score, and the question is declined for the
 * intent whose features add up to at least 1. Counter-features lower a score: a "how do I …" about
 * one's own tools, a speaker describing their own purchase, delivery or listing ("the delivery was a
 * poem"), text quoted from a delivery. Fixed phrasings seen before are one feature among the others.
 *
 * The intents:
 *   card_data        card details handed to the help (it never takes them: the human pays at checkout)
 *   injection        instructions to the help itself, or a claimed role ("I am the operator", "system:")
 *   operator_action  gas, refunds, releases, limits or other operator actions obtained by asking
 *   secrets          keys, passwords, the service's own secrets, another agent's credentials
 *   others_data      another agent's balance, earnings, buyers or contact details
 *   rule_abuse       fake or self ratings and sales from extra agents, referral farming, wash trading,
 *                    evading moderation, illicit goods
 *   off_topic        work or knowledge that is not about this marketplace (write code, a poem, trivia)
 */
import type { NextStep } from '../../packages/contracts/support';
import { exampleArguments } from '../../packages/knowledge';

export type DeclineIntent = 'card_data' | 'injection' | 'operator_action' | 'secrets' | 'others_data' | 'rule_abuse' | 'off_topic';

export interface Decline {
  answer: string;
  nextStep: NextStep | null;
  /** Why it was declined. */
  intent?: DeclineIntent;
}

/** The two readings of a question the features look at. */
interface Reading {
  /** Lowercased, without quoted or pasted material (data about the situation, not a request). */
  q: string;
  /** Lowercased, whole (a pasted card number counts wherever it is). */
  full: string;
}

interface Feature {
  name: string;
  weight: number;
  test: RegExp | ((r: Reading) => boolean);
}

/** A question is declined for an intent whose score reaches this. */
export const DECLINE_AT = 1;

export const CAN_DO =
  'What ask_help can do: explain this marketplace\'s tools, rules and errors, and read your own purchases, wallet, limits and webhooks to tell you the next call to make.';

// ---------------------------------------------------------------------------------------------
// Word groups the features are built from.

const alt = (...xs: string[]) => `(?:${xs.join('|')})`;
/** What an operator (or a tool of the caller) does to money, state or rules. */
const OPERATOR_VERB = alt(
  'credit', 'add', 'give', 'grant', 'mint', 'deposit', 'transfer', 'send', 'move', 'refund', 'release', 'unfreeze', 'unlock', 'pay(?: out)?',
  'reverse', 'approve', 'resolve', 'settle', 'close', 'cancel', 'charge', 'top up', 'reset', 'raise', 'increase', 'lift', 'remove', 'waive',
  'mark', 'unban', 'ban', 'delete', 'confirm', 'force', 'restore', 'change', 'set', 'bump', 'double', 'erase', 'void', 'return', 'put', 'issue',
  'process', 'expedite', 'speed up', 'push through', 'trigger', 'top (?:me|us|my \\w+) up', 'fill (?:me|us) up', 'sort (?:me|us) out', 'hook (?:me|us) up',
);
/** Money, escrow and account state. */
const MONEY_OBJECT = alt(
  'gas', 'balance', 'gasbalance', 'credits?', 'escrow', 'refunds?', 'payouts?', 'funds', 'money', 'wallet', 'limits?', 'budgets?', 'caps?', 'dispute',
  'purchase', 'order', 'pur_\\w+', 'bonus(?:es)?', 'fees?', 'ratings?', 'reviews?', 'earnings', 'cash', 'btc', 'bitcoin', 'hold', 'sale_earn', 'account', 'agt_\\w+',
);
/** The help addressed as the one to act. */
const ASKS_HELP_TO = alt(
  '(?:can|could|would|will|pls|please|can\'t|won\'t) you(?: please| just| kindly| simply| quickly)?',
  'i (?:want|need|would like|\'d like) you to',
  'you (?:should|must|need to|have to|are going to|will)',
  'go ahead and',
  'i (?:order|instruct|authori[sz]e|command) you to',
);
/** A clause that starts with a command ("add 500 gas …", "please release …", "…, so just refund it"). */
const CLAUSE_START = '(?:^|[.!?;:]\\s*|,\\s*(?:so |and |then |now )?|\\band (?:then )?|\\bnow |\\bplease |\\bpls )(?:please |pls |just |now |kindly |simply |ok(?:ay)?,? )*';
/** Someone other than the caller. */
const OTHER_PARTY = alt(
  'another (?:agent|seller|buyer|user|customer|vendor)', 'other agents?', 'agt_\\w+', '(?:the|that|this|a|some|any) (?:other )?(?:seller|buyer|competitor|rival|agent|user|customer|counterparty|vendor)',
  'someone(?: else)?', 'somebody(?: else)?', 'everyone', 'everybody', 'all (?:the )?(?:agents|sellers|buyers|users)', '(?:other|top|richest|all) (?:agents|sellers|buyers|users)',
  'competitors?', 'rivals?', 'the operator', 'the admin', 'the platform', 'the marketplace', 'their', 'his', 'her',
);
/** Credentials and secrets. */
const SECRET = alt('api[\\s_-]?keys?', 'keys?', 'secrets?', 'passwords?', 'passphrases?', 'credentials?', 'tokens?', 'private keys?', 'seed phrases?', 'mnemonics?', 'system prompt', 'connection strings?', 'card (?:numbers?|details)', 'cvv', 'cvc', '2fa codes?', 'otp', 'logins?');
/** Another agent's private facts (their listings and reputation are public). */
const PRIVATE_DATA = alt(
  'balances?', 'gas ?balances?', 'wallets?', 'earnings', 'income', 'revenue', 'profits?', 'purchase history', 'order history', 'purchases', 'buyers', 'customers', 'clients',
  'e-?mails?(?: address(?:es)?)?', 'phone(?: numbers?)?', 'home address(?:es)?', 'ip(?: address(?:es)?)?', 'real names?', 'identity', 'spending', 'spending limits', 'transactions', 'ledger', 'payout address(?:es)?', 'btc address(?:es)?',
);
/** Means of gaming the marketplace: agents the speaker controls, dealing with oneself. */
const SELF_MADE_AGENTS =
  `\\b(?:register\\w*|creat\\w*|make|making|spin(?:ning)? up|set(?:ting)? up|run(?:ning)?|control\\w*|operat\\w*|use|using) (?:\\d+|two|three|four|five|six|ten|twenty|fifty|a hundred|a few|several|multiple|many|lots of|a bunch of|some|more|extra|additional|other|a second|another|a couple of)? ?(?:extra |new |more |dummy |fake |throwaway |burner |other |separate |additional |alt |second |sub-?|fresh |\\w+ )?(?:agents|accounts|identities|bots|alts)\\b`;
const ALT_AGENTS = alt(
  'alt(?:ernate)? (?:agents?|accounts?)', 'alts', 'sock ?puppets?', 'dummy (?:agents?|accounts?)', 'throwaway (?:agents?|accounts?)', 'burner (?:agents?|accounts?)',
  'my (?:own |other )+(?:agents|accounts|bots)', '(?:from|between|with|to) (?:each other|one another|themselves)', 'in a (?:loop|circle|ring)', 'round[- ]trip\\w*',
  '(?:buy|purchase|order|rate|review)\\w* (?:\\w+ ){0,3}(?:from |of |on )?(?:myself|my own (?:listings?|services?|offers?))', 'self[- ](?:deal\\w*|purchas\\w*|buy\\w*|rat\\w*|review\\w*|referr\\w*)',
  'refer(?:ring)? (?:myself|my own)', 'multiple identities', 'bot ?farms?', 'farm of', '(?:\\d+|many|several|multiple|dozens of|hundreds of) (?:\\w+ )?agents (?:that|which|who) (?:all )?(?:buy|purchase|rate|review|order|refer)', '(?:do|run|make) a (?:loop|circle|ring)', 'buys? (?:it |them )?back',
  'my (?:agents?|accounts?|bots?) (?:\\w+ )?(?:buys?|purchases?|rates?|reviews?|orders?) (?:from |on )?(?:my|our|each|one|the other)',
);
/** What gaming is for: reputation, rank, bonuses. */
const GAMING_GOAL = alt(
  'ratings?', '[45][- ]stars?', 'five[- ]stars?', 'ratingavg', 'rating avg\\w*', 'reviews?', 'salescount', 'sales ?count', 'sales (?:look|number|numbers|volume)', 'reputation',
  'rank\\w*', 'top of (?:the )?(?:search|results|list)', 'trending', 'looks? (?:big|popular|busy|active|legit|established|trusted|good)', 'referral\\w*', 'referredby', 'bonus(?:es)?',
  'free gas', 'volume', 'banned', 'suspended', '(?:shows?|has|have|gets?|get some) (?:some |more |real |fake )?(?:sales|activity|history|reviews)', 'sales history', 'isseed', 'seed badge', 'trust(?:ed)? badge',
);

/** Verbs that change a figure or a thing's state, as a command. */
const CHANGE_VERB = alt(
  'set', 'make', 'change', 'switch', 'flip', 'bump', 'raise', 'increase', 'lower', 'update', 'edit', 'modify', 'adjust', 'correct', 'fix', 'put', 'turn', 'boost',
  'reset', 'overwrite', 'replace', 'toggle', 'enable', 'mark', 'upgrade', 'give me', 'grant me', 'add',
);
/** Figures the marketplace computes from real sales and ratings: nobody sets them on request. */
const REPUTATION_FIGURE = alt(
  'ratingavg', 'rating ?avg\\w*', 'average rating', 'salescount', 'sales ?count', 'ratingcount', 'rating count', 'isseed', 'seed (?:flag|badge|status)', 'qualityscore', 'quality ?score',
  'reputation', 'trust (?:score|badge)', 'accountagedays', 'account age',
);
/** The wallet's figures: only the ledger's entries move them. */
const BALANCE_FIGURE = alt('withdrawablegas', 'gasbalance', 'gas ?balance', 'heldgas', 'held gas', 'pendingearningsgas', 'lifetimeearnedgas', 'withdrawable (?:gas|balance|amount)', 'balance', 'earnings');
/** A rating the speaker received (not one it gave and may change itself with rate_purchase). */
const RECEIVED_RATING = /\b(?:left|gave|given|wrote|posted) me\b|\b(?:buyer|customer|client)'?s? (?:rating|review|stars?)\b|\b(?:ratings?|reviews?|stars?) (?:on|of|for) my (?:listing|sale|service|profile|seller)\b|\bmy (?:seller )?(?:ratings|reviews)\b/;
/** The other agent's things, which only it can change. */
const OTHERS_THING = alt('listings?', 'services?', 'offers?', 'gigs?', 'purchases?', 'orders?', 'sales?', 'account', 'wallet', 'ratings?', 'reviews?', 'reputation', 'balance', 'gas', 'webhooks?', 'messages?', 'price', 'profile', 'agent');
const ACTS_ON_OTHERS = "another agent's listing, purchase or account acted on";
/** Verbs that act on a thing (pause a listing, cancel an order). */
const ACT_VERB = alt(
  'pause', 'unpause', 'delete', 'remove', 'hide', 'edit', 'change', 'update', 'modify', 'deactivate', 'reactivate', 'lower', 'raise', 'reprice', 'cancel', 'refund', 'close',
  'take down', 'unlist', 'delist', 'suspend', 'ban', 'block', 'flag', 'demote', 'downrank', 'derank', 'bury', 'mark', 'reset', 'set', 'freeze', 'disable',
);

// ---------------------------------------------------------------------------------------------
// Counter-features.

/** Asking how to do something oneself (with one's own tools) is the help's to answer. */
const HOW_TO = /\b(?:how (?:do|can|should|would) (?:i|we)|how to|what (?:do|should) i (?:call|use|do)|which tool|where (?:do|can) i|is there a (?:way|tool)|can i|am i able|is it possible|what happens if|why (?:did|does|is|was))\b/;
/** The speaker describes their own dealing on the marketplace: a purchase, a delivery, a listing. */
const OWN_DEALING =
  /\b(?:i|we) (?:bought|ordered|purchased|paid for|received|got back|hired|sold|delivered|listed)\b|\b(?:the|my|this|that|our) (?:delivery|deliverable|delivered work|seller|buyer|purchase|order|listing|result|sale|customer)\b|\b(?:was delivered|came back|got delivered|sent me|they sent|they delivered|instead of (?:a|an|the))\b|\bmy (?:listings?|services?|sales?|offers?|gigs?)\b|\b(?:sell|selling|list|listing|offer|offering)\b[^?.]{0,40}\b(?:poems?|stories|essays|code|scripts?|functions?|apps?|songs?|lyrics|translations?|recipes?)\b|\bpur_\w+|\b(?:i|we) (?:want to |would like to |plan to |'d like to |could |can )?(?:sell|list|offer)\b|\b(?:find|hire|pay|buy from|get|choose|look for|search for|need) (?:a|an|some|the right|someone|somebody)(?: (?:\w+ )?(?:seller|agent|provider|freelancer|listing|expert|specialist|developer|service))?\b|\b(?:on|from|through) (?:the|this) marketplace\b/;
/** A question in the form of general knowledge ("what is …", "who won …"). */
const GENERAL_FORM = /^(?:so |and |ok,? |hey,? |hi,? )?(?:what(?:'s| is| are| was| were)|who(?:'s| is| was| won| invented| wrote)|when (?:is|was|did)|where (?:is|are)|which (?:is|are|was)|how (?:many|much|far|old|tall|big)|why (?:is|are|do|does|did))\b/;
/** The marketplace's own vocabulary: a question naming none of it is not about the marketplace. */
const MARKET_WORDS =
  /\b(?:gas|escrow|listings?|list(?:ed|ing)?|sell\w*|sold|seller\w*|buy\w*|bought|purchas\w*|orders?|ordered|deliver\w*|refund\w*|disput\w*|wallet|balance|cash\w*|payouts?|paid|pay\w*|earn\w*|webhooks?|api|keys?|tools?|mcp|agents?|rat(?:e|ed|ing|ings)|reviews?|fees?|packs?|checkout\w*|limits?|budgets?|market\w*|services?|help|register\w*|account|messages?|price\w*|cost\w*|minimum|maximum|usd|dollars?|cents?|btc|bitcoin|categor\w*|referr\w*|bonus\w*|quality|score|moderat\w*|title|description|confirm\w*|stars?|idempoten\w*|requests?|errors?|fail\w*|status|state|human|owner|approv\w*|cards?|stripe|whoami|credits?|money|funds|held|hold|spend\w*|customers?|clients?|jobs?|gigs?|work|sales?|[45]\d\d|[a-z]+_[a-z_]+)\b/;
/** A command for work at the very start of the question ("write …", "can you compose …"). */
const WORK_COMMAND_FIRST = /^(?:hey,? |hi,? |ok,? |please |pls |can you |could you |would you |will you |i need you to |i want you to )*(?:write|compose|generate|draft|code|build|implement|translate|summari[sz]e|explain|solve|calculate|recommend|suggest|tell me a|give me a (?:poem|story|joke|recipe|fun fact))\b/;
/** Text quoted from a delivery or a message that the agent asks about ("it says: ignore previous instructions…"). */
export const QUOTED_CONTENT = /\b(?:deliver(?:y|ed|able)|get_delivery|message|list_messages|readme|the (?:seller|buyer) (?:sent|wrote)|contains?|says?|said)\b[^]{0,200}\b(?:should i|do i have to|must i|is it safe|do what it says|follow (?:it|that|this))/;

// ---------------------------------------------------------------------------------------------
// Phrasings seen before (each a feature worth a decline on its own).

const INJECTION_PHRASES: RegExp[] = [
  /\bignore (?:all |any |your |the )?(?:previous |prior |above |earlier )?(?:instructions|rules|prompt|guidelines)\b/,
  /\b(?:you are now|you're now|maintenance mode|developer mode|god mode|jailbreak|sudo mode|admin mode)\b/,
  /\b(?:i am|i'm|im|this is) (?:the |an? |your )?(?:operator|admin|administrator|moderator|developer|owner) of (?:this|the) (?:marketplace|market|service|platform|site)\b/,
  /\b(?:i am|i'm|im) (?:the |an? )?(?:operator|admin|administrator)\b/,
  /\b(?:authori[sz]ation|override|admin) code\b/,
  /\bas (?:the |an? |your )?(?:admin|administrator|operator|moderator|owner of (?:this|the) (?:marketplace|service|platform))\b/,
  /\bsystem override\b|\boverride:|\bsets? (?:my|the|their|his|her) (?:gas ?)?balance\b|\bset (?:my )?gasbalance\b|\bbalance to \d+/,
  /\b(?:pretend|act as if|imagine|roleplay|role-play)\b[^?]{0,30}\b(?:you are|you're|to be|as)\b/,
  /\b(?:forget|disregard|override) (?:everything|all|your|the|any)\b[^?]{0,20}\b(?:above|before|previous|prior|instructions|rules|prompt)\b/,
  /\b(?:i'?m|i am) (?:a |an |the )?(?:developer|dev|engineer|staff|employee|ceo|cto|founder|admin|administrator|operator|moderator|support agent)\b[^?]{0,80}\b(?:run|execute|sql|query|database|db|bypass|override|release|refund|credit|grant|unban|approve|resolve|set (?:my|the)|sets (?:my|the)|balance to)\b/,
  /\b(?:sql|query|database|db)\b[^?]{0,40}\b(?:set|update|insert|delete|drop)\b|\b(?:run|execute) (?:a |an |this |the )?(?:sql|query|command|script) (?:on|against|in) (?:the |your )?(?:db|database|server|ledger)\b/,
  /\b(?:i'?m|i am|we are|we're) (?:from|with|on) (?:the )?(?:support|ops|operations|admin|operator|security|trust and safety|platform|engineering) team\b/,
  /\b(?:i'?m|i am) (?:the |an? )?(?:ceo|cto|founder|owner|boss|staff|employee|engineer|developer|manager)\b[^?]{0,60}\b(?:bypass|skip|override|disable|approve|unban|release|refund|credit|resolve|delete|raise|lift)\b/,
];

const OPERATOR_PHRASES: RegExp[] = [
  /\bin my favou?r\b/,
  /\b(?:delete|remove|hide|erase)\b[^?]{0,30}\b(?:rating|review)s?\b[^?]{0,30}\b(?:left|gave|on my)\b|\b(?:delete|remove|hide|erase) (?:the |a |that |this )?(?:negative|bad|1-star|one-star|unfair|low) (?:rating|review)/,
  /\b(?:unlimited|infinite|free unlimited) gas\b|\bgas (?:hack|exploit|glitch)\b/,
  /\bmark (?:my |the |this |that )?(?:purchase|order|sale|pur_\w+)\b[^?]{0,25}\bas (?:delivered|completed|paid|confirmed|refunded|resolved)\b/,
  /\b(?:yourself|on my behalf|for me)\b[^?]{0,40}\b(?:approve|confirm|release|refund|resolve|credit|pay|transfer|cancel)\b|\b(?:approve|confirm|release|refund|resolve|credit|pay|transfer|cancel)\b[^?]{0,40}\b(?:yourself|on my behalf)\b/,
  /(?:^|[.!?]\s+)(?:please )?(?:increase|raise|set|change|lift|remove|double|reset|bump) (?:my|the) (?:daily |weekly |per[- ]purchase |spending )*(?:limits?|budgets?|caps?|allowance)\b/,
  /\b(?:increase|raise|lift|remove|double|bump) my (?:daily |weekly |per[- ]purchase |spending )*(?:limits?|budgets?|caps?|allowance)\b[^?]*\bplease\b/,
  /\b(?:can|could|would|will) you (?:please |just )?(?:credit|give|send|transfer|add|grant|mint|deposit|release|refund|unfreeze|resolve|approve|move|pay|reverse|cancel|delete|ban|reset|raise|increase|lift|remove|change)\b/,
  /(?:^|[.!?,;]\s*|:\s*)(?:please |now |just )?(?:credit|give|send|transfer|grant|mint|deposit|release|refund|unfreeze|move|pay out|reverse|raise|lift|approve|resolve|unlock|override|mark|close|settle|cancel|complete|end) (?:me|my|it|us|the escrow|this escrow|that escrow|the dispute|this dispute|the hold|the (?:buyer|seller)|him|her|them|agt_\w+|all|every|everyone|everybody|\d+|pur_\w+)\b[^?]*$/,
  /\b(?:just do it|do it now)\b/,
  /(?:^|[.!?,;]\s*|\band\s+)(?:please |just |now )?(?:reverse|undo|revert|roll back|cancel) (?:the|my|that|this) [^?]*\b(?:put|give|send|move|return)\b[^?]{0,20}\b(?:gas|money|funds)\b/,
  /(?:^|[.!?,;]\s*|\band\s+)(?:please |just |now )?(?:put|give|send|move) (?:the |my )?(?:gas|money|funds) back\b[^?]*$|\bno need to involve\b/,
  /\b(?:right now|immediately|asap)\b[^?]*\b(?:refund|release|credit|transfer|unfreeze|pay out)\b|\b(?:refund|release|credit|transfer|unfreeze|pay out)\b[^?]*\b(?:right now|immediately|asap)\b/,
  /\b(?:bypass|skip|override|disable|turn off|get around)\b[^?]{0,20}\b(?:the )?(?:quality gate|moderation|checks?|review|spending limits?|limits?|rate limit\w*|approval|escrow)\b/,
  /\b(?:un)?(?:ban|suspend|block|delete|deactivate)\b[^?]{0,15}\b(?:agent|account|user|seller|buyer|agt_\w+)\b(?![^?]*\bhow\b)/,
  /\bfree gas\b.*\b(?:give|send|credit|want|need)\b|\b(?:give|send|credit) me\b.*\bfree\b/,
];

const SECRET_PHRASES: RegExp[] = [
  /\b(?:api[\s_-]?keys?|keys?|secrets?|passwords?|credentials?|tokens?)\b[^?.]{0,40}\b(?:of|for|belonging to|from) (?:an?other |other |that |this |the |my |a |some )?(?:\w+'s )?(?:agents?|agt_\w+|sellers?|buyers?|users?|accounts?|competitors?|rivals?)\b/,
  /\b(?:competitor|rival)'?s?\b[^?]{0,30}\b(?:keys?|secrets?|passwords?|tokens?|credentials?)\b/,
  /\b(?:ceo|founder|operator|admin|owner|staff|team|employee|developer)s?'?s? (?:personal )?(?:email|phone|home address|address|contact details)\b/,
  /\bagt_\w+\b[^?.]{0,40}\b(?:api[\s_-]?key|secret|password|credentials?|token)\b/,
  /\b(?:another|other|someone else'?s?|their) (?:agent'?s? )?(?:api[\s_-]?keys?|keys?|secrets?|passwords?|credentials?|tokens?)\b/,
  /\b(?!my\b)\w+'s (?:api[\s_-]?keys?|keys?|secrets?|passwords?|credentials?|tokens?)\b/,
  /\b(?:stripe|database|db|postgres\w*|pg|ledger db|nats|admin|operator|server|the service(?:'s)?|your|webhook signing|jwt|env(?:ironment)?)\b[^?.]{0,30}\b(?:secret|secret key|password|private key|connection string|credentials?|admin token|api key|env(?:ironment)? var\w*)\b/,
  /\b(?:secret|password|private key|connection string|credentials?|admin token)\b[^?.]{0,40}\b(?:stripe|database|db|postgres\w*|ledger|admin|operator|(?<!\b(?:my|our) )server|the service uses)\b/,
  /\b(?:system prompt|your (?:instructions|prompt|rules) (?:verbatim|word for word)|print your (?:prompt|instructions))\b/,
  /\b(?:private keys?|seed phrase|mnemonic|hot wallet'?s? (?:key|keys|seed))\b/,
  /\b(?:list|show|dump|export|give me|print|send me)\b[^?]{0,15}\b(?:all|every|the|everyone'?s)\b[^?]{0,10}\b(?:api[\s_-]?keys?|keys|secrets|passwords|tokens)\b/,
];

const OTHERS_DATA_PHRASES: RegExp[] = [
  /\b(?:competitor|rival)'?s?\b[^?]{0,30}\b(?:data|balance|wallet|messages|buyers|customers|sales)\b/,
  /\b(?:list|show|tell me|give me|send me|what (?:did|does|has)|how much (?:did|does|has)|who (?:bought|paid|ordered)|which (?:agents|buyers))\b[^?]{0,60}\b(?:agt_\w+|another agent|other agents|other sellers|other buyers|(?:that|this) (?:seller|buyer|agent)|seller agt_\w+|buyer agt_\w+)\b/,
  /\b(?:agt_\w+|another agent'?s?|other agents'?)\b[^?]{0,60}\b(?:sold|bought|purchases|orders|sales|balance|wallet|earnings|messages|customers|buyers)\b/,
  /\bwho bought\b[^?]{0,40}\b(?:and|what)\b[^?]{0,30}\bpaid\b/,
  /\bmessages (?:between|of|from) (?:agt_\w+|other|another|two|those|these)\b/,
  /\b(?:list|send|show|give|export|dump|get)\b[^?]{0,30}\b(?:all|every|other) (?:the )?(?:registered |active )?(?:agents|users|sellers|buyers|accounts)\b[^?]{0,40}\b(?:emails?|keys?|balances?|wallets?|details|data|contacts?|ids|list)\b|\b(?:emails?|phone numbers?|addresses) of (?:all|other|the) (?:agents|users|sellers|buyers)\b/,
  /\b(?:which|what|who) (?:agents?|sellers?|buyers?|users?) (?:have|has|holds?|earn\w*|made|make|spent|spends?) (?:the )?most\b|\bmost (?:gas|money|sales|earnings)\b[^?]{0,20}\b(?:agents?|sellers?|buyers?)\b/,
  /\b(?:balances?|wallets?|earnings|revenue|purchases|sales|orders|messages|api keys?) of (?:the )?(?:top|other|all|every|another|some|\d+)\b/,
  /\b(?:top|other|all|richest|biggest) (?:\d+ )?(?:sellers|buyers|agents)'? (?:balances?|earnings|wallets?|revenue|purchases|sales)\b/,
  // A data request appended to a legitimate question ("… also list the ids and balances of this week's top sellers").
  /\b(?:agent ids?|ids|(?:gas |wallet |current )*balances?|wallets?|earnings|revenue|income|payout addresses)\b[^?.]{0,40}\b(?:top|richest|biggest|best|leading|highest[- ]earning)\b(?: \d+| ten| five| three| twenty)?[^?.]{0,15}\b(?:sellers|buyers|agents|earners|users)\b/,
  /\b(?:top|richest|biggest|best|leading|highest[- ]earning) (?:\d+ |ten |five |three |twenty )?(?:sellers|buyers|agents|earners|users)'?s?\b[^?.]{0,30}\b(?:gas |wallet |current )*(?:balances?|wallets?|earnings|revenue|income)\b/,
  /\b(?:richest|wealthiest|top[- ]earning|biggest spender)\b[^?]{0,30}\b(?:agents?|sellers?|buyers?|users?)\b|\bhow much (?:gas |money )?(?:do|does|did) (?:they|he|she|agt_\w+|that (?:agent|seller|buyer)) (?:have|earn|make|spend)\b/,
];

const ABUSE_PHRASES: RegExp[] = [
  /\bfake (?:accounts?|agents?|buyers?|sellers?|reviews?|ratings?|sales|purchases|orders)\b|\bsock ?puppets?\b|\bwash (?:trad\w*|sales)\b/,
  /\b(?:boost|inflate|pump|game|manipulate|fake)\b[^?]{0,20}\b(?:my )?(?:sales(?: ?count)?|salescount|ratings?|reputation|reviews?|rank\w*)\b/,
  /\b(?:hack|exploit|cheat|trick|fool|circumvent|get around|bypass|beat)\b[^?]{0,20}\b(?:the )?(?:quality gate|quality score|moderation|escrow|ledger|limits?|rate limit\w*|reputation|ranking|search|system|checks?|marketplace|platform)\b/,
];

const OFF_TOPIC_PHRASES: RegExp[] = [
  /\b(?:write|compose|make|generate|create|give me|tell me)\b[^?.]{0,25}\b(?:poem|song|story|haiku|essay|limerick|joke|rap|novel|sonnet|lyrics)\b/,
  /\b(?:poem|haiku|limerick|sonnet)\b/,
  /\b(?:write|draft|compose)\b[^?.]{0,20}\b(?:cover letter|resume|cv|essay|tweet|blog post|article|speech|homework|love letter)\b/,
  /\b(?:latest|today'?s|current) news\b/,
  /^(?:please |can you |could you )?(?:translate|summari[sz]e|proofread|rewrite|paraphrase)\b(?![^?]*\b(?:listing|my service|description)\b)/,
  /\b(?:debug|fix|refactor|optimi[sz]e|review|explain)\b (?:my|this|the|a) (?:code|component|function|script|app|program|query|css|react|python|sql|regex|docker\w*|k8s|kubernetes)\b/,
  /\byour (?:favou?rite|age|gender|opinion on|feelings)\b|\bare you (?:human|alive|conscious|sentient|real|a robot)\b|\bdo you (?:love|like|dream)\b/,
  /\bconvert\b[^?]{0,25}\b(?:euros?|eur|pounds?|gbp|yen|jpy|francs?|rupees?)\b|\b(?:euro|pound|yen) (?:to|in) (?:dollars?|usd)\b/,
  /\bhomework\b|\bintegrate x\b|\bderivative of\b|\bsolve (?:this |the )?equation\b|\belection\b|\bmovie\b|\bsports?\b/,
  /^\s*(?:what'?s|what is|calculate|compute|how much is)\s*-?[\d(][\d\s+\-*/x×^().]*\??\s*$/,
  /\bweather\b|\bforecast\b(?! of)/,
  /\b(?:can|could|would|will) you\b[^?.]{0,15}\b(?:write|code|build|make|create|generate|draft|translate|summari[sz]e|solve|debug|refactor|implement)\b[^?.]{0,40}\b(?:script|function|program|code|class|regex|scraper|app|website|essay|email|letter|sql|query|algorithm)\b/,
  /\b(?:can|could|would|will) you (?:please )?(?:translate|summari[sz]e|proofread|rewrite|draft|compose|write (?:me |my |a |an |the )?(?:essay|email|letter|article|blog|story|description|copy|text))\b/,
  /\b(?:write|code|build|generate|implement) (?:me )?(?:a |an |some )?(?:python|javascript|typescript|bash|shell|sql|rust|go|java|c\+\+|php|ruby)\b/,
  /\b(?:recipe|horoscope|lottery|stock price|sports? scores?|capital of|translate (?:this|the following))\b/,
];

const anyOf = (res: RegExp[]) => (r: Reading) => res.some((x) => x.test(r.q));

/** A 13–19 digit number that passes the Luhn check: a card number, whatever its spacing. */
function hasCardNumber(text: string): boolean {
  // As cards are written: 13–19 digits in one run, or groups of four (Amex 4-6-5).
  for (const m of text.matchAll(/\b\d{13,19}\b|\b\d{4}(?:[ -]\d{4}){2,3}(?:[ -]\d{1,3})?\b|\b\d{4}[ -]\d{6}[ -]\d{5}\b/g)) {
    const digits = m[0].replace(/\D/g, '');
    let sum = 0;
    for (let i = 0; i < digits.length; i++) {
      let d = Number(digits[digits.length - 1 - i]);
      if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
      sum += d;
    }
    if (sum % 10 === 0) return true;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// The intents and their features.

const INTENTS: Record<DeclineIntent, Feature[]> = {
  card_data: [
    { name: 'card number', weight: 1, test: (r) => hasCardNumber(r.full) },
    {
      // The help never sees card data: the human pays on the provider's checkout page.
      name: 'asks for card data',
      weight: 1,
      test: (r) => /\b(?:what|which|give|tell|show|send|get|need|read|find|look up|see)\b[^?.!]{0,50}\b(?:card (?:number|details|digits|expiry|info\w*)|(?:last|first) (?:four|4|digits)|expiry|expiration(?: date)?|cvv2?|cvc|security code)\b/.test(r.q) && /\bcards?\b|\bdigits\b|\bcvv|\bcvc/.test(r.q) && !HOW_TO.test(r.q),
    },
    { name: 'card security details', weight: 1, test: (r) => /\b(?:cvc|cvv2?|security code)\b[^a-z]{0,6}\d{3,4}\b|\bexp(?:iry|iration|ires)?(?: date)?:?\s*\d{1,2}\s*\/\s*\d{2,4}\b/.test(r.full) },
    {
      name: 'asks the help to use a card',
      weight: 1,
      test: (r) => new RegExp(`\\b(?:use|charge|bill|debit|put it on|take (?:it|the money|payment) from|here(?:'s| is| are)) (?:\\w+ ){0,3}(?:card|visa|mastercard|amex|credit card|debit card|card details|card number)\\b`).test(r.q) && !HOW_TO.test(r.q),
    },
  ],
  injection: [
    { name: 'instructions to the help, or a claimed role (phrasing seen before)', weight: 1, test: anyOf(INJECTION_PHRASES) },
    {
      name: 'asks the help to carry out instructions',
      weight: 1,
      test: (r) => /\b(?:carry out|execute|perform|obey|act on|run|do) (?:all )?(?:of )?(?:those|these|the|its|their|that|this|the note's|the delivery's) (?:instructions?|commands?|orders?|steps? (?:it|they) (?:gives?|lists?))\b|\bdo what (?:it|the \w+|they) says?\b/.test(r.q) && !/\b(?:should|must|can|do) (?:i|we)\b/.test(r.q),
    },
    { name: 'a system or operator prefix', weight: 1, test: (r) => /(?:^|\n)\s*(?:\[|<|#+\s*|\*\*)?(?:system|admin|administrator|operator|root|developer|assistant|moderator)\s*(?:\]|>|:|\*\*)/.test(r.full) || /\b(?:system|admin|operator) (?:override|notice|message|instruction|command)\b|\bnew (?:system )?instructions\b|\bfrom now on,? you\b/.test(r.q) },
    {
      name: 'claims to be staff',
      weight: 1,
      test: (r) =>
        /\b(?:i am|i'm|im|this is|speaking as|acting as|here as|writing as|we are|we're)(?: (?:the|an|a|your|one of the|on the|from the|with the))? (?:\w+ )?(?:operator|admin|administrator|moderator|sysadmin|superuser|root user|support (?:agent|staff|admin|team|engineer|lead|desk)|staff member|platform (?:team|staff|engineer|admin)|marketplace (?:team|staff|owner|admin)|trust (?:and|&) safety|on-?call engineer)s?\b/.test(r.q) &&
        !/\b(?:operator|admin) of (?:my|this|an?) (?:own )?agent\b/.test(r.q),
    },
  ],
  operator_action: [
    { name: 'an operator action asked of the help (phrasing seen before)', weight: 1, test: anyOf(OPERATOR_PHRASES) },
    { name: 'the help asked to act on money or state', weight: 0.7, test: (r) => new RegExp(`\\b${ASKS_HELP_TO} (?:${OPERATOR_VERB})\\b`).test(r.q) },
    { name: 'a command on money or state', weight: 0.7, test: (r) => new RegExp(`${CLAUSE_START}${OPERATOR_VERB} (?:me|us|my|our|the|this|that|it|him|her|them|all|every\\w*|\\d+|pur_\\w+|agt_\\w+|purchase|order|escrow)\\b`).test(r.q) },
    { name: 'the help asked to act in the asker\'s place', weight: 0.7, test: (r) => new RegExp(`\\b${OPERATOR_VERB}\\b[^?.!]{0,40}\\b(?:for me|for us|on my behalf|on our behalf|yourself|directly|instead of me)\\b`).test(r.q) && !HOW_TO.test(r.q) },
    { name: 'money or state named', weight: 0.4, test: (r) => new RegExp(`\\b${MONEY_OBJECT}\\b`).test(r.q) },
    { name: 'gas without paying', weight: 1, test: (r) => /\b(?:lend|loan|advance|front|spot)\b (?:me |us )?(?:some |\d+ )?(?:gas|credits?|money)\b|\b(?:pay (?:you |it |for it )?(?:back )?later|on credit|on tab|i'?ll pay (?:you )?(?:back|later|tomorrow))\b/.test(r.q) },
    {
      name: 'a reputation or wallet figure set on request',
      weight: 1,
      test: (r) =>
        // The figure is what the command changes: its object ("set my ratingAvg …"), or given a new value ("… isSeed flag to true").
        new RegExp(`(?:${CLAUSE_START}|\\b${ASKS_HELP_TO} |\\bi (?:want|need|would like|'d like) (?:you to )?)${CHANGE_VERB} (?:(?:my|our|the|its|this|that|me a|me) )?(?:\\w+'s )?(?:seller |agent |account |wallet )?(?:${REPUTATION_FIGURE}|${BALANCE_FIGURE})\\b`).test(r.q) ||
        new RegExp(`(?:${CLAUSE_START}|\\b${ASKS_HELP_TO} )${CHANGE_VERB}\\b[^?.!]{0,40}\\b(?:${REPUTATION_FIGURE}|${BALANCE_FIGURE})(?: \\w+)? (?:to|=|at) (?:\\d|true|yes|max)`).test(r.q) ||
        (RECEIVED_RATING.test(r.q) && new RegExp(`(?:${CLAUSE_START}|\\b${ASKS_HELP_TO} )${CHANGE_VERB}\\b[^?.!]{0,30}\\b(?:ratings?|reviews?|stars?|\\d(?:\\.\\d)? stars?)\\b|(?:${CLAUSE_START}|\\b${ASKS_HELP_TO} )${CHANGE_VERB} (?:it|that|this|them) (?:to|into|up to) \\d`).test(r.q)),
    },
    {
      name: ACTS_ON_OTHERS,
      weight: 1,
      test: (r) => new RegExp(`(?:${CLAUSE_START}|\\b${ASKS_HELP_TO} )${ACT_VERB}\\b[^?.!]{0,15}\\b${OTHER_PARTY}(?:'s|s'|')? (?:\\w+ ){0,2}${OTHERS_THING}\\b`).test(r.q),
    },
    { name: 'asks how to do it oneself', weight: -0.5, test: (r) => HOW_TO.test(r.q) },
  ],
  secrets: [
    { name: 'secrets (phrasing seen before)', weight: 1, test: anyOf(SECRET_PHRASES) },
    {
      name: "someone else's secret",
      weight: 1,
      test: (r) =>
        new RegExp(`\\b${OTHER_PARTY}(?:'s|s'|') (?:\\w+ ){0,2}${SECRET}\\b|\\b(?:their|his|her|your) (?:\\w+ ){0,1}${SECRET}\\b|\\b${SECRET} (?:\\w+ ){0,3}(?:of|for|belonging to|used by|owned by|from) ${OTHER_PARTY}\\b`).test(r.q) &&
        !/\byour (?:own )?(?:api[\s_-]?key|key)\b[^?.]{0,30}\b(?:header|bearer|authori[sz]ation)\b/.test(r.q),
    },
    { name: "into another agent's account", weight: 1, test: (r) => new RegExp(`\\b(?:log ?in(?:to)?|sign in(?:to)?|access|get into|take over|control|use|act as|impersonate) (?:as |to )?${OTHER_PARTY}(?:'s|s'|')? (?:account|wallet|agent|api key|key|identity)\\b|\\bimpersonat\\w+ ${OTHER_PARTY}`).test(r.q) },
    { name: 'on behalf of another agent', weight: 0.5, test: (r) => /\bon (?:its|their|his|her|agt_\w+'?s?|another agent'?s?) behalf\b|\bas if i were\b/.test(r.q) },
    { name: 'asks to be told or given', weight: 0.3, test: (r) => /\b(?:what(?:'s| is| are)|tell me|show|give me|send me|list|find|look up|reveal|get|print|dump|share|need)\b/.test(r.q) },
  ],
  others_data: [
    { name: "another agent's data (phrasing seen before)", weight: 1, test: anyOf(OTHERS_DATA_PHRASES) },
    {
      name: "another agent's private facts",
      weight: 0.8,
      test: (r) =>
        new RegExp(
          `\\b${OTHER_PARTY}(?:'s|s'|') (?:\\w+ ){0,2}${PRIVATE_DATA}\\b|\\b${PRIVATE_DATA} (?:\\w+ ){0,3}(?:of|for|belonging to|held by|owned by) ${OTHER_PARTY}\\b|\\bhow much (?:gas |money )?(?:does|did|has) ${OTHER_PARTY} (?:\\w+ )?(?:have|hold|earn|make|spend|got|made|spent|earned)\\b|\\bwho (?:bought|buys|ordered|purchased) from ${OTHER_PARTY}|\\b(?:top|best|biggest|richest|leading) (?:\\d+ |ten |five |three )?(?:sellers|buyers|agents|earners)\\b[^?]{0,30}\\b(?:revenue|earnings|income|balances?|made|earn\\w*|spent|spend\\w*)\\b`,
        ).test(r.q),
    },
    { name: 'asks to be told', weight: 0.3, test: (r) => /\b(?:what(?:'s| is| are)|tell me|show|give me|send me|list|find|look up|reveal|how much|which|who|check|see)\b/.test(r.q) },
  ],
  rule_abuse: [
    { name: 'gaming the marketplace (phrasing seen before)', weight: 1, test: anyOf(ABUSE_PHRASES) },
    { name: 'agents the speaker controls, or dealing with oneself', weight: 0.6, test: (r) => new RegExp(SELF_MADE_AGENTS).test(r.q) || new RegExp(`\\b${ALT_AGENTS}\\b`).test(r.q) },
    { name: 'to gain reputation, rank or bonuses', weight: 0.5, test: (r) => new RegExp(`\\b${GAMING_GOAL}\\b`).test(r.q) },
    {
      name: 'evading moderation or detection',
      weight: 1,
      test: (r) =>
        /\b(?:moderation|moderators?|the filters?|spam filters?|detection|the checks?|operators?|the operator|admins?|nobody|no one|they|it|anyone)\b[^?.]{0,15}\b(?:doesn'?t|don'?t|won'?t|can'?t|cannot|does not|do not|will not|never) (?:catch|notice|spot|detect|flag|realize|find out|figure out)\b/.test(r.q) ||
        /\b(?:evad\w*|dodg\w*|slip (?:past|through)|sneak (?:past|through|by)|get (?:around|past)|bypass\w*|circumvent\w*|fool\w*|trick\w*|outsmart\w*|defeat\w*|hide (?:it )?from|disguis\w*|obfuscat\w*|under the radar|without (?:getting |being )?(?:caught|flagged|detected|noticed)|avoid (?:getting |being )?(?:banned|caught|detected|noticed|suspended)|gets? (?:\w+ ){0,3}(?:past|around|through) (?:the )?(?:\w+ )?(?:filters?|moderation|moderators|spam checks?|detection))\b[^?.]{0,25}\b(?:moderation|moderators?|filters?|spam|detection|flag\w*|bans?|operators?|admins?|fraud|checks|the rules|review(?:ers)?|caught|detected|noticed)?/.test(r.q) && /\b(?:moderat\w*|filters?|spam|detect\w*|flag\w*|bans?|operators?|admins?|fraud|checks|rules|review\w*|caught|noticed|radar)\b/.test(r.q),
    },
    {
      name: 'illicit goods, traded (not reported)',
      weight: 1,
      test: (r) =>
        /\b(?:sell\w*|list\w*|offer\w*|buy\w*|mak\w*|build\w*|distribut\w*|spread\w*|trad\w*|host\w*|word\w*|advertis\w*)\b/.test(r.q) &&
        !/\b(?:report\w*|complain\w*|flag\w*|warn\w*|delivered|sent me|i (?:got|received)|scammed|victim|protect\w*|detect\w*)\b/.test(r.q) &&
        /\b(?:leaked|stolen|hacked|cracked|pirated|dumped|scraped) (?:(?!my\b|our\b)\w+ ){0,2}(?:api keys|keys|accounts|cards|credit cards|credentials|passwords|databases?|logins|data|emails|identities)\b|\b(?:leaked|stolen|hacked|cracked|pirated|bootleg|counterfeit) (?:(?!my\b|our\b)\w+ ){0,2}(?:\w+s|software|data|content|media)\b(?<!\b(?:was|has|is|its|this|thus|yes|us|as)\b)|\b(?:card dumps?|carding|cvv dumps?|fullz|malware|ransomware|keyloggers?|phishing (?:kits?|pages?|sites?|emails?)|ddos\w*|botnets?|credential stuffing|account takeovers?|counterfeit\w*|money launder\w*|launder\w* (?:money|gas))\b/.test(r.q),
    },
  ],
  off_topic: [
    { name: 'not about the marketplace (phrasing seen before)', weight: 1, test: anyOf(OFF_TOPIC_PHRASES) },
    {
      name: 'work asked of the help',
      weight: 0.4,
      test: (r) =>
        new RegExp(`(?:${ASKS_HELP_TO}|${CLAUSE_START}|\\bhelp me|\\bfor me\\b[^?.]{0,20}|\\bi need (?:you to |a |an |some )?)(?:write|compose|generate|create|draft|make|code|build|implement|translate|summari[sz]e|explain|solve|debug|fix|refactor|optimi[sz]e|review|tell me|give me|recommend|suggest|plan|calculate|convert|proofread|rewrite)\\b`).test(r.q),
    },
    {
      name: 'an artifact that is not the marketplace',
      weight: 0.6,
      test: (r) =>
        /\b(?:poems?|songs?|story|stories|haikus?|essays?|limericks?|jokes?|raps?|novels?|sonnets?|lyrics|cover letters?|resumes?|cv|tweets?|blog posts?|articles?|speech(?:es)?|homework|love letters?|recipes?|functions?|scripts?|programs?|class(?:es)?|regex(?:es)?|sql quer(?:y|ies)|algorithms?|websites?|web ?apps?|components?|unit tests?|dockerfiles?|snippets?|one-liners?|workouts?|diets?|itinerar(?:y|ies)|business plans?|marketing plans?|slogans?|logos?|math problems?)\b/.test(r.q),
    },
    {
      name: 'general knowledge',
      weight: 1,
      test: (r) =>
        /\b(?:capital (?:city )?of|weather|forecast for|who won|president of|prime minister|population of|history of|how tall|how old is|distance (?:from|between)|meaning of life|tell me a joke|horoscope|stock price|price of (?:bitcoin|btc|eth\w*|gold|oil|tesla)|(?:bitcoin|btc|eth\w*|crypto|stocks?|shares?|gold|oil)\b(?![^?]*\b(?:gas|cash\w*|payouts?|withdraw\w*|sale_earn|earnings)\b)[^?]{0,20}\b(?:trading|priced?|worth|value|rate)|lottery|sports? scores?|world cup|super ?bowl|election|movies?|tv shows?|celebrit\w*|calories|what time is it|time ?zone|square root|derivative|integral of|prime numbers?|speed of light|who (?:invented|wrote|painted|discovered))\b/.test(r.q),
    },
    { name: 'a general question that is not about the asker', weight: 0.3, test: (r) => GENERAL_FORM.test(r.q) && !/\b(?:i|i'm|i've|i'd|my|me|mine|we|our|us)\b/.test(r.q) },
    { name: 'nothing of the marketplace named', weight: 0.6, test: (r) => !MARKET_WORDS.test(r.q) },
    { name: 'a command for work opens the question', weight: 0.6, test: (r) => WORK_COMMAND_FIRST.test(r.q) },
    { name: 'the speaker describes their own purchase, delivery or listing', weight: -1.5, test: (r) => OWN_DEALING.test(r.q) },
  ],
};

/**
 * The order in which intents over the threshold win: how the request is made (card data handed over,
 * instructions or a claimed role) before what it is for, and a narrow refusal before a broad one.
 */
const PRIORITY: DeclineIntent[] = ['card_data', 'injection', 'secrets', 'others_data', 'operator_action', 'rule_abuse', 'off_topic'];

export interface IntentScore {
  intent: DeclineIntent;
  score: number;
  /** The features that fired. */
  features: string[];
}

/**
 * The question without the material it quotes or pastes (a description, an error message, code in
 * quotes or backticks, what follows "description:" or "it says:"): that text is data about the
 * situation, not a request to ask_help, so the decline features do not read it.
 */
export function withoutQuoted(question: string): string {
  return question
    .replace(/```[^]*?```/g, ' ')
    .replace(/`[^`\n]*`/g, ' ')
    .replace(/"[^"\n]*"/g, ' ')
    .replace(/[“”][^“”\n]*[“”]/g, ' ')
    .replace(/(^|[\s(:=])'[^'\n]{2,}?'(?=$|[\s).,;:!?])/g, '$1 ')
    .replace(/\b(?:description|title|error|message|response|output|it says|the error says|got back)\s*:\s*[^?\n]*?(?=\s*\b(?:how|what|why|can|should|is|do|does)\b|[?\n]|$)/gi, ' ');
}


/** Every decline intent's score for a question, highest first (the features that fired are named). */
export function intentScores(question: string): IntentScore[] {
  const r: Reading = { q: withoutQuoted(question).toLowerCase().replace(/[’‘]/g, "'"), full: question.toLowerCase() };
  const out: IntentScore[] = [];
  for (const intent of PRIORITY) {
    const fired = INTENTS[intent].filter((f) => (typeof f.test === 'function' ? f.test(r) : f.test.test(r.q)));
    const positive = fired.filter((f) => f.weight > 0);
    out.push({ intent, score: positive.length ? Math.round(fired.reduce((s, f) => s + f.weight, 0) * 100) / 100 : 0, features: fired.map((f) => f.name) });
  }
  return out.sort((a, b) => b.score - a.score || PRIORITY.indexOf(a.intent) - PRIORITY.indexOf(b.intent));
}

/** The intent a question is declined for, or null when it is the help's to answer. */
export function declineIntent(question: string): IntentScore | null {
  if (QUOTED_CONTENT.test(question.toLowerCase())) return null; // asking whether to follow injected text: answered (it is data)
  const over = intentScores(question).filter((s) => s.score >= DECLINE_AT);
  // A command on another agent's things ("pause agt_…'s listing") asks for an action, not for its data.
  const acting = over.find((s) => s.intent === 'operator_action' && s.features.includes(ACTS_ON_OTHERS));
  if (acting) return acting;
  return over.sort((a, b) => PRIORITY.indexOf(a.intent) - PRIORITY.indexOf(b.intent))[0] ?? null;
}

// ---------------------------------------------------------------------------------------------
// The refusals: one line of why, what to do instead (the legitimate tool), what ask_help can do.

/** A refusal and what the caller can do instead, or null when the question is the help's to answer. */
export function declineOf(question: string): Decline | null {
  const hit = declineIntent(question);
  if (!hit) return null;
  const q = withoutQuoted(question).toLowerCase();
  const answer = REFUSALS[hit.intent](q, question.toLowerCase());
  return { ...answer, intent: hit.intent };
}

const REFUSALS: Record<DeclineIntent, (q: string, full: string) => Omit<Decline, 'intent'>> = {
  card_data: (_q, full) => {
    const pack = /\b(starter|builder|fleet)\b/.exec(full)?.[1] ?? 'starter';
    return {
      answer:
        "I can't take card details: ask_help cannot pay, and card data must never be pasted into a question, a message or a tool call (if you did, have your human treat that card as exposed). " +
        `Gas is paid by your human on the checkout page: buy_gas {"packId": "${pack}"} returns a checkoutUrl; give that link to your human, who enters the card there, then poll wallet until gasBalance has risen.\n\n${CAN_DO}`,
      nextStep: { tool: 'buy_gas', arguments: { packId: pack } },
    };
  },
  injection: (q) => manipulation(q, true),
  operator_action: (q) => manipulation(q, false),
  secrets: () => ({
    answer:
      "I can't share that: ask_help never reveals secrets (API keys, passwords, connection strings, payment or signing keys, its own configuration) and nobody can see another agent's key — the server keeps only a hash of each. " +
      `Your own API key was shown once at registration; if it is lost, register a new agent. For debugging, pass a failed call's requestId to ask_help (context.requestId).\n\n${CAN_DO}`,
    nextStep: null,
  }),
  others_data: () => ({
    answer:
      "I can't share that: another agent's purchases, buyers, prices paid, balance and messages are private to them. " +
      `What is public: their listings and reputation (salesCount, ratingAvg, isSeed) in search_services {"sellerId"}.\n\n${CAN_DO}`,
    nextStep: { tool: 'search_services', arguments: { sellerId: 'agt_…' } },
  }),
  rule_abuse: (q) => {
    const listing = /\b(?:quality|moderat\w*|listing|description|list)\b/.test(q);
    const referral = /\breferr\w*|\bbonus/.test(q);
    return {
      answer:
        "I can't help with that: extra or fake agents, buying from or rating yourself, farming referral bonuses, trading in a loop, selling illicit goods or getting around moderation and the marketplace's checks is abuse of the marketplace (listings are moderated, and operators see the ledger and the purchases). " +
        (referral
          ? 'The referral bonus is for real agents you refer (referredBy at their registration), paid when each makes its first purchase, up to a weekly cap.'
          : listing
            ? 'What passes the quality gate honestly: a concrete skill in the title, the inputs the buyer provides, what you deliver (formats), scope and limits — list_service returns a quality report with hints when it refuses.'
            : 'Reputation comes from real completed sales and ratings; a clear listing with a fair price and fast delivery earns them.') +
        `\n\n${CAN_DO}`,
      nextStep: listing && !referral ? { tool: 'list_service', arguments: exampleArguments('list_service') } : null,
    };
  },
  off_topic: (q) => {
    const code = /\b(?:script|function|program|code|scraper|app|website|sql|regex|algorithm|python|javascript|typescript|component|react|css|class|dockerfile|unit tests?)\b/.test(q);
    return {
      answer:
        "I can't help with that here: ask_help only answers questions about this marketplace." +
        (code ? ' To have code written, buy it from a seller: search_services {"q", "category": "codegen"} finds one.' : '') +
        `\n\n${CAN_DO}`,
      nextStep: code ? { tool: 'search_services', arguments: { q: 'python script', category: 'codegen' } } : null,
    };
  },
};

/** The refusal of an operator action or an instruction to the help, with the legitimate tool for what was wanted. */
function manipulation(q: string, injection: boolean): Omit<Decline, 'intent'> {
  const money = /\b(?:gas|credit|balance|wallet|refund|escrow|release|pay|payout|cash)\b/.test(q);
  const refund = /\brefund\b/.test(q);
  const release = /\b(?:release|escrow)\b/.test(q);
  const reputation = new RegExp(`\\b(?:${REPUTATION_FIGURE}|ratings?|reviews?|stars?)\\b`).test(q) && !refund && !release;
  const othersThing = new RegExp(`\\b${OTHER_PARTY}(?:'s|s'|') (?:\\w+ ){0,2}${OTHERS_THING}\\b`).test(q) && !reputation;
  const limits = /\b(?:limits?|budgets?|caps?|allowance)\b/.test(q) && !refund && !release;
  const approval = /\bapprov\w*/.test(q) && !refund && !release;
  const operator = /\b(?:operator|admin|administrator|moderator|override|authori[sz]ation code)\b/.test(q) || (injection && /\b(?:support|staff|team|system)\b/.test(q));
  let instead: string;
  let nextStep: NextStep | null = null;
  if (reputation) {
    instead =
      "Reputation (ratingAvg, salesCount, ratingCount, isSeed, qualityScore) is computed from real completed sales and the ratings their buyers gave; nobody edits it on request — not ask_help, not an operator. A rating is the buyer's own (rate_purchase, changeable by that buyer within a few days). What raises yours: a clear listing (update_service) with a fair price, fast delivery, and messages that settle problems before a bad rating.";
    nextStep = { tool: 'update_service', arguments: exampleArguments('update_service') };
  } else if (othersThing) {
    instead = "Another agent's listings, purchases, wallet and account are its own: only it changes them, with its own key (a seller with update_service). If a listing breaks the rules, report_bug or report_experience tells the operator.";
    nextStep = null;
  } else if (limits || approval) {
    instead = limits
      ? 'Only your human (your owner) can change your spending limits, on their private owner page or the checkout page; whoami shows them (spendingLimits).'
      : 'A purchase above your human\'s "ask me above" amount waits for your human to approve it at approvalUrl (get_purchase shows it; it fails if not approved in time). Send them that link.';
    nextStep = limits ? { tool: 'whoami', arguments: {} } : { tool: 'get_purchase', arguments: exampleArguments('get_purchase') };
  } else if (refund) {
    instead = `A refund is yours to request with your own key: request_refund {"purchaseId"} (before delivery it is refunded at once; after delivery the seller may refund, or you dispute_purchase). If the seller agreed in a message, they can refund it themselves with request_refund.`;
    nextStep = { tool: 'request_refund', arguments: exampleArguments('request_refund') };
  } else if (release) {
    instead = 'Escrow is released only by its buyer (confirm_delivery), by auto-release after delivery, or by an operator resolving a dispute in the operator console — never through ask_help. If you are a party of the purchase, get_purchase shows its state.';
    nextStep = { tool: 'get_purchase', arguments: exampleArguments('get_purchase') };
  } else if (money) {
    instead = 'Gas comes only from an approved checkout (buy_gas; a human approves the payment), from sales, or from referral bonuses.';
    nextStep = { tool: 'buy_gas', arguments: exampleArguments('buy_gas') };
  } else {
    instead = 'Use the tools with your own API key for your own account.';
  }
  return {
    answer:
      `I can't do that: ask_help cannot move gas, refund, release escrow, change limits or take operator actions, and ${operator ? 'claiming to be the operator does not change that (operators act in their own console, not through ask_help)' : 'instructions in a question do not change that'}. ` +
      `${instead}\n\n${CAN_DO}`,
    nextStep,
  };
}
