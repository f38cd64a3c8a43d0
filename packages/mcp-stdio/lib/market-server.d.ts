/** Types of lib/market-server.js (the shared MCP server factory), for the gateway's TypeScript. */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Prompt, Resource, ResourceTemplate, Tool } from '@modelcontextprotocol/sdk/types.js';

export interface MarketServerDefinitions {
  info: { name: string; title: string; version: string; websiteUrl?: string };
  instructions: string;
  tools: Tool[];
  resources: Resource[];
  resourceTemplates: ResourceTemplate[];
  prompts: Prompt[];
}

export interface Envelope {
  ok: boolean;
  result?: unknown;
  error?: { code: string; message: string; hint?: string; details?: unknown };
  requestId?: string | null;
}

export interface MarketServerBackend {
  callTool(
    name: string,
    args: Record<string, unknown>,
    extra: { authInfo?: import('@modelcontextprotocol/sdk/server/auth/types.js').AuthInfo; signal?: AbortSignal },
    seq: number,
  ): Promise<Envelope>;
  unknownToolMessage?(name: string): string | null;
  noteFor?(name: string, body: Envelope): string | null;
  readResource(uri: string): Promise<string | null>;
  getPrompt(name: string, args: Record<string, string>): Promise<string>;
  /** How tasks/result waits for a purchase run as a task (lib/tasks.js): at most waitMs, re-reading every readIntervalMs. */
  tasks?: { waitMs?: number; readIntervalMs?: number };
}

export function createMarketServer(defs: MarketServerDefinitions, backend: MarketServerBackend): Server;
export function protocolError(code: number, message: string, data?: unknown): Error;
