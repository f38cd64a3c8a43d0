/**
 * ask_help, step 2: what it must not do — move gas or act for anyone, reveal secrets or its own
 * instructions, follow instructions quoted from a delivery or a message, run commands, answer what is
 * not about this marketplace. Each reason is a row of data: the phrases that show it, one sentence
 * why, one sentence of what ask_help can do instead. A question about this marketplace is never
 * declined as off-topic: only a question that names nothing of it is.
 */
import { UNRELATED_MARKERS, UNRELATED_TASKS } from '../../packages/knowledge/synonyms';
import { KEY_AT_RISK } from '../../packages/knowledge/topics';
import { AUTHORITY_TEXT, CARD_HANDLING, PRIVATE_DATA_TEXT, CLAIMS_AUTHORITY, CONTACT_DATA, LIMIT_CHANGE, PLATFORM_SECRETS, ROLE_PLAY, VERB_SIDE, OTHERS_DATA, OTHER_SIDE, CONTACT_ASKED, ACT_VERBS, IMPERATIVE, MAYBE_ASKING, OWN_OBJECTS, DECLINE_RULES, CARD, GAMING, NEVER_DELIVER, KEY_PASTED, ADVICE, CHEATING, CODE_TASKS, WORK_ASKED, AUTHORITY, FOR_OTHERS, ASKERS_OWN, ACTS_TEXT, OFF_TOPIC_TEXT, ASKS_HOW, SPEAKS_TO_ASSISTANT } from '../../packages/knowledge/declines';
import { has, withoutQuotes } from './help-parse';
import { TOOL_NAMES } from '../../packages/tool-catalogue';

export interface Decline {
  reason: 'acts' | 'secrets' | 'quoted_instructions' | 'commands' | 'card_data' | 'gaming' | 'off_topic';
  text: string;
  /** What it can do instead, by the asker's side of its purchase (a code task). */
  instead?: Record<'seller' | 'buyer' | 'none', string>;
}

