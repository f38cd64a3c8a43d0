/**
 * The purchase engine: the ONE writer of a purchase's status. It applies the machine's table
 * (purchase-machine.ts) and nothing else: a transition writes its status, the columns it declares in
 * `sets` (an undeclared column is refused), the due time of the state it enters (due_at: `after` of the
 * timed transition leaving it, entered + period; null when none leaves it), and its effects — the settle/void money event and
 * its notices — as outbox rows in the same statement. Handlers, funding and the sweepers only say
 * which trigger fires, for whom, with which input.
 *
 * Three ways to fire, each keeping the concurrency guarantee of the path it serves:
 *   fire      read the row, guard, then write only if the row is still the version read (xmin), with
 *             its outbox rows, in one statement; a row changed meanwhile is read and decided again —
 *             of racing changes exactly one wins, the others see its result.
 *   fireFrom  funding: write only if the status is still one the transition leaves (no read first;
 *             what funding writes depends only on columns fixed at purchase). undefined: it moved.
 *   fireDue   the sweepers: claim due rows with FOR UPDATE SKIP LOCKED and move them in one statement,
 *             with their outbox rows in the same transaction (queries derived from the timers).
 *
 * Each change is first a Plan (pure: the columns and events one transition writes for one row), and
 * the writes of `fire` and `fireFrom` go through a group commit (packages/db/batcher.ts): a lone change
 * is one statement, as above; changes of different purchases that arrive while earlier ones are being
 * written go out together as ONE statement (each row with its own version or status check, its own
 * outbox rows), so under load escrow pays its statements per batch, not per purchase (issue #22).
 */
import type { Db, Queryable } from '../../packages/db';
import { InvalidStateError } from '../../packages/errors';
import { enqueueEvent, outboxEvents, updateManyWithEvents, updateWithEvents, type OutboxRelay } from '../../packages/outbox';
import { Batcher, CALLER_WAITS_IN_FLIGHT, type BatcherStats, type BatchItem } from '../../packages/db/batcher';
import { transitionEvents, type EscrowEvent } from './events';
import {
  ACTOR,
  INPUT,
  NOW,
  statesAcceptingIn,
  statusCheckSqlOf,
  DUE_AT,
  timedTransitions,
  timerOf,
  transitionIn,
  type Actor,
  type Machine,
  type MachineTransition,
  type Period,
  type Timer,
} from '../../packages/contracts/purchase-machine';
import { notFound, type PurchaseRow } from './purchases';
import { Recent } from './recent';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
const TABLE = 'escrow.purchases';

/** An input value written as SQL (evaluated in the UPDATE itself), e.g. a flag read from another table. */
export class SqlExpr {
  constructor(readonly sql: string) {}
}

/** The handler's values for the transition's INPUT columns. */
export type Input = Readonly<Record<string, unknown>>;
/** The input columns a caller chose (to recognise its repeat), for any transition or per transition. */
export type AskedOf = Input | ((t: MachineTransition) => Input);
/** The input, or a function deciding it from the row as read (null: nothing changes — e.g. a repeated ack). */
export type InputOf<T extends string> = Input | ((row: PurchaseRow, t: MachineTransition & { trigger: T }) => Input | null);

export interface EngineDeps {
  db: Db;
  relay: OutboxRelay;
  now(): Date;
  /** The terms a timer period may name (`daysOfTerm`). */
  terms(): { autoReleaseDays: number };
}

/** A transition tried to write a column it does not declare: a programming error, refused before any write. */
export class UndeclaredColumnError extends Error {
  constructor(readonly trigger: string, readonly column: string) {
    super(`transition ${trigger} does not declare column ${column} as an input (purchase-machine.ts, its sets)`);
  }
}

/** What one transition writes for one purchase. */
export interface Plan {
  purchaseId: string;
  transition: MachineTransition;
  /** Column → value (or SqlExpr): status when it moves, declared columns, due_at, updated_at. */
  set: Record<string, unknown>;
  events: EscrowEvent[];
  /** The row as it reads after the change (SqlExpr columns keep their value as read). */
  after: PurchaseRow;
}

