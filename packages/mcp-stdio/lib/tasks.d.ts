/** Types of lib/tasks.js (purchases as MCP tasks), for the gateway's TypeScript and tests. */
import type { Task } from '@modelcontextprotocol/sdk/types.js';

export const TASK_TOOLS: Set<string>;
export const POLL_INTERVAL_MS: Record<string, number>;
export const DEFAULT_WAIT_MS: number;
export function taskStatusOf(purchase: { status: string; deliveredAt?: string | null }): 'working' | 'completed' | 'failed';
export function taskOf(purchase: Record<string, unknown> & { id: string; status: string; createdAt: string }): Task;
