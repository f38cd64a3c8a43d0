/** The gateway's own actions: the tools it composes from several services (whoami, get_agent, wallet, ask_help, report_bug) and its request log. */
export const GATEWAY = {
  whoami: 'gateway.whoami',
  getAgent: 'gateway.getAgent',
  wallet: 'gateway.wallet',
  askHelp: 'gateway.askHelp',
  reportBug: 'gateway.reportBug',
  requestLog: 'gateway.requestLog',
} as const;

/** One entry of the gateway's short request log (the `gateway.requestLog` action's answer). */
export interface RequestLogEntry {
  requestId: string;
  agentId: string | null;
  tool: string | null;
  status: number;
  errorCode: string | null;
  errorMessage?: string | null;
  at?: string;
}
