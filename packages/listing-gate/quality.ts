/**
 * The listing quality gate: a deterministic score 0–100 from named signals (spec §2.2, §7.3). The listings
 * service enforces it on list and update; ask_help explains a verdict with it, so both read the same rules.
 * Pure: the same listing always gets the same score, so a seller can follow the hints and retry.
 *
 *   concreteTitle     15  the title names a concrete skill (an action or a concrete artefact, 2+ words)
 *   statesInputs      20  the description says what the buyer provides
 *   statesDeliverable 25  the description says what the buyer gets back
 *   specificity       20  formats, quantities/limits, scope, turnaround (5 points each kind, at most 20)
 *   priceInBand       10  the price sits inside the spec §8 bands (50–5000) and within 10× of the category anchor
 *   notDuplicate      10  not a near-copy of one of the seller's other listings (a near-copy also caps the score at 40)
 *
 * Spec §7.3 makes three of them requirements: with no concrete title, no inputs or no deliverable the
 * score is capped at 50 (below passScore), however well the rest scores.
 */
import { CATEGORY_ANCHOR_GAS, PASS_SCORE, PRICE_BANDS } from '../market-rules';
import { contentWords, jaccard, shingles, words } from './text';

export interface QualityIssue {
  code: string;
  message: string;
  hint: string;
}

export interface QualitySignals {
  concreteTitle: number;
  statesInputs: number;
  statesDeliverable: number;
  specificity: number;
  priceInBand: number;
  notDuplicate: number;
}

export interface QualityReport {
  score: number;
  passScore: number;
  passed: boolean;
  signals: QualitySignals;
  issues: QualityIssue[];
}

export interface ListingDraft {
  title: string;
  description: string;
  priceGas: number;
  category: string;
}

export const SIGNAL_WEIGHTS: QualitySignals = {
  concreteTitle: 15,
  statesInputs: 20,
  statesDeliverable: 25,
  specificity: 20,
  priceInBand: 10,
  notDuplicate: 10,
};

/** A near-duplicate (word-shingle Jaccard similarity at or above this) of a seller's own listing. */
export const DUPLICATE_SIMILARITY = 0.7;
export const DUPLICATE_SCORE_CAP = 40;
export const MISSING_REQUIREMENT_SCORE_CAP = 50;

const ACTION_WORDS = new Set(
  (
    'write writing build building create review reviewing fix fixing debug debugging generate migrate migration audit auditing ' +
    'design designing convert conversion analyze analyse analysis research summarize summarise summary summaries deploy deployment ' +
    'configure configuration translate translation optimize optimise tune test testing tests refactor refactoring port porting draft ' +
    'scrape scraping clean cleaning benchmark document documentation implement integrate integration set setup automate automation ' +
    'monitor monitoring harden hardening upgrade compare comparison map mapping model modeling modelling label labeling extract ' +
    'extraction transcribe profile profiling triage investigate find compile curate collect validate validation plan planning ' +
    'dockerize containerize provision install secure scan lint format illustrate sketch mock prototype rewrite edit proofread ' +
    'backfill dedupe deduplicate normalize visualize chart train fine-tune evaluate estimate forecast report'
  ).split(' '),
);

const ARTEFACT_WORDS = new Set(
  (
    'api apis cli sdk test tests unit e2e dockerfile docker kubernetes k8s helm terraform ci cd pipeline pipelines workflow workflows ' +
    'script scripts bot bots schema schemas query queries sql database dashboard dashboards report reports logo icon icons banner ' +
    'landing page website component components library migration migrations regex parser scraper crawler dataset datasets csv json ' +
    'spreadsheet brief memo literature paper papers patent competitor market pricing readme docs spec specification typescript ' +
    'javascript python rust golang java react vue node.js postgres postgresql mysql redis aws gcp azure github gitlab nginx linux ' +
    'security vulnerability dependency dependencies changelog openapi graphql webhook webhooks stripe lambda cron backup backups ' +
    'alerting prometheus grafana jest pytest playwright cypress figma svg ui ux wireframe wireframes mockup mockups slide deck ' +
    'translation summary summaries outline etl model classifier embedding embeddings prompt prompts invoice contract email emails'
  ).split(' '),
);

const GENERIC_TITLES = /^(my |our |the |a |an )?(service|services|offer|offers|listing|product|stuff|things|help|helper|anything|everything|work|job|gig|misc|various|general|ai|ai agent|agent|tasks?|solutions?|consulting|freelance)( services?)?[.!]?$/i;

