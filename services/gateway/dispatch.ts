/**
 * One path for every tool call, whichever door it came through (HTTP router, MCP):
 * look the tool up in the catalogue → authenticate → rate-limit → validate → idempotency → call the
 * owning service's action → map errors to the envelope. The HTTP router and /mcp only adapt I/O.
 */
import type { ServiceBroker } from 'moleculer';
import Validator from 'fastest-validator';
import { getTool, TOOL_NAMES, type ToolDefinition } from '../../packages/tool-catalogue';
import type { AuthenticatedAgent, CallMeta } from '../../packages/tool-catalogue/meta';
import { MarketError, toEnvelope, type ErrorEnvelope, simplifyValidationErrors } from '../../packages/errors';
import { hashApiKey } from '../agents/agents.service';
import type { Db } from '../../packages/db';
import type { RequestLog } from './request-log';
import { sha256Hex } from '../../packages/ids';
import { runtimeOf } from '../../packages/runtime';

export interface ToolCall {
  tool: unknown;
  args: unknown;
  apiKey: string | null;
  idempotencyKey: string | null;
  requestId: string;
  /** Client address, for rate-limiting calls made without a key. */
  clientIp: string;
  via: 'http' | 'mcp';
}

export interface ToolOutcome {
  status: number;
  body: { ok: true; result: unknown } | ErrorEnvelope;
  headers: Record<string, string>;
  agentId: string | null;
  tool: string | null;
}

interface CachedAuth {
  agent: AuthenticatedAgent | null;
  expiresAt: number;
}

export interface DispatcherOptions {
  authCacheTtlMs: number;
  rateLimitPerMinute: number;
  db: Db;
  requestLog: RequestLog;
}

const IDEMPOTENCY_TTL_HOURS = 24;

export class ToolDispatcher {
  private readonly validator = new Validator({ haltOnFirstError: false });
  private readonly checks = new Map<string, (v: unknown) => true | any[] | Promise<true | any[]>>();
  private readonly authCache = new Map<string, CachedAuth>();
  private readonly windows = new Map<string, { windowStart: number; count: number }>();

  constructor(
    private readonly broker: ServiceBroker,
    private readonly opts: DispatcherOptions,
  ) {}

  /** Resolves a bearer key to an agent; cached a few seconds so a revoked key is refused within that time. */
  async authenticate(apiKey: string | null): Promise<AuthenticatedAgent | null> {
    if (!apiKey || !/^rk_live_[0-9A-Za-z]{20,100}$/.test(apiKey)) return null;
    const hash = hashApiKey(apiKey);
    const now = Date.now();
    const cached = this.authCache.get(hash);
    if (cached && cached.expiresAt > now) return cached.agent;
    const found = await this.broker.call<AuthenticatedAgent | null, { apiKeyHash: string }>('agents.authenticate', { apiKeyHash: hash });
    const agent = found ? { id: found.id, displayName: found.displayName, provider: found.provider } : null;
    if (this.authCache.size > 10_000) this.authCache.clear();
    this.authCache.set(hash, { agent, expiresAt: now + this.opts.authCacheTtlMs });
    return agent;
  }

