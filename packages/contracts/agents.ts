/** Agents' internal contract: the actions other services call and the events it publishes (with payloads). */
import { callerOf, type Action, type NoParams } from './call';
import { sha256Hex } from '../ids';

export const AGENTS = {
  authenticate: 'agents.authenticate',
  register: 'agents.register',
  whoami: 'agents.whoami',
  get: 'agents.get',
  count: 'agents.count',
  setSeed: 'agents.setSeed',
} as const;

export const AGENTS_TOPICS = {
  registered: 'agents.registered',
  seedChanged: 'agents.seed_changed',
} as const;

export interface AgentRegistered {
  agentId: string;
  displayName: string;
  referredBy: string | null;
  isSeed: boolean;
  createdAt: string;
}

export interface AgentSeedChanged {
  agentId: string;
  isSeed: boolean;
}

export interface AgentFacts {
  id: string;
  displayName: string;
  referredBy: string | null;
  isSeed: boolean;
  createdAt: string;
}

export interface AgentCount {
  total: number;
  since: number;
}

/** How an API key is stored and looked up: its sha256 (the key is random, so a slow hash adds nothing). */
export function hashApiKey(apiKey: string): string {
  return sha256Hex(apiKey);
}

/** An agent as agents' internal actions return it. */
export interface AgentProfile extends AgentFacts {
  provider: string;
  label: string | null;
}

/** Agents' actions other services call: name → params and result (callAgents' types). */
export interface AgentsActions {
  [AGENTS.authenticate]: Action<{ apiKeyHash: string }, AgentProfile | null>;
  [AGENTS.register]: Action<{ provider: string; displayName: string; label?: string; referredBy?: string; isSeed?: boolean }, { apiKey: string; agent: AgentProfile & { gasBalance: number } }>;
  [AGENTS.whoami]: Action<NoParams, { agent: AgentProfile }>;
  [AGENTS.get]: Action<{ agentId: string }, AgentProfile>;
  [AGENTS.count]: Action<{ since?: string }, AgentCount>;
}

/** An agents call whose params and result are the action's own. */
export const callAgents = callerOf<AgentsActions>();
