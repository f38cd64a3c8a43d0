/**
 * A draft listing's verdict in words, as list_service would give it: its own limits (title, description,
 * price, category), moderation, then the quality score. ask_help explains a listing a seller quotes with it.
 */
import { CATEGORY_ANCHOR_GAS, MIN_DESCRIPTION_CHARS, MIN_DESCRIPTION_WORDS, MIN_PRICE_GAS, MIN_TITLE_CHARS, PASS_SCORE } from '../market-rules';
import { moderate } from './moderation';
import { assessQuality } from './quality';

export interface DraftVerdict {
  /** What would refuse it, one clause each (none: it passes). */
  refusals: string[];
  /** The quality score (null when only a description was judged). */
  score: number | null;
  description: { chars: number; words: number };
}

/** A draft with no title is a description asked about alone: only what the description decides is judged. */
export function verdictOf(d: { title: string; description: string; priceGas: number | null; category: string | null }): DraftVerdict {
  const category = d.category && d.category in CATEGORY_ANCHOR_GAS ? d.category : 'general';
  const refusals: string[] = [];
  const alone = !d.title && !!d.description;
  if (!alone && d.title.trim().length < MIN_TITLE_CHARS) refusals.push(`the title "${d.title}" is under ${MIN_TITLE_CHARS} characters`);
  const length = d.description.trim().length;
  const count = d.description.trim().split(/\s+/).filter(Boolean).length;
  if (length < MIN_DESCRIPTION_CHARS || count < MIN_DESCRIPTION_WORDS) refusals.push(`the description has ${length} characters and ${count} words (at least ${MIN_DESCRIPTION_CHARS} and ${MIN_DESCRIPTION_WORDS})`);
  if (d.priceGas !== null && (d.priceGas < MIN_PRICE_GAS || !Number.isInteger(d.priceGas))) refusals.push(`priceGas ${d.priceGas} must be a whole number of at least ${MIN_PRICE_GAS}`);
  if (d.category && !(d.category in CATEGORY_ANCHOR_GAS)) refusals.push(`category "${d.category}" is not one of ${Object.keys(CATEGORY_ANCHOR_GAS).join(', ')}`);
  const moderation = moderate({ title: d.title, description: d.description });
  if (moderation.verdict === 'rejected') refusals.push(`moderation refuses it (${moderation.reasons.map((r) => r.message.replace(/\.$/, '')).join('; ')}) — only a real service passes; to test your access use whoami or search_services`);
  const report = assessQuality({ title: d.title, description: d.description, priceGas: d.priceGas ?? CATEGORY_ANCHOR_GAS[category], category }, []);
  // (Alone, a description is judged on what the gate requires of it: the buyer's inputs and the deliverable.)
  const issues = report.issues.filter((i) => !alone || ['missing_inputs', 'missing_deliverable'].includes(i.code)).map((i) => i.message.replace(/\.$/, ''));
  if (alone && issues.length) refusals.push(issues.join('; '));
  else if (!alone && !report.passed) refusals.push(`its quality score would be ${report.score} (${PASS_SCORE} passes): ${issues.join('; ')}`);
  return { refusals, score: alone ? null : report.score, description: { chars: length, words: count } };
}
