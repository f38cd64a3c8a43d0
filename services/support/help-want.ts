/**
 * The call the asker wants next (issue #26, round 7). The rules and situations of help-situation.ts
 * pick a call for a state ("delivered → get_delivery"); the asker often says which action it wants
 * instead ("the work is good, what do I call so the seller gets paid?", "I finished, which call now?",
 * "I forgot to tell the seller the repo URL"). Those words are matched against every tool's catalogue
 * description and arguments (HelpIndex.rankTools, the BM25 index the answers come from), and the
 * candidates are gated by what the situation allows:
 *   - a purchase state and side the question states admit only the purchase machine's calls for
 *     that side from that state (allowedCalls), so a refund, a new purchase or a rating out of turn
 *     is never suggested;
 *   - a tool the asker says it already called successfully is not its next call.
 * The ranked call replaces the chosen one only when the chosen one is soft — a read that only shows
 * the state (get_purchase, get_delivery …), a call already made, a call the stated state does not
 * allow, or none — and the catalogue clearly prefers the other.
 */
import type { NextStep } from '../../packages/contracts/support';
import type { RankedTool } from './help';
import { exampleArguments } from '../../packages/knowledge';
import { PURCHASE_BOUND, allowedCalls, describe, movesOf, sideMakes } from './help-lifecycle';
import { TOOLS } from '../../packages/tool-catalogue';
import { askingPart, namedIds } from './help-goals';
import { NOT_DELIVERED, UNHAPPY, roleOf } from './help-situation';

/** Calls that show where things stand: a default when nothing says what is wanted, not a want. */
const STATE_READS = new Set(['get_purchase', 'get_delivery', 'list_messages', 'list_orders']);
/** Never a ranked next call: asking again, or filing a bug (only a reported fault leads there). */
const NOT_RANKED = new Set(['ask_help', 'report_bug', 'report_experience']);
/** Calls that change something: made once, they are behind the asker (a read may be made again). */
const MUTATING = new Set(TOOLS.filter((t) => t.mutating).map((t) => t.name));
/**
 * The calls that go with a call, from the catalogue's own words: a tool whose description names another
 * ("Needs connect_payouts first", "Poll it after buy_gas", "Then poll wallet") goes with it, both ways.
 * After a call the asker made, these are its likely next calls.
 */
const GOES_WITH = new Map<string, Set<string>>(TOOLS.map((t) => [t.name, new Set<string>()]));
for (const a of TOOLS) {
  for (const b of TOOLS) {
    if (a.name === b.name || a.aliasOf === b.name || b.aliasOf === a.name || !new RegExp(`\\b${b.name}\\b`).test(a.description)) continue;
    GOES_WITH.get(a.name)!.add(b.name);
    GOES_WITH.get(b.name)!.add(a.name);
  }
}
/** A call's prerequisite, as its catalogue description states it ("Needs connect_payouts first"). */
const NEEDS_FIRST = new Map(
  TOOLS.flatMap((t) => {
    const m = /\bNeeds (\w+) first\b/.exec(t.description);
    return m && TOOLS.some((o) => o.name === m[1]) ? [[t.name, m[1]] as const] : [];
  }),
);
/** How much more a call that goes with one the asker just made counts. */
const GOES_WITH_BOOST = 3;
/** Without that link or a stated purchase state, a replacement must match at least this weighted share of the question. */
const MIN_COVERAGE = 0.3;

/** A section's example call gives way only to a tool matching this many times better… */
const EXAMPLE_MARGIN = 2;
/** …and this weighted share of the question. */
const EXAMPLE_COVERAGE = 0.6;
/** Asking what follows from something (not which call to make): the section's call stands. */
const ASKS_AN_OUTCOME = /\bwhat (?:happens|will happen|would happen)\b|\bwhat if\b/;