const INPUT_PATTERNS: RegExp[] = [
  /(^|[.!?:]\s+)(describe|send|share|provide|give me|upload|paste|tell me|attach|point me to|list)\b/im,
  /\byou (provide|send|give|share|supply|upload|paste|point me to|describe|tell me|specify|attach|list)\b/i,
  /\b(send|give|share|provide|paste|upload|attach|supply|forward) (me|us)\b/i,
  /\b(provide|send|share|paste|upload|attach|supply) (your|the|a|an|me|us|up to|one|two|three|\d+)\b/i,
  /\b(input|inputs|requirements?|brief|what i need|i need|needed from you|from you|buyer provides|buyer supplies|you'll need to|please include|include in your requirements)\b/i,
  /\b(link to|url of|url to|access to|read access|repo url|repository url|given (a|an|your|the))\b/i,
  /\b(based on|starting from|from) (your|the buyer'?s?)\b/i,
  /\b(your|the buyer'?s?) (repo|repository|codebase|code|project|module|file|files|dataset|data|spec|question|topic|url|site|website|schema|logs|brief|requirements|stack|app|application|service|draft|document|csv|api|prompt|list|keywords?|product|brand|domain|cluster|server|config|configuration|database|query|queries|paper|papers|function|component|text|notes|idea)\b/i,
];

const DELIVERABLE_PATTERNS: RegExp[] = [
  /\byou (get|receive|will get|will receive|'ll get|'ll receive|end up with)\b/i,
  /\b(deliver|delivers|delivered|delivering|deliverable|deliverables|delivery includes|output|outputs|returns?|produce|produces|hand over|handoff|hand-off)\b/i,
  /\bi (will|'ll)? ?(send back|write|produce|return|provide|deliver|create|build|draft|prepare|ship|open|submit|generate|compile|hand you)\b/i,
  /\bwe (will|'ll)? ?(send back|write|produce|return|provide|deliver|create|build|draft|prepare|ship|open|submit|generate|compile)\b/i,
  /\b(a|an|one|the|your|with a|plus a|and a) (pull request|pr|patch|diff|report|summary|spreadsheet|csv|json|markdown|pdf|document|doc|dockerfile|script|workflow|file|files|table|chart|dashboard|memo|brief|checklist|runbook|playbook|list|design|mockup|svg|png|logo|test suite|tests|config|configuration|migration|schema|dataset|translation|readme|changelog|bibliography|comparison|outline|plan|estimate|fix|pipeline|module|library|component|bot|cli|api|endpoint|query|queries)\b/i,
];

type StatedSignal = 'statesInputs' | 'statesDeliverable';

/** What the description must state (spec §7.3): the patterns that find it, and the issue when none does. */
const STATED: Record<StatedSignal, { patterns: RegExp[]; issue: QualityIssue }> = {
  statesInputs: {
    patterns: INPUT_PATTERNS,
    issue: {
      code: 'missing_inputs',
      message: 'The description does not say what the buyer must provide.',
      hint: 'Add a sentence starting "You provide: …" naming the inputs you need, e.g. "You provide: a link to the GitHub repo and the module path".',
    },
  },
  statesDeliverable: {
    patterns: DELIVERABLE_PATTERNS,
    issue: {
      code: 'missing_deliverable',
      message: 'The description does not say what the buyer gets back.',
      hint: 'Add a sentence starting "You get: …" naming the concrete output and its form, e.g. "You get: a pull request with the tests and a Markdown coverage summary".',
    },
  },
};

const FORMAT_PATTERN = /\b(json|csv|markdown|md|pdf|yaml|yml|xlsx|xml|html|svg|png|sql|dockerfile|pull request|pr|patch|diff|gist|notebook|ipynb|docx|openapi|jsonl|parquet|bibtex|mermaid|tsv)\b/i;
const QUANTITY_PATTERN = /\b\d[\d,.]*\s*(k\b|lines?|loc|files?|pages?|words?|sources?|papers?|endpoints?|tables?|rows?|records?|screens?|tests?|items?|urls?|sites?|queries|hours?|hrs?|days?|minutes?|mins?|services?|repos?|modules?|functions?|components?|questions?|charts?|slides?|revisions?|rounds?|languages?|%|percent)/i;
const SCOPE_PATTERN = /\b(up to|at most|maximum|max\.?|no more than|limit|limited to|excludes?|excluding|not included|out of scope|in scope|scope|only covers?|covers|does not include|doesn't include|one round|revisions?|includes?|including)\b/i;
const TURNAROUND_PATTERN = /\b(within \d+|in \d+ (hours?|days?)|turnaround|same day|next day|\d+\s*(h|hours?|days?) (turnaround|delivery)|delivered in|ready in)\b/i;

const BANDS_FLOOR_GAS = PRICE_BANDS[0].minGas;
const BANDS_CEILING_GAS = PRICE_BANDS[PRICE_BANDS.length - 1].maxGas;
/** "micro 50–150, standard 150–400 (preferred for first listings), …" from the bands themselves. */
const BANDS_TEXT = PRICE_BANDS.map((b) => `${b.id} ${b.minGas}–${b.maxGas}${'note' in b ? ` (${b.note})` : ''}`).join(', ');

export function priceBandOf(priceGas: number): string | null {
  for (const band of PRICE_BANDS) if (priceGas >= band.minGas && priceGas <= band.maxGas) return band.id;
  return null;
}

function scoreTitle(title: string): number {
  const t = title.trim();
  if (GENERIC_TITLES.test(t)) return 0;
  const w = contentWords(t);
  const all = words(t);
  const hasAction = all.some((x) => ACTION_WORDS.has(x));
  const hasArtefact = all.some((x) => ARTEFACT_WORDS.has(x));
  if (w.length >= 2 && (hasAction || hasArtefact)) return SIGNAL_WEIGHTS.concreteTitle;
  if (w.length >= 2 || hasAction || hasArtefact) return 8;
  return 0;
}

function matchesAny(text: string, patterns: RegExp[]): boolean {
  return patterns.some((p) => p.test(text));
}

function scorePrice(priceGas: number, category: string): { points: number; band: string | null; anchor: number } {
  const anchor = CATEGORY_ANCHOR_GAS[category] ?? CATEGORY_ANCHOR_GAS.general;
  const band = priceBandOf(priceGas);
  const nearAnchor = priceGas >= anchor / 5 && priceGas <= anchor * 10;
  if (band && nearAnchor) return { points: SIGNAL_WEIGHTS.priceInBand, band, anchor };
  if (band || nearAnchor) return { points: 5, band, anchor };
  return { points: 0, band, anchor };
}

/**
 * Scores a listing. `otherListings` are the seller's other listings (title + description), for the
 * near-duplicate signal; leave out the listing being updated.
 */
export function assessQuality(draft: ListingDraft, otherListings: Array<{ title: string; description: string }> = []): QualityReport {
  const issues: QualityIssue[] = [];
  const desc = draft.description;
  const text = `${draft.title}\n${desc}`;

  const concreteTitle = scoreTitle(draft.title);
  if (concreteTitle < SIGNAL_WEIGHTS.concreteTitle) {
    issues.push({
      code: 'vague_title',
      message: `The title "${draft.title.trim().slice(0, 80)}" does not name a concrete skill.`,
      hint: 'Make the title say what you do and to what, in 3–10 words: an action plus an artefact, e.g. "Write Jest unit tests for a TypeScript module" or "Summarize 5 research papers into a one-page brief".',
    });
  }

  const stated = (signal: StatedSignal): number => {
    const { patterns, issue } = STATED[signal];
    if (matchesAny(desc, patterns)) return SIGNAL_WEIGHTS[signal];
    issues.push({ ...issue });
    return 0;
  };
  const statesInputs = stated('statesInputs');
  const statesDeliverable = stated('statesDeliverable');

  const kinds = [FORMAT_PATTERN, QUANTITY_PATTERN, SCOPE_PATTERN, TURNAROUND_PATTERN].filter((p) => p.test(text)).length;
  const specificity = Math.min(SIGNAL_WEIGHTS.specificity, kinds * 5);
  if (specificity < SIGNAL_WEIGHTS.specificity) {
    const missing: string[] = [];
    if (!FORMAT_PATTERN.test(text)) missing.push('the output format (JSON, CSV, Markdown, PDF, pull request…)');
    if (!QUANTITY_PATTERN.test(text)) missing.push('a size or quantity (e.g. "up to 500 lines", "5 sources")');
    if (!SCOPE_PATTERN.test(text)) missing.push('the scope and its limits (what is included, what is not)');
    if (!TURNAROUND_PATTERN.test(text)) missing.push('the turnaround (e.g. "within 2 days")');
    issues.push({
      code: 'not_specific',
      message: 'The description is not specific enough for a buyer to know exactly what they are paying for.',
      hint: `Add ${missing.join('; ')}.`,
    });
  }

  const price = scorePrice(draft.priceGas, draft.category);
  if (price.points < SIGNAL_WEIGHTS.priceInBand) {
    issues.push({
      code: 'price_out_of_band',
      message: `A price of ${draft.priceGas} gas is outside the usual range for ${draft.category} (anchor ${price.anchor} gas).`,
      hint: `Price between ${Math.max(BANDS_FLOOR_GAS, Math.ceil(price.anchor / 5))} and ${Math.min(BANDS_CEILING_GAS, price.anchor * 10)} gas; bands: ${BANDS_TEXT}. The ${draft.category} anchor is ${price.anchor} gas.`,
    });
  }

  const mine = shingles(text);
  let maxSimilarity = 0;
  for (const other of otherListings) {
    maxSimilarity = Math.max(maxSimilarity, jaccard(mine, shingles(`${other.title}\n${other.description}`)));
  }
  const duplicate = maxSimilarity >= DUPLICATE_SIMILARITY;
  const notDuplicate = duplicate ? 0 : SIGNAL_WEIGHTS.notDuplicate;
  if (duplicate) {
    issues.push({
      code: 'near_duplicate',
      message: 'This listing is nearly identical to another of your listings.',
      hint: 'Update the existing listing with update_service instead, or describe what is different about this one (inputs, deliverable, scope).',
    });
  }

  const signals: QualitySignals = { concreteTitle, statesInputs, statesDeliverable, specificity, priceInBand: price.points, notDuplicate };
  let score = Object.values(signals).reduce((a, b) => a + b, 0);
  if (!concreteTitle || !statesInputs || !statesDeliverable) score = Math.min(score, MISSING_REQUIREMENT_SCORE_CAP);
  if (duplicate) score = Math.min(score, DUPLICATE_SCORE_CAP);
  return { score, passScore: PASS_SCORE, passed: score >= PASS_SCORE, signals, issues };
}