/** A SET list: SqlExpr values inlined, the others as parameters numbered from `firstParam`. */
function assignments(set: Record<string, unknown>, firstParam: number): { sql: string; params: unknown[] } {
  const params: unknown[] = [];
  const parts = Object.entries(set).map(([col, value]) => {
    if (value instanceof SqlExpr) return `${col} = ${value.sql}`;
    params.push(value);
    return `${col} = $${firstParam + params.length - 1}`;
  });
  return { sql: parts.join(', '), params };
}

/** A purchase row with the version (xmin) it was read or written at. */
export type VersionedRow = PurchaseRow & { row_version: string };

/** A row this process knows, with its version; requirements and delivery larger than this are not kept. */
const KNOWN_ROW_MAX_BYTES = 4_096;

const WRITE_BATCH_MAX = 64;

/** A write of one plan: only if the row is still `version` (fire), or still in one of `from` (fireFrom). */
interface Write {
  plan: Plan;
  version?: string;
  from?: readonly string[];
  /** Which columns come back: only the written ones (fire: the rest is the row as read), or all (fireFrom). */
  returning: 'written' | 'all';
}
type Written = (Partial<PurchaseRow> & { row_version: string }) | undefined;

/** A value a batch can carry as JSON text and cast back to its column's type (arrays and buffers go alone). */
function isScalar(value: unknown): boolean {
  return value === null || ['string', 'number', 'boolean'].includes(typeof value) || value instanceof Date || value instanceof SqlExpr;
}

/** The SQL of a value set by expression, or null for a plain value. */
const exprOf = (value: unknown): string | null => (value instanceof SqlExpr ? value.sql : null);

/**
 * Whether `w` can join `batch` (one purchase per batch: `keys`): scalar values only, and a column both set
 * either as values or by the same SQL expression.
 */
function fitsBatch(batch: readonly Write[], w: Write): boolean {
  const scalar = (x: Write) => Object.values(x.plan.set).every(isScalar);
  if (!scalar(w) || !batch.every(scalar)) return false;
  return batch.every((b) => Object.entries(w.plan.set).every(([col, v]) => !(col in b.plan.set) || exprOf(v) === exprOf(b.plan.set[col])));
}

/** The row without its version column. */
function unversioned(row: VersionedRow): PurchaseRow {
  const { row_version: _version, ...plain } = row;
  return plain;
}

export class PurchaseEngine<T extends string = string> {
  /**
   * The rows this process wrote last, each with its version. `fire` decides from one without reading it
   * again; its write still names the version, so a row another replica (or a sweeper, or the referral
   * check) changed meanwhile is simply not written, and is read and decided again — the answer is exactly
   * what reading first would give. Saves the read of deliver_work and confirm_delivery on the replica that
   * sold the purchase (issue #22).
   */
  private readonly known = new Recent<VersionedRow>(2_000);
  /** The group commit of fire and fireFrom writes; `writes.stats` says how many statements they took. */
  readonly writes = new Batcher<Write, Written>((batch, stats) => this.writeBatch(batch, stats), {
    maxInFlight: CALLER_WAITS_IN_FLIGHT,
    maxBatch: WRITE_BATCH_MAX,
    fits: fitsBatch,
    keys: (w) => [w.plan.purchaseId],
  });
  /** Column → SQL type of the purchases table, read once (a batch casts each value back from JSON text). */
  private columnTypes?: Promise<Map<string, string>>;

  constructor(
    readonly machine: Machine,
    private readonly deps: EngineDeps,
  ) {}

  /** A row just inserted or written with its version (`RETURNING *, xmin::text AS row_version`): the next fire may skip its read. */
  remember(row: VersionedRow): PurchaseRow {
    const size = (row.delivery_json?.length ?? 0) + (typeof row.requirements === 'string' ? row.requirements.length : JSON.stringify(row.requirements ?? null).length);
    if (size <= KNOWN_ROW_MAX_BYTES) this.known.set(row.id, row);
    else this.known.delete(row.id);
    return unversioned(row);
  }

