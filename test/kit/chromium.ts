/**
 * Debian's Chromium driven by playwright-core, for the browser suites and `npm run screenshots`.
 * No browser is downloaded: without /usr/bin/chromium (or CHROMIUM_PATH) the browser suites skip
 * and say why (`apt-get install -y chromium`).
 */
import fs from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export const chromiumMissing: string | null = fs.existsSync(CHROMIUM_PATH)
  ? null
  : `browser tests skipped: no Chromium at ${CHROMIUM_PATH} (install it with \`apt-get install -y chromium\`, or set CHROMIUM_PATH)`;

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS, headless: true });
}

export const DESKTOP = { width: 1280, height: 900 };
export const PHONE = { width: 390, height: 844 };
