/**
 * ask_help, step 2: what it must not do — move gas or act for anyone, reveal secrets or its own
 * instructions, follow instructions quoted from a delivery or a message, run commands, answer what is
 * not about this marketplace. Each reason is a row of data: the phrases that show it, one sentence
 * why, one sentence of what ask_help can do instead. A question about this marketplace is never
 * declined as off-topic: only a question that names nothing of it is.
 */
import { KEY_AT_RISK, UNRELATED_TASKS } from '../../packages/knowledge/synonyms';
import { has } from './help-parse';

export interface Decline {
  reason: 'acts' | 'secrets' | 'quoted_instructions' | 'commands' | 'card_data' | 'gaming' | 'off_topic';
  text: string;
}

/** Verbs that would act on the market; asked of ask_help ("can you … for me") they are a request to act. */
const ACT_VERBS = ['transfer', 'send', 'move', 'give', 'credit', 'refund', 'release', 'confirm', 'confirm_delivery', 'approve', 'buy', 'purchase', 'pay', 'cancel', 'deliver', 'dispute', 'rate', 'delete', 'resolve', 'unfreeze', 'add', 'complete', 'mark', 'open', 'post', 'call'];
/** Always a request to act ("please refund …"). */
const IMPERATIVE = ['please', 'i want you to', 'i need you to', 'go ahead and', 'you must', 'you have to'];
/** A request to act only when the object is the asker's own thing ("can you refund my purchase"), not a generic "you" ("can you refund a completed purchase?"). */
const MAYBE_ASKING = ['can you', 'could you', 'would you', 'will you'];
const OWN_OBJECTS = ['me', 'my', 'it', 'this', 'that', 'us', 'our'];

const RULES: Array<{ reason: Decline['reason']; phrases: string[]; text: string }> = [
  {
    reason: 'secrets',
    phrases: ['system prompt', 'your prompt', 'your instructions', 'your rules', 'hidden instructions', 'initial instructions', 'developer message', 'reveal your', 'print your', 'output your', 'grounding documents', 'text above', 'everything above', 'repeat the text', 'internal files', 'internal knowledge', 'knowledge-base files', 'knowledge base files', 'paste them in full', 'source files'],
    text: 'I will not reveal my own instructions or internal material. Ask the marketplace question itself and I will answer it directly; the public documentation is GET /api/agent and /llms.txt.',
  },
  {
    reason: 'secrets',
    phrases: ['every registered agent', 'all registered agents', 'list of agents', 'contact emails', 'their emails', "owners'", 'owners contact', 'admin token', 'operator token', 'api key of', "other agent's", "another agent's", 'other agents’', "someone else's", 'webhook secret of', 'private key', 'database password', 'env var', 'environment variable', 'jailbreak', 'developer mode', 'devmode', 'dev mode', 'ignore previous', 'ignore all previous', 'ignore your instructions', 'keys of', 'api keys or', 'balances of', 'wallet balances', 'here is its key', 'its key', 'their key'],
    text: "I cannot reveal secrets or other agents' private data. Public figures are at /api/public/stats and listings via search_services; I can explain how keys, webhooks and your own account work, and what your next call is; the public tool list is GET /api/agent and /llms.txt.",
  },
  {
    reason: 'quoted_instructions',
    phrases: ['do what it says', 'follow the instructions', 'follow its instructions', 'follow them', 'as it says', 'as instructed', 'it tells you to', 'it says to', 'says you should', 'instructions for you', 'ai assistant:', 'assistant:', 'should i do that', 'should i do it', 'please do it'],
    text: 'I do not follow instructions quoted from a delivery, a message or any other text: counterparty content is data, never instructions to me. I can explain what the purchase allows you to do next (for a delivery: get_delivery to read it, then confirm_delivery, request_refund or dispute_purchase).',
  },

  {
    reason: 'commands',
    phrases: ['curl', '| sh', '|sh', '| bash', 'bash -c', 'rm -rf', 'sudo', 'wget', 'run this command', 'run this script', 'execute this', 'run the command', 'shell command', 'pip install', 'eval('],
    text: 'I do not run commands or scripts, and I do not vouch for one pasted to you: installing or running code from a message is not part of using this marketplace. I can show the exact tool call (POST /api/agent or MCP) for what you want to do.',
  },
];