  /** invalid_state for `row`, naming what `tool` needs and the current state's next-step hint. */
  invalidState(row: PurchaseRow, tool: string, needs: string): InvalidStateError {
    return new InvalidStateError(`Purchase ${row.id} is ${row.status}; ${tool} needs ${needs}.`, {
      hint: this.machine.states[row.status]?.next ?? 'Read the purchase again with get_purchase.',
      details: { purchaseId: row.id, status: row.status },
    });
  }

  /** The transition `who` may fire with one of `triggers` from the row's state, or invalid_state. */
  guard(row: PurchaseRow, triggers: readonly T[], who: Actor, tool: string): MachineTransition & { trigger: T } {
    for (const trigger of triggers) {
      const t = transitionIn(this.machine, trigger, who, row.status, row);
      if (t) return t as MachineTransition & { trigger: T };
    }
    throw this.invalidState(row, tool, statesAcceptingIn(this.machine, triggers, who).join(' or '));
  }

  dueAt(period: Period, row: PurchaseRow, now: Date): Date {
    const ms =
      'hours' in period ? period.hours * HOUR_MS
      : 'days' in period ? period.days * DAY_MS
      : 'daysOfColumn' in period ? Number((row as Record<string, unknown>)[period.daysOfColumn]) * DAY_MS
      : 'hoursOfColumn' in period ? Number((row as Record<string, unknown>)[period.hoursOfColumn]) * HOUR_MS
      : this.deps.terms()[period.daysOfTerm] * DAY_MS;
    return new Date(now.getTime() + ms);
  }

  /**
   * Whether `who` already made one of `triggers` happen on `row` with the values it `asked` for — read from the
   * table, not from a list of tools: a transition is in the row when each column it stamps with NOW is set, each
   * column it sets to the ACTOR names `who`, each constant it writes is there, and each INPUT column the caller
   * asked for holds that value. A transition that stamps nothing (funding, say) is never recognised this way.
   * So a repeated deliver_work with the same delivery, confirm_delivery by the buyer who confirmed, a refund, a
   * dispute or a rating with the same words is the step done, whatever happened to the purchase since.
   */
  applied(row: PurchaseRow, triggers: readonly string[], who: Actor, askedOf: AskedOf): boolean {
    const columns: Record<string, unknown> = row;
    const same = (a: unknown, b: unknown) => (a ?? null) === (b ?? null) || (a != null && b != null && String(a) === String(b));
    return this.machine.transitions.some((t) => {
      if (!triggers.includes(t.trigger) || !t.who.includes(who)) return false;
      const sets = Object.entries(t.sets);
      if (!sets.some(([, v]) => v === NOW)) return false;
      const asked = typeof askedOf === 'function' ? askedOf(t) : askedOf;
      return sets.every(([col, v]) => {
        if (v === NOW) return columns[col] != null;
        if (v === ACTOR) return columns[col] === who;
        if (v === INPUT) return !(col in asked) || same(columns[col], asked[col]);
        return same(columns[col], v);
      });
    });
  }

  /** Pure: what firing `t` for `actor` on `row` with `input` writes. Throws UndeclaredColumnError. */
  plan(row: PurchaseRow, t: MachineTransition, actor: Actor, input: Input, now: Date): Plan {
    const at = now.toISOString();
    const set: Record<string, unknown> = {};
    for (const [col, value] of Object.entries(t.sets)) {
      if (value === INPUT) continue;
      set[col] = value === NOW ? at : value === ACTOR ? actor : value;
    }
    for (const [col, value] of Object.entries(input)) {
      if (t.sets[col] !== INPUT) throw new UndeclaredColumnError(t.trigger, col);
      set[col] = value;
    }
    if (t.to !== null) {
      set.status = t.to;
      // first-entered-state + period: the timer leaving the state it enters starts now (DUE_AT; none: null).
      if (t.to !== row.status) {
        const timer = timerOf(this.machine, t.to);
        set[DUE_AT] = timer ? this.dueAt(timer.period, row, now).toISOString() : null;
      }
    }
    set.updated_at = at;
    const plain = Object.fromEntries(Object.entries(set).filter(([, v]) => !(v instanceof SqlExpr)));
    const after = { ...row, ...plain } as PurchaseRow;
    return { purchaseId: row.id, transition: t, set, events: this.effects(t, row, after, at), after };
  }

