/**
 * The listing gate: moderation (hard refusals) and the quality score (hints to retry), pure and
 * deterministic. The listings service enforces it on list and update; ask_help explains a listing's
 * verdict with it, so the help and the gate cannot disagree. Imports no service: market-rules, unhomoglyph
 * and bitcoin-address-validation only.
 */
export { assessQuality, type ListingDraft, type QualityIssue, type QualityReport, type QualitySignals } from './quality';
export { moderate, type ModerationCode, type ModerationReason, type ModerationVerdict } from './moderation';
export { foldLookalikes, unspellEmails, visibleText, words } from './text';
export { verdictOf, type DraftVerdict } from './verdict';
