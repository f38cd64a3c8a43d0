/** Agents' internal contract: the actions other services call and the events it publishes (with payloads). */
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