  /** The outbox rows a transition writes: its money event (settle/void; a hold is a keyed call made before) and its notices. */
  effects(t: MachineTransition, before: PurchaseRow, after: PurchaseRow, at: string): EscrowEvent[] {
    return transitionEvents(t, before, after, at);
  }

  /**
   * Fires one of `triggers` on a purchase: read it (or take the version this process wrote last), find who
   * fires (a function may refuse the caller: not_found / forbidden), guard, decide the input, and write it
   * only if the row is still that version (xmin), with its outbox rows, in one statement; a row changed
   * meanwhile is read and decided again. A decision from a remembered row that refuses or changes nothing
   * is never answered from memory: the row is read and the decision made again.
   */
  async fire(
    purchaseId: string,
    triggers: T | readonly T[],
    actor: Actor | ((row: PurchaseRow) => Actor),
    input: InputOf<T> = {},
    tool?: string,
    asked?: AskedOf,
  ): Promise<PurchaseRow> {
    const list: readonly T[] = typeof triggers === 'string' ? [triggers as T] : (triggers as readonly T[]);
    for (let attempt = 0; ; attempt++) {
      const remembered = attempt === 0 ? this.known.get(purchaseId) : undefined;
      let current = remembered;
      if (!current) {
        const r = await this.deps.db.query<VersionedRow>(`SELECT *, xmin::text AS row_version FROM ${TABLE} WHERE id = $1`, [purchaseId]);
        current = r.rows[0];
      }
      if (!current) throw notFound(purchaseId);
      const version = current.row_version;
      const row = unversioned(current);
      let decided: { who: Actor; t: MachineTransition & { trigger: T }; given: Input | null };
      try {
        const who = typeof actor === 'function' ? actor(row) : actor;
        // A repeat of a step already in the row (a retry after a lost answer, a failover re-send): the purchase as
        // it is now, nothing written, no money moved — never invalid_state.
        if (asked && this.applied(row, list, who, asked)) {
          if (!remembered) return row;
          this.known.delete(purchaseId);
          continue;
        }
        const t = this.guard(row, list, who, tool ?? list[0]);
        decided = { who, t, given: typeof input === 'function' ? input(row, t) : input };
      } catch (err) {
        if (!remembered) throw err;
        this.known.delete(purchaseId);
        continue;
      }
      const { who, t, given } = decided;
      if (given === null) {
        if (!remembered) return row;
        this.known.delete(purchaseId);
        continue;
      }
      const plan = this.plan(row, t, who, given, this.deps.now());
      const changed = await this.writes.submit({ plan, version, returning: 'written' });
      if (!changed) {
        this.known.delete(purchaseId);
        if (attempt < 4) continue;
        throw this.invalidState(row, 'this call', 'an unchanged purchase (it changed meanwhile; read it again)');
      }
      return this.remember({ ...row, ...changed } as VersionedRow);
    }
  }

  /**
   * Fires `trigger` on `row` if its status is still one the transition leaves — one statement, no read
   * first (for writes that depend only on columns fixed at purchase, like funding). Returns the row as
   * written, or undefined when the purchase had moved already.
   */
  async fireFrom(row: PurchaseRow, trigger: T, actor: Actor, input: Input = {}): Promise<PurchaseRow | undefined> {
    const t = transitionIn(this.machine, trigger, actor, row.status);
    if (!t) throw new Error(`no ${trigger} transition for ${actor} from ${row.status}`);
    const plan = this.plan(row, t, actor, input, this.deps.now());
    const written = await this.writes.submit({ plan, from: t.from, returning: 'all' });
    return written && this.remember({ ...row, ...written } as VersionedRow);
  }

