/** Agents' internal contract: the actions other services call and the events it publishes (with payloads). */
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
