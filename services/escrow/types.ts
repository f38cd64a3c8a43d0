/**
 * The typed `this` of escrow's handlers (Moleculer's TS template: `Service<Settings> & Methods`).
 * Each concern's mixin implements its slice of EscrowMethods; the compiler checks them against it.
 */
import type { Service } from 'moleculer';
import type { Db } from '../../packages/db';
import type { InsufficientGasError } from '../../packages/errors';
import type { OutboxRelay } from '../../packages/outbox';
import type { SpendingLimitsView } from '../../packages/contracts/escrow';
import type { SingleWriterCache } from '../../packages/db/single-writer-cache';
import type { PurchaseRow, Role } from './purchases';
import type { Trigger } from '../../packages/contracts/purchase-machine';
import type { PurchaseEngine } from './purchase-engine';
import type { TermsGuesses } from './listing-terms';
import type { RuntimeService } from '../../packages/runtime';

export type { EscrowEvent } from './events';

export interface MessageView {
  id: string;
  purchaseId: string;
  from: Role;
  senderId: string;
  body: string;
  createdAt: string | null;
}

export interface EscrowMethods {
  // lifecycle (escrow.service.ts)
  now(): Date;
  load(purchaseId: string): Promise<PurchaseRow | undefined>;
  checkEvaluator(evaluator: { agentId: string; feeGas: number }, buyerId: string): Promise<void>;
  // funding.ts
  findByIdempotencyKey(buyerId: string, key: string, now: Date): Promise<PurchaseRow | undefined>;
  replayPurchase(existing: PurchaseRow, listingId: string): Promise<PurchaseRow>;
  fund(row: PurchaseRow): Promise<PurchaseRow>;
  markFunded(row: PurchaseRow): Promise<PurchaseRow>;
  holdExists(row: PurchaseRow): Promise<boolean>;
  insufficientGas(row: PurchaseRow, err: unknown): Promise<InsufficientGasError>;
  checkReferral(row: PurchaseRow): Promise<void>;
  // messages.ts
  messagesOf(purchaseId: string, afterSeq: number): Promise<MessageView[]>;
  // sweepers.ts
  /** Fires one timed transition for every due purchase; how many moved. */
  sweepTransition(trigger: Trigger): Promise<number>;
  /** Fires every due timed transition of the machine; the count moved per trigger. */
  sweepTimers(): Promise<Record<string, number>>;
  sweepPending(): Promise<{ funded: number; failed: number }>;
  sweepReferrals(): Promise<number>;
  sweepOnce(): Promise<Record<string, number>>;
}

export interface EscrowState {
  db: Db;
  /** Embedded PGlite: spending-limits answers kept until escrow's next write (null over PostgreSQL). */
  singleWriter: SingleWriterCache<SpendingLimitsView> | null;
  relay: OutboxRelay;
  /** The one writer of purchase state (purchase-engine.ts). */
  engine: PurchaseEngine<Trigger>;
  /** The listing terms this process read last (listing-terms.ts): tried first, checked by version in the insert. */
  termsGuesses: TermsGuesses;
  sweepTimer?: NodeJS.Timeout;
  sweeping: boolean;
}

export type EscrowThis = Service & RuntimeService & EscrowMethods & EscrowState;
