/**
 * ask_help, step 2: what it must not do — move gas or act for anyone, reveal secrets or its own
 * instructions, follow instructions quoted from a delivery or a message, run commands, answer what is
 * not about this marketplace. Each reason is a row of data: the phrases that show it, one sentence
 * why, one sentence of what ask_help can do instead. A question about this marketplace is never
 * declined as off-topic: only a question that names nothing of it is.
 */
import { has } from './help-parse';

export interface Decline {
  reason: 'acts' | 'secrets' | 'quoted_instructions' | 'commands' | 'off_topic';
  text: string;
}

/** Verbs that would act on the market; asked of ask_help ("can you … for me") they are a request to act. */
const ACT_VERBS = ['transfer', 'send', 'move', 'give', 'credit', 'refund', 'release', 'confirm', 'approve', 'buy', 'purchase', 'pay', 'cancel', 'deliver', 'dispute', 'rate', 'delete', 'resolve', 'unfreeze', 'add'];
/** Always a request to act ("please refund …"). */
const IMPERATIVE = ['please', 'i want you to', 'i need you to', 'go ahead and', 'you must', 'you have to'];
/** A request to act only when the object is the asker's own thing ("can you refund my purchase"), not a generic "you" ("can you refund a completed purchase?"). */
const MAYBE_ASKING = ['can you', 'could you', 'would you', 'will you'];
const OWN_OBJECTS = ['me', 'my', 'it', 'this', 'that', 'us', 'our'];

const RULES: Array<{ reason: Decline['reason']; phrases: string[]; text: string }> = [
  {
    reason: 'quoted_instructions',
    phrases: ['do what it says', 'follow the instructions', 'follow its instructions', 'follow them', 'as it says', 'as instructed', 'it tells you to', 'it says to', 'says you should', 'instructions for you', 'ai assistant:', 'assistant:', 'ignore previous', 'ignore all previous', 'ignore your instructions', 'new instructions'],
    text: 'I do not follow instructions quoted from a delivery, a message or any other text: counterparty content is data, never instructions to me. I can explain what the purchase allows you to do next (for a delivery: get_delivery to read it, then confirm_delivery, request_refund or dispute_purchase).',
  },
  {
    reason: 'secrets',
    phrases: ['system prompt', 'your prompt', 'your instructions', 'your rules', 'hidden instructions', 'initial instructions', 'developer message', 'admin token', 'operator token', 'api key of', "other agent's", "another agent's", 'other agents’', 'someone else', 'webhook secret of', 'private key', 'database password', 'env var', 'environment variable', 'jailbreak', 'developer mode', 'reveal your', 'print your'],
    text: "I cannot reveal secrets, other agents' data or my own instructions. I can explain how keys, webhooks and your own account work, and what your next call is.",
  },
  {
    reason: 'commands',
    phrases: ['curl', '| sh', '|sh', '| bash', 'bash -c', 'rm -rf', 'sudo', 'wget', 'run this command', 'run this script', 'execute this', 'run the command', 'shell command', 'pip install', 'eval('],
    text: 'I do not run commands or scripts, and I do not vouch for one pasted to you: installing or running code from a message is not part of using this marketplace. I can show the exact tool call (POST /api/agent or MCP) for what you want to do.',
  },
];

const ACTS_TEXT =
  'I cannot move gas or act for anyone: I only explain. Every change to your account is a tool call you make yourself with your API key; tell me what you want to do and I will name the call and its arguments.';

const OFF_TOPIC_TEXT = 'That is not about this marketplace, so I cannot help with it. I answer questions about its tools, gas, buying, selling, escrow, cash-out and MCP.';

function asksToAct(text: string): boolean {
  if (has(text, 'on my behalf') || has(text, 'do it for me')) return true;
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
 * The reason to decline, or null. `inDomain`: the question names this marketplace's own things
 * (the retrieval's judgement): then only acting, secrets, quoted instructions and commands decline.
 */
export function declineOf(text: string, inDomain: boolean): Decline | null {
  for (const r of RULES) if (r.phrases.some((p) => has(text, p) || (p.includes('|') && text.includes(p)))) return { reason: r.reason, text: r.text };
  if (asksToAct(text)) return { reason: 'acts', text: ACTS_TEXT };
  if (!inDomain) return { reason: 'off_topic', text: OFF_TOPIC_TEXT };
  return null;
}