  /** One write as its own statement: the row's update only if still `version` / in `from`, with its outbox rows. */
  private async writeOne(w: Write): Promise<Written> {
    const { sql, params } = assignments(w.plan.set, 3);
    const check = w.version !== undefined ? 'xmin = $2::text::xid' : 'status = ANY($2::text[])';
    // fire: only the written columns come back (a purchase row has ~50): the rest is the row as read.
    const returning = w.returning === 'written' ? Object.keys(w.plan.set).join(', ') : '*';
    return updateWithEvents<Partial<PurchaseRow> & { row_version: string }>(
      this.deps.db,
      this.deps.relay,
      `UPDATE ${TABLE} SET ${sql} WHERE id = $1 AND ${check} RETURNING ${returning}, xmin::text AS row_version`,
      [w.plan.purchaseId, w.version ?? w.from, ...params],
      w.plan.events,
    );
  }

  /**
   * A batch of writes: one alone is writeOne; several are ONE statement — each row updated only if its own
   * check holds, each value cast back from JSON text to its column's type, each row's outbox rows written
   * only if the row was — and each write gets exactly what writeOne would have answered. This process never
   * has two batches on one purchase (`keys`); if the statement fails (a deadlock with another replica's batch,
   * say), each write is tried alone.
   */
  private async writeBatch(batch: Array<{ item: Write; settle: BatchItem<Written> }>, stats: BatcherStats): Promise<void> {
    if (batch.length > 1) {
      let rows: Array<PurchaseRow & { row_version: string; batch_n: number }> | undefined;
      try {
        rows = await this.writeMany(batch.map((b) => b.item));
      } catch {
        stats.retriedAlone++;
        rows = undefined;
      }
      if (rows) {
        const byN = new Map(rows.map((r) => [Number(r.batch_n), r]));
        batch.forEach(({ settle }, n) => {
          const row = byN.get(n);
          if (!row) return settle.resolve(undefined);
          const { batch_n: _n, ...written } = row;
          settle.resolve(written);
        });
        return;
      }
    }
    await Promise.all(batch.map(({ item, settle }) => this.writeOne(item).then(settle.resolve, settle.reject)));
  }

  private async writeMany(writes: Write[]): Promise<Array<PurchaseRow & { row_version: string; batch_n: number }>> {
    this.columnTypes ??= this.deps.db
      .query<{ name: string; type: string }>(
        `SELECT attname AS name, format_type(atttypid, atttypmod) AS type FROM pg_attribute
          WHERE attrelid = '${TABLE}'::regclass AND attnum > 0 AND NOT attisdropped`,
      )
      .then((r) => new Map(r.rows.map((c) => [c.name, c.type])));
    const types = await this.columnTypes;
    const values = new Set<string>();
    const exprs = new Map<string, string>();
    for (const { plan } of writes) {
      for (const [col, v] of Object.entries(plan.set)) {
        if (!types.has(col)) throw new UndeclaredColumnError(plan.transition.trigger, col);
        if (v instanceof SqlExpr) exprs.set(col, v.sql);
        else values.add(col);
      }
    }
    const sets = [
      ...[...values].map((c) => `${c} = CASE WHEN v.s ? '${c}' THEN (v.s->>'${c}')::${types.get(c)} ELSE ${TABLE}.${c} END`),
      ...[...exprs].map(([c, sql]) => `${c} = CASE WHEN v.x ? '${c}' THEN ${sql} ELSE ${TABLE}.${c} END`),
    ];
    const items = writes.map((w, n) => {
      const s: Record<string, unknown> = {};
      const x: Record<string, true> = {};
      for (const [col, v] of Object.entries(w.plan.set)) {
        if (v instanceof SqlExpr) x[col] = true;
        else s[col] = v instanceof Date ? v.toISOString() : v;
      }
      return { n, id: w.plan.purchaseId, ver: w.version ?? null, from_status: w.from ?? null, s, x, events: outboxEvents(w.plan.events) };
    });
    return updateManyWithEvents<PurchaseRow & { row_version: string }>(
      this.deps.db,
      this.deps.relay,
      `UPDATE ${TABLE} SET ${sets.join(', ')}
         FROM jsonb_to_recordset($1::jsonb) AS v(n int, id text, ver text, from_status jsonb, s jsonb, x jsonb, events jsonb)
        WHERE ${TABLE}.id = v.id
          AND (v.ver IS NULL OR ${TABLE}.xmin = v.ver::xid)
          AND (v.from_status IS NULL OR v.from_status ? ${TABLE}.status)
        RETURNING ${TABLE}.*, ${TABLE}.xmin::text AS row_version, v.n AS batch_n, v.events AS batch_events`,
      [JSON.stringify(items)],
    );
  }

