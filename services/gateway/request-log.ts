/**
 * A short log of tool calls (request id, agent, tool, status, error code, time), kept 7 days.
 * ask_help explains a caller's own failed request from it; report_bug attaches the matching entry.
 * Writes are buffered and flushed in batches so logging never slows a call down.
 */
import type { Db } from '../../packages/db';
import { rowView } from '../../packages/db/row-view';
import type { RequestLogEntry } from '../../packages/contracts/gateway';

export type { RequestLogEntry };

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

function storable(text: string | null): string | null {
  return text === null ? null : text.replaceAll('\u0000', '\uFFFD').replace(LONE_SURROGATE, '\uFFFD').slice(0, 2000);
}

interface LogRow {
  request_id: string;
  agent_id: string | null;
  tool: string | null;
  status: number;
  error_code: string | null;
  error_message: string | null;
  at: Date;
}

/** The columns read back: an entry, in order. */
const ENTRY_COLUMNS = ['request_id', 'agent_id', 'tool', 'status', 'error_code', 'error_message', 'at'] as const;
const LOG_COLUMNS = ENTRY_COLUMNS.join(', ');

function entryOf(row: LogRow): RequestLogEntry {
  return rowView(row, ENTRY_COLUMNS);
}

export class RequestLog {
  private buffer: RequestLogEntry[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  private running = false;

  constructor(private readonly db: Db) {}

  /** No timer while nothing is logged: the first write after a flush arms one (250 ms), so an idle gateway does nothing. */
  start(): void {
    this.running = true;
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.flush();
  }

  record(entry: RequestLogEntry): void {
    // A tool name or message echoing user input may carry text PostgreSQL refuses (NUL, lone surrogates);
    // one such row would fail the whole batch insert, so it is made storable here.
    this.buffer.push({ ...entry, tool: storable(entry.tool), errorMessage: storable(entry.errorMessage ?? null), at: new Date().toISOString() });
    if (this.buffer.length >= 500) void this.flush();
    else if (!this.timer && this.running) {
      this.timer = setTimeout(() => {
        this.timer = null;
        void this.flush();
      }, 250);
      this.timer.unref();
    }
  }

  async flush(): Promise<void> {
    if (this.flushing) await this.flushing;
    if (this.buffer.length === 0) return;
    const batch = this.buffer;
    this.buffer = [];
    this.flushing = (async () => {
      // One parameter whatever the batch size: one statement text (prepared once), no per-value binding.
      const rows = batch.map((e) => ({
        request_id: e.requestId,
        agent_id: e.agentId,
        tool: e.tool,
        status: e.status,
        error_code: e.errorCode,
        error_message: e.errorMessage ?? null,
        at: e.at,
      }));
      await this.db
        .query(
          `INSERT INTO gateway.request_log (request_id, agent_id, tool, status, error_code, error_message, at)
           SELECT request_id, agent_id, tool, status, error_code, error_message, at
             FROM jsonb_to_recordset($1::jsonb)
               AS r(request_id text, agent_id text, tool text, status integer, error_code text, error_message text, at timestamptz)
           ON CONFLICT (request_id) DO NOTHING`,
          [JSON.stringify(rows)],
        )
        .catch(() => undefined);
    })();
    try {
      await this.flushing;
    } finally {
      this.flushing = null;
    }
  }

  async find(requestId: string): Promise<RequestLogEntry | null> {
    await this.flush();
    const r = await this.db.query<LogRow>(`SELECT ${LOG_COLUMNS} FROM gateway.request_log WHERE request_id = $1`, [requestId]);
    return r.rows[0] ? entryOf(r.rows[0]) : null;
  }

  /** The agent's own most recent failed calls (status ≥ 400) of the last 7 days, newest first (ask_help's account snapshot). */
  async recentFailures(agentId: string, limit: number): Promise<RequestLogEntry[]> {
    await this.flush();
    const r = await this.db.query<LogRow>(
      `SELECT ${LOG_COLUMNS} FROM gateway.request_log
        WHERE agent_id = $1 AND status >= 400 AND at > now() - interval '7 days' ORDER BY at DESC LIMIT $2`,
      [agentId, limit],
    );
    return r.rows.map(entryOf);
  }

  async prune(): Promise<void> {
    await this.db.query(`DELETE FROM gateway.request_log WHERE at < now() - interval '7 days'`).catch(() => undefined);
    await this.db.query(`DELETE FROM gateway.idempotency WHERE created_at < now() - interval '24 hours'`).catch(() => undefined);
  }
}
