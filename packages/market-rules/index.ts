/**
 * The marketplace's numbers (spec §2.6, §8; DESIGN §3), in one place. Services, docs, llms.txt
 * and ask_help all read them from here, so they can never disagree.
 */

/** 100 gas = 1.00 USD; 1 gas = 1 US cent. */
export const GAS_PER_USD = 100;

export interface GasPack {
  id: 'starter' | 'builder' | 'fleet';
  gas: number;
  usd: number;
  role: string;
}

export const GAS_PACKS: readonly GasPack[] = [
  { id: 'starter', gas: 500, usd: 5, role: 'first purchase' },
  { id: 'builder', gas: 2000, usd: 20, role: 'default pack for buy_gas' },
  { id: 'fleet', gas: 10000, usd: 100, role: 'high volume' },
];
export const DEFAULT_PACK_ID = 'builder';

export function packById(id: string): GasPack | undefined {
  return GAS_PACKS.find((p) => p.id === id);
}

/** The smallest pack that covers a shortfall (the largest if none does). */
export function smallestPackCovering(shortfallGas: number): GasPack {
  return GAS_PACKS.find((p) => p.gas >= shortfallGas) ?? GAS_PACKS[GAS_PACKS.length - 1];
}

/**
 * The default platform fee. The fee in force is config.platformFeePercent (PLATFORM_FEE_PERCENT);
 * each purchase fixes its own split when it is bought, and the ledger posts exactly that split.
 */
export const DEFAULT_PLATFORM_FEE_PERCENT = 10;
export const MAX_PLATFORM_FEE_PERCENT = 50;
export const CASHOUT_FEE_PERCENT = 2;
export const MIN_CASHOUT_GAS = 500;
export const MIN_PRICE_GAS = 10;
/** A listing's title needs at least this many characters. */
export const MIN_TITLE_CHARS = 3;
/** A listing's description needs at least this many characters… */
export const MIN_DESCRIPTION_CHARS = 40;
/** …and this many words. */
export const MIN_DESCRIPTION_WORDS = 8;
/** A dispute names what went wrong in at least this many characters. */
export const MIN_DISPUTE_REASON_CHARS = 10;
export const LISTING_FEE_GAS = 0;
export const PASS_SCORE = 55;
export const DEFAULT_DELIVERY_DAYS = 7;
/** An evaluator's verdict is awaited this long after delivery by default (issue #35); then the purchase is delivered. */
export const DEFAULT_EVALUATION_HOURS = 48;
export const MAX_EVALUATION_HOURS = 720;
/** The longest evaluation report (stored with the purchase, shown to both parties). */
export const MAX_EVALUATION_REPORT_CHARS = 8000;
/** The longest delivery time a listing may promise, in days. */
export const MAX_DELIVERY_DAYS = 30;
export const DEFAULT_AUTO_RELEASE_DAYS = 3;

/** The operator's terms that prose states (docs, prompts, help): the config in force, or these defaults. */
export interface MarketTerms {
  platformFeePercent: number;
  autoReleaseDays: number;
}
export const DEFAULT_TERMS: MarketTerms = { platformFeePercent: DEFAULT_PLATFORM_FEE_PERCENT, autoReleaseDays: DEFAULT_AUTO_RELEASE_DAYS };
export const RATING_CHANGE_WINDOW_DAYS = 7;
/** Webhook deliveries are retried with exponential backoff until this long after the event. */
export const WEBHOOK_RETRY_HOURS = 24;
/** A webhook endpoint failing every attempt for this long is paused (its deliveries are kept, pending). */
export const WEBHOOK_PAUSE_AFTER_HOURS = 6;
/** Webhooks one agent may register. */
export const MAX_WEBHOOKS_PER_AGENT = 5;
export const REFERRAL_BONUS_GAS = 50;
export const REFERRAL_WEEKLY_CAP = 10;
export const DISPUTE_LOOKBACK_DAYS = 90;
/** The public liquidity figures (purchases7d, registrations7d) count this many days back. */
export const LIQUIDITY_WINDOW_DAYS = 7;
/** The same agent and Idempotency-Key within this many hours gets the first response again. */
export const IDEMPOTENCY_WINDOW_HOURS = 24;
/** A purchase awaiting the human's approval fails (hold voided) after this many hours without an answer. */
export const APPROVAL_WINDOW_HOURS = 24;
/** Spending-limit rules a purchase can break (403 forbidden, details.rule). */
export const SPENDING_LIMIT_RULES = ['per_purchase_max', 'daily_budget', 'weekly_budget', 'category_not_allowed'] as const;
export type SpendingLimitRule = (typeof SPENDING_LIMIT_RULES)[number];

/** A percentage of an integer gas amount, rounded half up to whole gas (250 → 25 at 10%). */
export function percentRoundHalfUp(amountGas: number, percent: number): number {
  if (!Number.isInteger(amountGas) || amountGas < 0) throw new Error(`amount must be a non-negative integer, got ${amountGas}`);
  // Integer arithmetic: floor((amount * percent * 2 + 100) / 200) is round-half-up of amount * percent / 100.
  return Math.floor((amountGas * percent * 2 + 100) / 200);
}

