/** Support's internal contract. The gateway hands support the caller's own request-log entry in meta; support calls nobody. */
import type { RequestLogEntry } from './gateway';

/** A concrete tool call ask_help suggests. */
export interface NextStep {
  tool: string;
  arguments: Record<string, unknown>;
}

export const SUPPORT = {
  askHelp: 'support.askHelp',
  reportBug: 'support.reportBug',
  reportExperience: 'support.reportExperience',
  summary: 'support.summary',
  listBugs: 'support.listBugs',
  getBug: 'support.getBug',
  setBugStatus: 'support.setBugStatus',
  listExperiences: 'support.listExperiences',
} as const;

/** A bug report's states, as the operator moves it (report_bug files it open). */
export const BUG_STATUSES = ['open', 'acknowledged', 'fixed', 'closed', 'wont_fix'] as const;

/** ctx.meta of askHelp / reportBug as the gateway sends it. */
export interface SupportCallMeta {
  requestLogEntry?: RequestLogEntry | null;
}

export interface HelpContext {
  toolName?: string;
  error?: string;
  requestId?: string;
}

export interface HelpInput {
  question: string;
  stuckState?: string;
  context?: HelpContext;
  /** The caller's own request-log entry for context.requestId, or null (unknown or someone else's). */
  request?: RequestLogEntry | null;
}

export interface HelpAnswer {
  answer: string;
  nextStep: NextStep | null;
  sources: Array<{ id: string; title: string }>;
  known: boolean;
  confidence: number;
  generatedBy: 'retrieval' | 'llm';
  /** The explained request (context.requestId), when it is the caller's own. */
  request?: { requestId: string; tool: string | null; status: number; errorCode: string | null; errorMessage: string | null; at: string | null } | null;
}