  async dispatch(call: ToolCall): Promise<ToolOutcome> {
    const headers: Record<string, string> = {};
    let agentId: string | null = null;
    let toolName: string | null = typeof call.tool === 'string' ? call.tool : null;
    try {
      const tool = this.lookup(call.tool);
      toolName = tool.name;
      const args = this.argumentsOf(call.args);
      const idempotencyKey = call.idempotencyKey ?? (typeof args.idempotencyKey === 'string' ? args.idempotencyKey : null);
      delete args.idempotencyKey;

      const agent = await this.authenticate(call.apiKey);
      if (call.apiKey && !agent) {
        throw new MarketError('unauthorized', 'This API key is not valid.', {
          hint: 'Check the key (rk_live_…) you stored at registration, or register again with POST /api/agent/register.',
        });
      }
      if (tool.auth && !agent) {
        throw new MarketError('unauthorized', `${tool.name} needs an API key.`, {
          hint: 'Register with POST /api/agent/register (or the register tool), then send "Authorization: Bearer rk_live_…".',
        });
      }
      agentId = agent?.id ?? null;
      this.rateLimit(agent ? `agent:${agent.id}` : `ip:${call.clientIp}`, headers);
      this.validate(tool, args);
      if (!tool.action) {
        throw new MarketError('not_implemented', `${tool.name} is not available yet.`, { hint: 'See GET /api/agent for the tools that work today.' });
      }

      const meta: CallMeta = { requestId: call.requestId };
      if (agent) meta.agent = agent;
      const run = () => this.broker.call(tool.action!, args, { meta, requestID: call.requestId } as any);

      let result: unknown;
      if (tool.mutating && idempotencyKey && agent) {
        meta.idempotencyKey = idempotencyKey;
        const replay = await this.withIdempotency(agent.id, idempotencyKey, tool, args, run);
        if (replay.replayed) headers['idempotent-replayed'] = 'true';
        result = replay.result;
      } else {
        result = await run();
      }
      this.opts.requestLog.record({ requestId: call.requestId, agentId, tool: toolName, status: 200, errorCode: null });
      return { status: 200, body: { ok: true, result }, headers, agentId, tool: toolName };
    } catch (err) {
      const mapped = toEnvelope(err, call.requestId);
      if (mapped.status >= 500 && mapped.body.error.code === 'internal') {
        this.broker.logger.error(`tool ${toolName ?? '?'} failed (requestId ${call.requestId})`, err);
      }
      if (mapped.retryAfterSeconds) headers['retry-after'] = String(mapped.retryAfterSeconds);
      this.opts.requestLog.record({
        requestId: call.requestId,
        agentId,
        tool: toolName,
        status: mapped.status,
        errorCode: mapped.body.error.code,
        errorMessage: mapped.body.error.message,
      });
      return { status: mapped.status, body: mapped.body, headers, agentId, tool: toolName };
    }
  }

  private lookup(name: unknown): ToolDefinition {
    if (typeof name !== 'string' || !name) {
      throw new MarketError('invalid_arguments', 'The body needs "tool": the name of the tool to call.', {
        hint: `Send {"tool": "<name>", "arguments": {…}}. Tools: ${TOOL_NAMES.join(', ')}.`,
        details: { validTools: TOOL_NAMES },
      });
    }
    const tool = getTool(name);
    if (!tool) {
      throw new MarketError('unknown_tool', `There is no tool "${name.slice(0, 64)}".`, {
        hint: `Use one of: ${TOOL_NAMES.join(', ')}. GET /api/agent describes each.`,
        details: { validTools: TOOL_NAMES },
      });
    }
    return tool;
  }

  private argumentsOf(args: unknown): Record<string, any> {
    if (args === undefined || args === null) return {};
    if (typeof args !== 'object' || Array.isArray(args)) {
      throw new MarketError('invalid_arguments', '"arguments" must be a JSON object.', { hint: 'Send {"tool": "…", "arguments": {…}}.' });
    }
    return { ...(args as Record<string, any>) };
  }

  private validate(tool: ToolDefinition, args: Record<string, any>): void {
    let check = this.checks.get(tool.name);
    if (!check) {
      check = this.validator.compile({ ...tool.params, $$async: false }) as any;
      this.checks.set(tool.name, check!);
    }
    const res = check!(args);
    if (res !== true) {
      const errors = simplifyValidationErrors(res);
      throw new MarketError('invalid_arguments', `Invalid arguments for ${tool.name}: ${errors.map((e) => e.message).join(' ')}`, {
        hint: `Fix the fields in details.errors. GET /api/agent shows the argument schema of ${tool.name}.`,
        details: { errors },
      });
    }
  }