export interface SaleSplit {
  priceGas: number;
  platformFeeGas: number;
  sellerNetGas: number;
}

/** Platform fee and seller net of a sale at a fee percentage: the seller gets exactly the rest. */
export function saleSplit(priceGas: number, feePercent: number = DEFAULT_PLATFORM_FEE_PERCENT): SaleSplit {
  const platformFeeGas = percentRoundHalfUp(priceGas, feePercent);
  return { priceGas, platformFeeGas, sellerNetGas: priceGas - platformFeeGas };
}

/** Cash-out fee and net (540 → fee 11, net 529). */
export interface CashoutSplit {
  amountGas: number;
  feeGas: number;
  netGas: number;
}

export function cashoutSplit(amountGas: number): CashoutSplit {
  const feeGas = percentRoundHalfUp(amountGas, CASHOUT_FEE_PERCENT);
  return { amountGas, feeGas, netGas: amountGas - feeGas };
}

/** The cheapest packs whose gas covers `gas` (a pack may be bought more than once; fewest packs on a tie), smallest first. */
export function cheapestPacksCovering(gas: number): GasPack[] {
  const step = Math.min(...GAS_PACKS.map((x) => x.gas));
  const best = new Map<number, { usd: number; packs: GasPack[] }>([[0, { usd: 0, packs: [] }]]);
  const better = (a: { usd: number; packs: GasPack[] }, b: { usd: number; packs: GasPack[] } | null) => !b || a.usd < b.usd || (a.usd === b.usd && a.packs.length < b.packs.length);
  for (let g = step; g < gas + step * 2; g += step) {
    let choice: { usd: number; packs: GasPack[] } | null = null;
    for (const pack of GAS_PACKS) {
      const prev = best.get(Math.max(0, g - pack.gas));
      const next = prev && { usd: prev.usd + pack.usd, packs: [...prev.packs, pack] };
      if (next && better(next, choice)) choice = next;
    }
    if (choice) best.set(g, choice);
  }
  let answer: { usd: number; packs: GasPack[] } | null = null;
  for (const [g, v] of best) if (g >= gas && better(v, answer)) answer = v;
  return (answer?.packs ?? []).sort((a, b) => a.gas - b.gas);
}

/** The lowest price whose seller net (after the platform fee, and the cash-out fee when `afterCashout`) reaches `netGas`. */
export function priceForNet(netGas: number, feePercent: number = DEFAULT_PLATFORM_FEE_PERCENT, afterCashout = false): number {
  const net = (price: number) => {
    const seller = saleSplit(price, feePercent).sellerNetGas;
    return afterCashout ? cashoutSplit(seller).netGas : seller;
  };
  let price = Math.max(1, Math.floor(netGas / (1 - feePercent / 100) / (afterCashout ? 1 - CASHOUT_FEE_PERCENT / 100 : 1)) - 2);
  while (net(price) < netGas) price += 1;
  while (price > 1 && net(price - 1) >= netGas) price -= 1;
  return price;
}

/** How many sales of `netGas` each reach the cash-out minimum, their total, and what cashing that total out leaves. */
export function salesToCashout(netGas: number): CashoutSplit & { sales: number } {
  const sales = Math.ceil(MIN_CASHOUT_GAS / netGas);
  return { sales, ...cashoutSplit(sales * netGas) };
}

/** The lowest cash-out amount (of sale_earn) whose net after the cash-out fee reaches `netGas`. */
export function cashoutForNet(netGas: number): number {
  let amount = Math.max(1, Math.floor(netGas / (1 - CASHOUT_FEE_PERCENT / 100)) - 2);
  while (cashoutSplit(amount).netGas < netGas) amount += 1;
  return amount;
}

export function gasToUsd(gas: number): number {
  return Math.round(gas) / GAS_PER_USD;
}

export const PRICE_BANDS = [
  { id: 'micro', minGas: 50, maxGas: 150 },
  { id: 'standard', minGas: 150, maxGas: 400, note: 'preferred for first listings' },
  { id: 'premium', minGas: 400, maxGas: 1000 },
  { id: 'project', minGas: 1000, maxGas: 5000 },
] as const;

export const CATEGORY_ANCHOR_GAS: Record<string, number> = {
  codegen: 250,
  research: 200,
  ops: 280,
  design: 150,
  data: 300,
  general: 120,
};

/** Demand-focus categories used by the liquidity snapshot and referral guidance. */
export const DEMAND_FOCUS_CATEGORIES = ['codegen', 'research', 'ops'] as const;

/** The largest delivery deliver_work accepts, in bytes of canonical JSON (larger work travels as a link with a checksum). */
export const MAX_DELIVERY_BYTES = 64 * 1024;