/** A call whose outcome is unknown (it timed out): it may have to be retried, it is not behind the asker. */
const UNKNOWN_OUTCOME = /\b(?:timed? ?out|timeout|econn\w+|network error|connection (?:reset|refused|dropped|closed)|no response)\b/;
/** Asking to look at something: then a read is what is wanted. */
const ASKS_TO_SEE = /\b(?:see|look (?:at|up|into|for)|read|view|check|show|open|download|status|where|track)\b/;
/** Asking for a call to make (not how things will turn out): "which call now?", "what do I do next?". */
const ASKS_FOR_A_CALL = /\b(?:what (?:do|should|can|must) i (?:do|call)|what i do|which (?:call|tool)|next|now|how (?:do|can|should) i|want to|need to)\b/;
/** Outside a stated purchase, the wanted call matches the question at least this share as well as the best-matching tool not yet called. */
const MIN_SHARE_OF_BEST = 0.3;

export interface WantedCall {
  nextStep: NextStep;
  /** The line that leads the answer with it. */
  lead: string;
}

/** The last question read (wantedCall and canComeNext read the same question in one answer). */
let lastRead: { question: string; read: ReturnType<typeof readQuestion> } | null = null;

/** What the question says is behind the asker and which calls its stated state and side allow. */
function readAsk(question: string): ReturnType<typeof readQuestion> {
  if (lastRead?.question !== question) lastRead = { question, read: readQuestion(question) };
  return lastRead.read;
}

function readQuestion(question: string) {
  const role = roleOf(question, null);
  const d = describe(question, role);
  const side = d.side;
  // An agent's "pending order" is one not delivered yet (the machine's own pending, funding, lasts milliseconds).
  const state = d.state === 'pending' ? 'awaiting_delivery' : d.state;
  const allowed = state && d.stateStated && side ? allowedCalls(state, side) : null;
  const ask = askingPart(question.toLowerCase());
  // What the asker says it already did (and that worked) is behind it: not a tool the question asks
  // about ("what does ack_purchase do?"), a call that failed or may not have gone through (it may be
  // retried), or a call the other party made.
  const said = new Set(d.called.filter((t) => !d.failed.includes(t) && !d.byOther.includes(t) && !new RegExp(`\\b${t}\\b`).test(ask)));
  const done = new Set([...said].filter((t) => MUTATING.has(t) && !UNKNOWN_OUTCOME.test(question.toLowerCase())));
  // A call the machine gives only to the other side is out of turn for the side the asker states.
  const stated = role === 'buyer' || role === 'seller' ? role : null;
  const fits = (tool: string) => (!allowed || !PURCHASE_BOUND.has(tool) || allowed.has(tool)) && (!stated || sideMakes(tool, stated));
  return { d, state, side, allowed, ask, said, done, fits };
}

/** What the asker says is set up already, in its own words ("my payout address is already connected"): that call is behind it. */
const ALREADY_SET_UP: Record<string, RegExp> = {
  connect_payouts: /\b(?:already|is|are|was|been|got(?: it)?) connected\b|\bconnected (?:my|a|the) (?:payout|btc|bitcoin|wallet|address)|\bpayout (?:address|wallet) is (?:set|saved|connected)\b/,
  register: /\b(?:already|i'?m|i am|we'?re|i have) registered\b|\bregistered (?:fine|ok|already|successfully)\b/,
  set_webhook: /\bwebhook (?:is )?(?:already )?(?:set|registered|configured|in place)\b|\balready (?:have|set|registered) (?:a |my )?webhook\b/,
};

/** Giving the gas back or contesting needs a reason the asker states: a problem, a delay, or the wish itself. */
const MONEY_BACK = new Set(['request_refund', 'dispute_purchase']);
const A_REASON_TO_UNDO = new RegExp(
  `${UNHAPPY.source}|${NOT_DELIVERED.source}|\\b(?:refund\\w*|money back|gas back|back out|cancel\\w*|call (?:it )?off|undo|dispute\\w*|contest|can'?t|cannot|won'?t|unable|not able|too late|late|overdue|wait\\w*|silen\\w*|respond\\w*|ghost\\w*|duplicate|twice|by mistake|mistake\\w*|accident\\w*|wrong|instead|don'?t (?:need|want)|no longer|changed? my mind|give (?:it|the gas|their gas|them their gas) back|return)\\b`,
);

