/**
 * The next call learned from labelled questions (issue #26, round 8). The hand-written readers
 * (help-situation, help-want) answer the situations they were written for; a situation worded
 * differently ("I've got the review done as markdown, next?", "my endpoint never got anything")
 * slips past them. Every question of the tuning sets carries the calls an expert accepts as its next
 * step (packages/knowledge/labelled-questions.json, `npm run help:examples`); a naive Bayes model over
 * their words and word pairs (TF-IDF weighted) ranks the catalogue's calls for a new question, with
 * the caller's own situation (an order to deliver, a delivery to check, a dispute, a spending limit) as
 * one more word. Trained when first asked, in a few milliseconds; nothing is sent anywhere.
 *
 * It replaces the readers' call only when it prefers its own by a clear margin (LEARNED_MARGIN), never a
 * call ruled by what was pasted or stated (help.ts), and never one the asker made or that is out of turn;
 * measured leave-one-set-out (each set graded by a model that never saw it) in docs/adr/0026-ask-help-design.md.
 */
import { TOOLS } from '../../packages/tool-catalogue';
import type { HelpAccount } from '../../packages/contracts/support';
import labelled from '../../packages/knowledge/labelled-questions.json';

export interface LabelledQuestion {
  /** The tuning set it comes from (services/support/test/heldout/<set>.json). */
  set: string;
  q: string;
  /** The asker's account (account-style questions): buyer_delivered, buyer_pending, seller_pending, seller_disputed, buyer_limits. */
  setup?: string;
  /** The calls an expert accepts as the next step. */
  next: string[];
}

/** Additive smoothing of the word counts: small, so that a word seen with one call speaks for it. */
const SMOOTHING = 0.03;
/**
 * How much more (log-likelihood) the learned call must score than the readers' call to replace it:
 * over a guess (a section's example call, a catalogue match, none), over a situation rule's call, and
 * over the call an error's guide or a section names. Chosen leave-one-set-out (docs/adr/0026-ask-help-design.md).
 */
export const LEARNED_MARGIN = { overGuess: 2, overRule: 4, overGuide: 6 };
const CATALOGUE = new Set(TOOLS.map((t) => t.name));

/** Words and adjacent word pairs of a question, and the asker's situation as one more word. */
function features(question: string, situation: string | null): string[] {
  const words = question.toLowerCase().match(/[a-z_0-9]+/g) ?? [];
  const out = [...words];
  for (let i = 1; i < words.length; i++) out.push(`${words[i - 1]} ${words[i]}`);
  if (situation) out.push(`SITUATION_${situation}`);
  return out;
}

class NextCallModel {
  private readonly idf = new Map<string, number>();
  private readonly tools: string[];
  private readonly logPrior: number[];
  /** feature → weighted count per tool (index into tools). */
  private readonly counts = new Map<string, Float64Array>();
  private readonly totals: Float64Array;

  constructor(examples: LabelledQuestion[]) {
    const docs = examples.map((e) => ({ f: features(e.q, e.setup ?? null), next: e.next.filter((t) => CATALOGUE.has(t)) })).filter((d) => d.next.length);
    const df = new Map<string, number>();
    for (const d of docs) for (const f of new Set(d.f)) df.set(f, (df.get(f) ?? 0) + 1);
    for (const [f, n] of df) this.idf.set(f, Math.log(docs.length / (1 + n) + 1));
    this.tools = [...new Set(docs.flatMap((d) => d.next))].sort();
    const index = new Map(this.tools.map((t, i) => [t, i]));
    const prior = new Float64Array(this.tools.length);
    this.totals = new Float64Array(this.tools.length);
    for (const d of docs) {
      const v = this.vector(d.f);
      for (const t of d.next) {
        const i = index.get(t)!;
        prior[i] += 1 / d.next.length;
        for (const [f, x] of v) {
          let c = this.counts.get(f);
          if (!c) this.counts.set(f, (c = new Float64Array(this.tools.length)));
          c[i] += x / d.next.length;
          this.totals[i] += x / d.next.length;
        }
      }
    }
    const sum = prior.reduce((a, b) => a + b, 0);
    this.logPrior = [...prior].map((p) => Math.log(p / sum));
  }

  /** TF-IDF weights of the known features, L2-normalised. */
  private vector(fs: string[]): Map<string, number> {
    const tf = new Map<string, number>();
    for (const f of fs) if (this.idf.has(f)) tf.set(f, (tf.get(f) ?? 0) + 1);
    const v = new Map([...tf].map(([f, n]) => [f, (1 + Math.log(n)) * this.idf.get(f)!]));
    const norm = Math.sqrt([...v.values()].reduce((a, x) => a + x * x, 0)) || 1;
    for (const [f, x] of v) v.set(f, x / norm);
    return v;
  }

  /** Every learned call with its score (log-likelihood), best first. */
  rank(question: string, situation: string | null): Array<{ tool: string; score: number }> {
    const v = this.vector(features(question, situation));
    const V = this.counts.size;
    return this.tools
      .map((tool, i) => {
        let score = this.logPrior[i];
        for (const [f, x] of v) score += x * Math.log(((this.counts.get(f)?.[i] ?? 0) + SMOOTHING) / (this.totals[i] + SMOOTHING * V));
        return { tool, score };
      })
      .sort((a, b) => b.score - a.score);
  }
}

let excluded = new Set<string>();
let model: NextCallModel | null = null;

/**
 * For a leave-one-set-out measurement only (npm run help:eval -- <set> --unseen): learn without these
 * sets, so a set is graded by a model that never saw its questions.
 */
export function excludeLabelledSets(sets: string[]): void {
  excluded = new Set(sets);
  model = null;
}

/** The caller's situation, as the labelled account questions name it; null when it has nothing open. */
export function accountSituation(account: HelpAccount | null | undefined): string | null {
  if (!account) return null;
  for (const p of account.purchases ?? []) {
    if (p.role === 'buyer' && p.status === 'delivered') return 'buyer_delivered';
    if (p.role === 'buyer' && p.status === 'awaiting_delivery') return 'buyer_pending';
    if (p.role === 'seller' && p.status === 'awaiting_delivery') return 'seller_pending';
    if (p.role === 'seller' && p.status === 'disputed') return 'seller_disputed';
  }
  return account.limits?.setByHuman && account.limits.perPurchaseMaxGas !== null ? 'buyer_limits' : null;
}

export interface LearnedCall {
  tool: string;
  /** How much more the model prefers it than `than` (the readers' call); Infinity when there was none. */
  margin: number;
}

/** The learned next call for a question, and its margin over the readers' call `than`. */
export function learnedCall(question: string, account: HelpAccount | null | undefined, than: string | null): LearnedCall | null {
  model ??= new NextCallModel((labelled as LabelledQuestion[]).filter((e) => !excluded.has(e.set)));
  const ranked = model.rank(question, accountSituation(account));
  if (!ranked.length) return null;
  const other = than ? ranked.find((r) => r.tool === than) : undefined;
  return { tool: ranked[0].tool, margin: than === null ? Infinity : ranked[0].score - (other?.score ?? -Infinity) };
}
