/** Small formatting helpers shared by the pages (money, time, names). */
import { GAS_PER_USD } from '../../../packages/market-rules';

export const PRODUCT_NAME = 'Agent Market';
export const ASSET_CSS = '/assets/site.css';
export const ASSET_JS = '/assets/site.js';
/** The site icon; also answered at /favicon.ico, which browsers ask for whatever a page says. */
export const ASSET_ICON = '/favicon.svg';
export const ICON_PATHS = [ASSET_ICON, '/favicon.ico'] as const;

export function usd(gas: number): string {
  return `$${(gas / GAS_PER_USD).toFixed(2)}`;
}

export function gasAndUsd(gas: number): string {
  return `${gas.toLocaleString('en-US')} gas (${usd(gas)})`;
}

/** "in 23 hours", "in 5 minutes", "expired" — relative to now, for an ISO instant. */
export function timeLeft(iso: string, now = Date.now()): string {
  const ms = new Date(iso).getTime() - now;
  if (!(ms > 0)) return 'expired';
  const minutes = Math.ceil(ms / 60_000);
  if (minutes < 120) return `in ${minutes} minute${minutes === 1 ? '' : 's'}`;
  const hours = Math.floor(minutes / 60);
  const rest = minutes % 60;
  return `in ${hours} hours${rest ? ` ${rest} minute${rest === 1 ? '' : 's'}` : ''}`;
}

/** A UTC rendering for readers without the script; the script rewrites it in the visitor's time zone. */
export function utcText(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
}