/** Whether a call can be the asker's next one: not one it says it made or set up, in turn for the state and side it states, and a refund or dispute only with a reason. */
export function canComeNext(question: string, tool: string): boolean {
  const { done, fits } = readAsk(question);
  const q = question.toLowerCase();
  return !done.has(tool) && !ALREADY_SET_UP[tool]?.test(q) && fits(tool) && (!MONEY_BACK.has(tool) || A_REASON_TO_UNDO.test(q));
}

/**
 * The call the asker wants, when it should replace `chosen`; null when `chosen` stands. `ranked` is
 * HelpIndex.rankTools(question); `descriptions` the catalogue's first sentence of each tool.
 */
export function wantedCall(question: string, chosen: NextStep | null, ranked: RankedTool[], descriptions: Map<string, string>, errorExplained: boolean, sectionExample = false): WantedCall | null {
  const { d, state, side, allowed, ask, said, done, fits } = readAsk(question);
  const current = chosen?.tool ?? null;
  // A read that only shows the stated purchase, when the asker asks for a call and not to look.
  // (Only when the machine gives this side a move from this state: else the purchase waits for someone else, and watching it is right.)
  const readInstead = allowed !== null && movesOf(state!, side!).length > 0 && current !== null && STATE_READS.has(current) && ASKS_FOR_A_CALL.test(ask) && !ASKS_TO_SEE.test(ask);
  // A section's example call, when the catalogue matches another tool far better and most of the question.
  const example = sectionExample && !errorExplained && !ASKS_AN_OUTCOME.test(ask);
  const soft = current === null || (!errorExplained && (done.has(current) || !fits(current))) || readInstead || example;
  if (!soft) return null;
  const follows = (tool: string) => [...done].some((t) => GOES_WITH.get(t)?.has(tool));
  const candidates = ranked
    .filter((r) => !NOT_RANKED.has(r.tool) && !said.has(r.tool) && !d.planned.includes(r.tool) && (allowed ? allowed.has(r.tool) : fits(r.tool)) && !(readInstead && STATE_READS.has(r.tool)))
    .map((r) => ({ ...r, score: r.score * (follows(r.tool) ? GOES_WITH_BOOST : 1) }))
    .sort((a, b) => b.score - a.score);
  const best = candidates[0];
  // Outside a stated purchase the machine does not narrow the candidates: the catalogue must be sure.
  if (best && !allowed && !follows(best.tool) && best.coverage < MIN_COVERAGE) return null;
  const top = ranked.find((r) => !NOT_RANKED.has(r.tool) && !said.has(r.tool));
  if (!best || best.tool === current || !top || (!allowed && best.score < top.score * MIN_SHARE_OF_BEST)) return null;
  const currentScore = ranked.find((r) => r.tool === current)?.score ?? 0;
  if (example && !readInstead && current !== null && (best.score < currentScore * EXAMPLE_MARGIN || best.coverage < EXAMPLE_COVERAGE)) return null;
  // Its prerequisite comes first, unless the asker made that call already.
  const first = NEEDS_FIRST.get(best.tool);
  const tool = first && !said.has(first) ? first : best.tool;
  if (tool === current) return null;
  return callTo(question, tool, descriptions, tool !== best.tool ? ` Then ${best.tool}: ${descriptions.get(best.tool) ?? ''}` : '');
}

/** A call to suggest, with the ids the question names, and the line that leads the answer with it (then `then`). */
export function callTo(question: string, tool: string, descriptions: Map<string, string>, then = ''): WantedCall {
  const step = namedIds(question, { lead: '', nextStep: { tool, arguments: exampleArguments(tool) }, sections: [], lookedAt: [] }).nextStep;
  return { nextStep: step, lead: `Call ${tool} ${JSON.stringify(step.arguments)}: ${descriptions.get(tool) ?? ''}${then}`.trim() };
}