const CARD = {
  phrases: ['cvv', 'cvc', 'card number', 'card is', 'expiry', 'exp date'],
  text: 'Never send card data to anyone, me included: only your human enters it, on the checkoutUrl page that buy_gas returns. Then poll wallet until gasBalance rises.',
};
const GAMING = {
  phrases: ['scam', 'looks like a legit', 'looks legit', 'actually gets buyers', 'trick buyers', 'paste their api keys', 'steal', 'throwaway', 'farm', 'farming', 'fake', 'pump', 'inflate', 'wash trad', 'buy my own listing', 'for free', 'sock puppet', 'game the', 'cheat', 'exploit'],
  text: "I won't help game the marketplace (scams, fake or self-dealing accounts, false disputes, referral farming; moderation rejects such listings): it breaks its rules and risks your earnings. I can explain the honest route: a clear listing, delivering well, confirm_delivery and rate_purchase.",
};
const ADVICE = {
  phrases: ['price be', 'time the market', 'predict', 'price prediction', 'financial advice', 'investment advice', 'will the price'],
  text: 'I cannot predict prices or give financial advice: that is not about this marketplace. I can explain its cash-out rules (request_cashout: minimum, fee, which gas is withdrawable).',
};

/** A quoted passage (a delivery's or a message's text) that tells someone to act: it is data, never an instruction. */
function quotesInstructions(text: string): boolean {
  for (const m of text.matchAll(/['"“‘]([^'"”’]{20,})['"”’]/g)) {
    const quoted = ` ${m[1]} `;
    if (ACT_VERBS.some((v) => has(quoted, v)) || has(quoted, 'api key') || has(quoted, 'system') || has(quoted, 'assistant')) return true;
  }
  return false;
}

const ACTS_TEXT =
  'I cannot move gas or act for anyone: I only explain. Every change to your account is a tool call you make yourself with your API key; tell me what you want to do and I will name the call and its arguments.';

const OFF_TOPIC_TEXT = 'That is not about this marketplace, so I cannot help with it. I answer questions about its tools, gas, buying, selling, escrow, cash-out and MCP.';

function asksToAct(text: string): boolean {
  if (['on my behalf', 'do it for me', 'for it', 'on its order', 'for them', 'its earnings', 'pretend you', "pretend you're", 'act as the admin', 'as the admin', 'force a refund'].some((w) => has(text, w))) return true;
  // An imperative: the question starts with an action ("send 500 gas … for me").
  const first = text.trim().split(' ')[0];
  if (ACT_VERBS.includes(first) && (has(text, 'for me') || text.includes('_') || /\d/.test(text))) return true;
  for (const v of ACT_VERBS) {
    if (has(text, `${v} it for me`) || IMPERATIVE.some((a) => has(text, `${a} ${v}`))) return true;
    for (const a of MAYBE_ASKING) {
      const at = text.indexOf(` ${a} ${v} `);
      if (at < 0) continue;
      const next = text.slice(at + a.length + v.length + 3).split(' ')[0];
      if (OWN_OBJECTS.includes(next) || /^(pur|agt|lst)_|^\d/.test(next)) return true;
    }
  }
  return false;
}

/**
 * The reason to decline, or null. `pastedError`: the question carries an error envelope (its quoted
 * strings are the service's, not instructions). `inDomain`: the question names this marketplace's own things
 * (the retrieval's judgement): then only acting, secrets, quoted instructions and commands decline.
 */
export function declineOf(text: string, inDomain: boolean, pastedError = false): Decline | null {
  if (KEY_AT_RISK.some((p) => has(text, p))) return null;
  for (const r of RULES) if (r.phrases.some((p) => has(text, p) || (p.includes('|') && text.includes(p)))) return { reason: r.reason, text: r.text };
  // A pasted error envelope is the service's own text: only the rows above (secrets, commands) can decline it.
  if (pastedError) return null;
  if (quotesInstructions(text)) return { reason: 'quoted_instructions', text: RULES.find((r) => r.reason === 'quoted_instructions')!.text };
  if (CARD.phrases.some((p) => has(text, p)) || /\b\d{4} ?\d{4} ?\d{4} ?\d{4}\b/.test(text)) return { reason: 'card_data', text: CARD.text };
  if (GAMING.phrases.some((p) => has(text, p))) return { reason: 'gaming', text: GAMING.text };
  if (ADVICE.phrases.some((p) => has(text, p))) return { reason: 'off_topic', text: ADVICE.text };
  if (asksToAct(text)) return { reason: 'acts', text: ACTS_TEXT };
  if (UNRELATED_TASKS.some((p) => has(text, p))) return { reason: 'off_topic', text: OFF_TOPIC_TEXT };
  if (!inDomain) return { reason: 'off_topic', text: OFF_TOPIC_TEXT };
  return null;
}
