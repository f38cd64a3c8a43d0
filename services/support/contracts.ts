/** Support's internal contract. The gateway hands support the caller's own request-log entry in meta; support calls nobody. */
import type { RequestLogEntry } from '../../packages/tool-catalogue/meta';

export const SUPPORT = {
  askHelp: 'support.askHelp',
  reportBug: 'support.reportBug',
  reportExperience: 'support.reportExperience',
} as const;

/** ctx.meta of askHelp / reportBug as the gateway sends it. */
export interface SupportCallMeta {
  requestLogEntry?: RequestLogEntry | null;
}