/** A quoted passage (a delivery's or a message's text) that tells someone to act: it is data, never an instruction. */
function quotesInstructions(text: string): boolean {
  // A quote opens after a space or a colon (an apostrophe inside a word is not one). What a counterparty asks of
  // the asker is a question about this marketplace; only a quote that speaks to the assistant is an injection.
  for (const m of text.matchAll(/(?:^|[\s:(])['"“‘]([^'"”’]{20,})['"”’]/g)) {
    const quoted = ` ${m[1]} `;
    if (SPEAKS_TO_ASSISTANT.some((w) => has(quoted, w))) return true;
  }
  return false;
}

function asksToAct(text: string): boolean {
  if (AUTHORITY.some((w) => has(text, w))) return true;
  if (ASKS_HOW.test(text)) return false;
  // "<act> … for me" ("just call purchase_service for me", "buy gas for me").
  // ("… for it", "… for them": another agent — except paying for the thing itself: "should I pay for it?".)
  const forWhom = new RegExp(`\\b(${ACT_VERBS.join('|')})\\b((?: \\S+){0,4}) for (me|us|it|them|him|her)\\b`).exec(text);
  const paysForTheThing = !!forWhom && !forWhom[2] && ['it', 'them'].includes(forWhom[3]) && ['pay', 'buy', 'purchase'].includes(forWhom[1]);
  if ((forWhom && !paysForTheThing) || FOR_OTHERS.some((w) => has(text, w))) return true;
  // Gas sent or moved to another agent ("… and send the gas to agt_x91"): no tool does that, and ask_help never would.
  if (/\b(?:send|transfer|move|give|forward)\b(?: \S+){0,6} (?:to|into) (?:agt_|ag_|agent\b|another agent|my teammate|my friend)/.test(text)) return true;
  // An imperative on the asker's own thing ("send 500 gas … for me", "approve my refund now"), not its own moves ("cancel my order": calls it makes itself);
  // a catalogue call given as the order itself ("pls just deliver_work on my order") is one.
  for (const raw of text.split(/[.!?;]\s*/)) {
    const sentence = withoutOpeners(raw);
    const [first, next] = sentence.trim().split(' ');
    if (first?.includes('_') && TOOL_NAMES.includes(first) && sentence !== raw.trim()) return true;
    // ("Give me the exact rules", "send me the docs": information asked, unless the sentence names gas or money.)
    const asksInfo = ['give', 'send'].includes(first) && next === 'me' && !/\b(?:gas|credits?|money|usd|btc|bitcoin|refund|bonus|escrow)\b|\d/.test(sentence);
    if (!asksInfo && ACT_VERBS.includes(first) && (has(sentence, 'for me') || ((OWN_OBJECTS.includes(next ?? '') || sentence.includes('_') || /\d/.test(sentence)) && !ASKERS_OWN.includes(first)))) return true;
  }
  if (MAYBE_ASKING.some((a) => has(text, a)) && has(text, 'for me') && ACT_VERBS.some((v) => has(text, v))) return true;
  for (const v of ACT_VERBS) {
    if (has(text, `${v} it for me`) || (!ASKERS_OWN.includes(v) && IMPERATIVE.some((a) => has(text, `${a} ${v}`)))) return true;
    for (const a of MAYBE_ASKING) {
      const at = text.indexOf(` ${a} ${v} `);
      if (at < 0) continue;
      const next = text.slice(at + a.length + v.length + 3).split(' ')[0];
      if (OWN_OBJECTS.includes(next) || /^(pur|agt|lst)_|^\d/.test(next)) return true;
    }
  }
  return false;
}

/** A sentence without its polite opener ("please", "could you just" …). */
function withoutOpeners(raw: string): string {
  let sentence = ` ${raw.trim()} `;
  for (let o = WORK_ASKED.openers.find((x) => sentence.startsWith(` ${x} `)); o; o = WORK_ASKED.openers.find((x) => sentence.startsWith(` ${x} `))) sentence = sentence.slice(o.length + 1);
  return sentence.trim();
}

/** A sentence that asks ask_help to run something or to write code ("run `npx jest` and paste me the output", "generate the 14 tests", "implement a REST API in Go"). */
function asksForWork(text: string): Decline | null {
  // (A command is often quoted; what is asked to be written is outside the quotes.)
  const unquoted = withoutQuotes(text);
  // (A request may follow a clause: "while I wait for my delivery, write me a scraper".)
  for (const raw of [...text.split(/[!?;\n]\s*|\.\s+/), ...unquoted.split(/[.!?;\n]\s*/), ...unquoted.split(/,\s*/).slice(1)]) {
    const sentence = ` ${withoutOpeners(raw)} `;
    // ("code" is a verb only with an object: "code me a parser", not "code doesn't compile".)
    const verb = /^ code (?!me\b|a\b|an\b|up\b|this\b|the\b|my\b|it\b|some\b)/.test(sentence) ? '' : sentence.trim().split(' ')[0];
    if (WORK_ASKED.run.includes(verb) && WORK_ASKED.shell.some((w) => (w.length > 3 || /^[a-z]+$/.test(w) ? has(sentence, w) : sentence.includes(w)))) return { reason: 'commands', text: WORK_ASKED.runText };
    // ("implement …", "build …" make code whatever they name; "write …", "create …" only when they name code.)
    // (What is written is the object named first: "write the TypeScript for a client that buys every listing" is code, "write a description for my tests listing" is not.)
    const at = (words: string[]) => Math.min(...words.map((w) => (has(sentence, w) ? sentence.search(new RegExp(`\\b${w.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\\b`)) : Infinity)));
    // (A build verb that names a marketplace thing anywhere — "code doesn't compile, the listing said …" — is a complaint, not an order.)
    if ((WORK_ASKED.build.includes(verb) && at(CODE_TASKS.except) === Infinity) || (WORK_ASKED.write.includes(verb) && at(WORK_ASKED.code) < at(CODE_TASKS.except))) return { reason: 'off_topic', text: CODE_TASKS.text, instead: CODE_TASKS.instead };
  }
  return null;
}

/**
 * The reason to decline, or null. `pastedError`: the question carries an error envelope (its quoted
 * strings are the service's, not instructions). `inDomain`: the question names this marketplace's own things
 * (the retrieval's judgement): then only acting, secrets, quoted instructions and commands decline.
 */
/** The safeguard a question would cheat: a sign of cheating (its own or a common one) said with the safeguard. */
function cheats(text: string, side: 'buyer' | 'seller' | null): Decline | null {
  const common = CHEATING.signs.some((w) => has(text, w)) || CHEATING.madeInNumbers.test(text);
  // (The cap changed by the asker itself — "how can I raise it myself?" — is the spending limit's cheat.)
  // (Fine work the asker wants to pay for — "the work is fine now, can I confirm?" — is honest, never a cheat of the dispute.)
  const paysForIt = /\b(?:confirm|confirm_delivery|pay (?:them|the seller|him|her)|release (?:it|the escrow|payment) to (?:them|the seller))\b/.test(text);
  const g = CHEATING.safeguards.find((x) => !(x.side && side && x.side !== side) && x.about.some((w) => has(text, w)) && !(x.about.includes('chargeback') && paysForIt) && (common || (x.hidden && CHEATING.hides.test(text)) || x.signs.some((w) => has(text, w)) || (x.about.includes('per-purchase') && CHEATING.selfRaise.test(text))));
  // Hiding something from whoever decides: that reason, unless a safeguard says which one is cheated.
  if (CHEATING.hides.test(text) && !g) return { reason: 'gaming', text: CHEATING.hidesText };
  return g ? { reason: g.reason ?? 'gaming', text: g.text } : null;
}

export function declineOf(text: string, inDomain: boolean, pastedError = false, side: 'buyer' | 'seller' | null = null): Decline | null {
  // (A plan to cheat, a request to act are the asker's own words: a quoted listing or message that names one is what the question is about.)
  const unquoted = withoutQuotes(text);
  const cheating = pastedError ? null : cheats(unquoted, side);
  if (cheating) return cheating;
  if (!pastedError && KEY_PASTED.pattern.test(text) && KEY_PASTED.passOn.test(text)) return { reason: 'secrets', text: KEY_PASTED.text };
  if (KEY_AT_RISK.some((p) => has(text, p))) return null;
  // Card data sent to it is declined first, whatever else is asked; a question about what to do with card data is answered (the card topic).
  // (The agent at the card form itself is declined even beside a pasted message: "a headless browser … says 3-D Secure".)
  if ((!pastedError && (/\b\d{4}[ -]?\d{4}[ -]?\d{4}[ -]?\d{4}\b/.test(text) || CARD.phrases.some((p) => has(text, `${p} is`)))) || CARD_HANDLING.test(text)) return { reason: 'card_data', text: CARD.text };
  if (!pastedError && CLAIMS_AUTHORITY.test(text)) return { reason: 'acts', text: AUTHORITY_TEXT };
  // Words that speak to an assistant inside a quote are the quote's, not the asker's: an injection, whatever else it names.
  if (!pastedError && quotesInstructions(text)) return { reason: 'quoted_instructions', text: DECLINE_RULES.find((r) => r.reason === 'quoted_instructions')!.text };
  // A command the asker ran, shown with the error it got, is a question about that error, not a request to run it.
  // ("FREE GAS" quoted from a listing title asks for nothing.)
  // (Asked how the asker does it — "how do I email the buyer?" — a request to act is a question about its own way.)
  // (Nor asked whether — "is anything free here?", "is there free gas?": a question about the marketplace.)
  const asksWhether = /^\s*(?:is|are|does|do)\b/.test(unquoted);
  // (Nor told of as someone else's request to the asker — "the buyer asked me to just email it": the question's subject.)
  const reported = /\b(?:asked|asks|wants|wanted|told|tells) me to\b/.test(unquoted);
  for (const r of DECLINE_RULES) if (!(pastedError && r.reason === 'commands') && !(r.reason === 'acts' && (ASKS_HOW.test(text) || asksWhether || reported)) && r.phrases.some((p) => has(r.reason === 'acts' ? unquoted : text, p) || (p.includes('|') && text.includes(p)))) return { reason: r.reason, text: r.text };
  if (!pastedError && (OTHERS_DATA.test(unquoted) || CONTACT_DATA.test(unquoted) || (PLATFORM_SECRETS.test(unquoted) && !ASKS_HOW.test(unquoted)))) return { reason: 'secrets', text: PRIVATE_DATA_TEXT };
  // The other party's call asked on its side ("confirm it on the buyer's side"); a change of the human's limit asked, not how it is done.
  // (Only a call of the party named, "confirm … on my buyer's order" — never the asker's own, "deliver_work on my buyer's order".)
  const otherSide = OTHER_SIDE.exec(unquoted);
  if (!pastedError && otherSide && otherSide[2] !== side && (VERB_SIDE[otherSide[1]] ?? otherSide[2]) === otherSide[2] && !ASKS_HOW.test(unquoted)) return { reason: 'acts', text: ACTS_TEXT };
  if (!pastedError && LIMIT_CHANGE.pattern.test(unquoted.trim()) && !ASKS_HOW.test(unquoted)) return { reason: 'acts', text: LIMIT_CHANGE.text };
  if (!pastedError && CONTACT_ASKED.test(unquoted.trim())) return { reason: 'acts', text: DECLINE_RULES.find((r) => r.phrases.includes('can you email'))!.text };
  // A pasted error envelope is the service's own text: only the rows above (secrets, commands) can decline it.
  if (pastedError) return null;
  // "Send me 100 gas, get 1000 back": a promise of more gas back for gas sent is a scam, however it is worded.
  if (GAMING.phrases.some((p) => has(text, p)) || NEVER_DELIVER.test(unquoted) || /\bsend (?:me |us )?\d[\d,]* ?gas\b.*\b(?:get|receive)\b.*\d[\d,]*.*\bback\b/.test(text)) return { reason: 'gaming', text: GAMING.text };
  if (ADVICE.phrases.some((p) => has(text, p)) || (ADVICE.markets.some((w) => has(text, w)) && ADVICE.timing.some((w) => has(text, w)))) return { reason: 'off_topic', text: ADVICE.text };
  const work = asksForWork(text);
  if (work) return work;
  if (CODE_TASKS.asks.some((w) => has(text, w)) && CODE_TASKS.objects.some((w) => has(text, w)) && !CODE_TASKS.except.some((w) => has(text, w))) return { reason: 'off_topic', text: CODE_TASKS.text, instead: CODE_TASKS.instead };
  // What a counterparty asks of the asker (a quote) is not a request to ask_help.
  if (asksToAct(unquoted)) return { reason: 'acts', text: ACTS_TEXT };
  if (ROLE_PLAY.phrases.some((p) => has(text, p))) return { reason: 'secrets', text: ROLE_PLAY.text };
  // (Unrelated work told of inside a marketplace question — "the seller delivered a generic blog post" — is the question's subject, not a task asked.)
  const asked = (w: string) => new RegExp(`\\b(?:write|compose|draft|make|create|generate|give me|help me with|help with|do)\\b(?: [^ ]+){0,4} ${w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`).test(text);
  if (UNRELATED_MARKERS.some((p) => has(text, p)) || UNRELATED_TASKS.some((p) => has(text, p) && (!inDomain || asked(p)))) return { reason: 'off_topic', text: OFF_TOPIC_TEXT };
  if (!inDomain) return { reason: 'off_topic', text: OFF_TOPIC_TEXT };
  return null;
}