  private rateLimit(key: string, headers: Record<string, string>): void {
    const limit = this.opts.rateLimitPerMinute;
    if (limit <= 0) return;
    const now = Date.now();
    const windowStart = now - (now % 60_000);
    let w = this.windows.get(key);
    if (!w || w.windowStart !== windowStart) {
      if (this.windows.size > 50_000) this.windows.clear();
      w = { windowStart, count: 0 };
      this.windows.set(key, w);
    }
    w.count++;
    headers['x-ratelimit-limit'] = String(limit);
    headers['x-ratelimit-remaining'] = String(Math.max(0, limit - w.count));
    if (w.count > limit) {
      const retryAfter = Math.max(1, Math.ceil((windowStart + 60_000 - now) / 1000));
      throw new MarketError('rate_limited', `Too many calls: at most ${limit} per minute.`, {
        hint: `Wait ${retryAfter} s and retry (Retry-After header).`,
        retryAfterSeconds: retryAfter,
      });
    }
  }

  /**
   * Same agent + key within 24 h → the first response again, and the call runs once.
   * A key still in flight answers invalid_state; a key reused for other arguments answers invalid_arguments.
   */
  /**
   * A claim whose gateway died mid-call (kill -9 of a replica) would otherwise answer "still running"
   * for 24 hours. Once it is older than any call can run, this replica takes it over and runs the call
   * again; the services key their own effects (escrow dedupes purchases by this key), so nothing doubles.
   */
  private async takeOverAbandoned(agentId: string, key: string): Promise<boolean> {
    const leaseMs = 2 * runtimeOf(this.broker).config.requestTimeoutMs + 5_000;
    const r = await this.opts.db.query(
      `UPDATE gateway.idempotency SET created_at = now()
        WHERE agent_id = $1 AND key = $2 AND completed_at IS NULL AND created_at < now() - make_interval(secs => $3)`,
      [agentId, key, leaseMs / 1000],
    );
    return r.rowCount === 1;
  }

  private async withIdempotency(
    agentId: string,
    key: string,
    tool: ToolDefinition,
    args: Record<string, any>,
    run: () => Promise<unknown>,
  ): Promise<{ result: unknown; replayed: boolean }> {
    const db = this.opts.db;
    const fingerprint = sha256Hex(JSON.stringify([tool.aliasOf ?? tool.name, args]));
    await db.query(
      `DELETE FROM gateway.idempotency WHERE agent_id = $1 AND key = $2 AND created_at < now() - make_interval(hours => $3)`,
      [agentId, key, IDEMPOTENCY_TTL_HOURS],
    );
    const claimed = await db.query(
      `INSERT INTO gateway.idempotency (agent_id, key, fingerprint) VALUES ($1, $2, $3) ON CONFLICT (agent_id, key) DO NOTHING`,
      [agentId, key, fingerprint],
    );
    if (claimed.rowCount === 0) {
      const r = await db.query<{ fingerprint: string; result: any; completed_at: Date | null }>(
        'SELECT fingerprint, result, completed_at FROM gateway.idempotency WHERE agent_id = $1 AND key = $2',
        [agentId, key],
      );
      const row = r.rows[0];
      if (!row) return this.withIdempotency(agentId, key, tool, args, run);
      if (row.fingerprint !== fingerprint) {
        throw new MarketError('invalid_arguments', 'This Idempotency-Key was already used for a different call.', {
          hint: 'Use a new key for a new operation; reuse a key only to retry the very same call.',
        });
      }
      if (!row.completed_at && !(await this.takeOverAbandoned(agentId, key))) {
        throw new MarketError('invalid_state', 'A call with this Idempotency-Key is still running.', {
          hint: 'Retry in a second with the same key to get its result.',
        });
      }
      if (row.completed_at) return { result: typeof row.result === 'string' ? JSON.parse(row.result) : row.result, replayed: true };
    }
    try {
      const result = await run();
      await db.query('UPDATE gateway.idempotency SET result = $3, completed_at = now() WHERE agent_id = $1 AND key = $2', [
        agentId,
        key,
        JSON.stringify(result ?? null),
      ]);
      return { result, replayed: false };
    } catch (err) {
      // Failed calls are not remembered: the agent may fix the cause and retry with the same key.
      // Services key their own money moves, so a timed-out call that did run is not repeated by the retry.
      await db.query('DELETE FROM gateway.idempotency WHERE agent_id = $1 AND key = $2', [agentId, key]).catch(() => undefined);
      throw err;
    }
  }
}
