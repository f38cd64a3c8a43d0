/** Types of lib/tasks.js (purchases as MCP tasks), for the gateway's TypeScript and tests. */
import type { Task } from '@modelcontextprotocol/sdk/types.js';

export const TASK_TOOLS: Set<string>;
export const DEFAULT_POLL_INTERVAL_MS: number;
export const DEFAULT_WAIT_MS: number;
export function taskStatusOf(purchase: { status: string; task?: { status: 'working' | 'completed' | 'failed'; pollIntervalMs?: number; next?: string; tools?: string[] } }): 'working' | 'completed' | 'failed';
export function taskOf(purchase: Record<string, unknown> & { id: string; status: string; createdAt: string }): Task;
