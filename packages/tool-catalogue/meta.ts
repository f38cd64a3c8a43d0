/** What the gateway puts in ctx.meta for every tool call, and the guard actions use. */
import type { Context } from 'moleculer';
import { UnauthorizedError } from '../errors';
import type { AgentProfile } from '../contracts/agents';

export interface AuthenticatedAgent {
  id: string;
  displayName: string;
  provider: string;
}

export interface CallMeta {
  agent?: AuthenticatedAgent;
  requestId?: string;
  /** Idempotency-Key header (or MCP idempotencyKey argument), scoped to the agent by the caller. */
  idempotencyKey?: string;
  /** Set by trusted internal callers (seed script, operator tools), never by the gateway from user input. */
  internal?: boolean;
  /** The operator behind an admin call, for the audit log. */
  operator?: string;
  /** The caller sent an API key that is not valid; the gateway ignored it for a tool's public part. */
  apiKeyIgnored?: boolean;
  /**
   * whoami only: the caller's public identity (agents' view) as the key's authentication loaded it,
   * at most the auth cache's few seconds old — so whoami needs no second read of it.
   */
  agentProfile?: AgentProfile;
}

export function requireAgent(ctx: Context<unknown, object>): AuthenticatedAgent {
  const agent = (ctx.meta as CallMeta).agent;
  if (!agent?.id) throw new UnauthorizedError();
  return agent;
}

export type { RequestLogEntry } from '../contracts/gateway';