  /** The timed transitions the sweeper fires (derived from the table's `after`). */
  timed(): (MachineTransition & { after: Timer; trigger: T })[] {
    return timedTransitions(this.machine) as (MachineTransition & { after: Timer; trigger: T })[];
  }

  /**
   * The sweeper for one timed transition: claims up to `batch` due purchases (FOR UPDATE SKIP LOCKED,
   * so replicas never take the same row), moves them in one statement and writes each one's outbox rows
   * in the same transaction. Returns how many moved.
   */
  async fireDue(t: MachineTransition & { after: Timer }, batch: number): Promise<number> {
    const { unless } = t.after;
    const dueColumn = DUE_AT;
    const now = this.deps.now();
    const at = now.toISOString();
    const actor: Actor = 'sweeper';
    // What every moved row gets: the transition's constants and stamps, its target, the timers of the target.
    const set: Record<string, unknown> = {};
    for (const [col, value] of Object.entries(t.sets)) {
      if (value === INPUT) continue;
      set[col] = value === NOW ? at : value === ACTOR ? actor : value;
    }
    if (t.to !== null) {
      set.status = t.to;
      const timer = timerOf(this.machine, t.to);
      set[DUE_AT] = !timer
        ? null
        : 'daysOfColumn' in timer.period
          ? new SqlExpr(`($1::timestamptz + ${timer.period.daysOfColumn} * interval '1 day')`)
          : 'hoursOfColumn' in timer.period
            ? new SqlExpr(`($1::timestamptz + ${timer.period.hoursOfColumn} * interval '1 hour')`)
            : this.dueAt(timer.period, {} as PurchaseRow, now).toISOString();
    }
    set.updated_at = at;
    const { sql, params } = assignments(set, 4);
    return this.deps.db.transaction(async (tx: Queryable) => {
      const r = await tx.query<PurchaseRow & { from_status: string }>(
        `WITH due AS (SELECT id, status FROM ${TABLE}
                       WHERE status = ANY($3::text[]) AND ${dueColumn} <= $1 ${unless ? `AND ${unless} IS NULL` : ''}
                       ORDER BY ${dueColumn} LIMIT $2 FOR UPDATE SKIP LOCKED)
         UPDATE ${TABLE} AS p SET ${sql}
           FROM due WHERE p.id = due.id AND p.status = ANY($3::text[])
         RETURNING p.*, due.status AS from_status`,
        [at, batch, t.from, ...params],
      );
      for (const { from_status: fromStatus, ...after } of r.rows) {
        const before = { ...after, status: fromStatus } as PurchaseRow;
        for (const [topic, data, audience] of this.effects(t, before, after as PurchaseRow, at)) {
          await enqueueEvent(tx, this.deps.relay.schema, topic, data, audience ? { agents: audience, predicate: this.deps.relay.audience } : undefined);
        }
      }
      return r.rows.length;
    });
  }
}

/**
 * The status CHECK follows the machine: when its states change, the constraint is replaced (once; a
 * no-op when it already names exactly these states).
 */
export async function syncStatusCheck(db: Queryable, machine: Machine): Promise<void> {
  const wanted = statusCheckSqlOf(machine);
  const r = await db.query<{ def: string }>(
    `SELECT pg_get_constraintdef(c.oid) AS def FROM pg_constraint c
      WHERE c.conrelid = '${TABLE}'::regclass AND c.conname = 'purchases_status_check'`,
  );
  const states = (sql: string) => [...sql.matchAll(/'([a-z_]+)'/g)].map((m) => m[1]).sort().join(',');
  if (states(r.rows[0]?.def ?? '') === states(wanted)) return;
  await db.query(`ALTER TABLE ${TABLE} DROP CONSTRAINT IF EXISTS purchases_status_check, ADD CONSTRAINT purchases_status_check CHECK (${wanted})`);
}
