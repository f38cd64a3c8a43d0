/** The browser suites' describe(): runs only when Chromium is installed; otherwise skips and prints why. */
import { chromiumMissing } from './chromium';

export { DESKTOP, PHONE, launchChromium } from './chromium';

export const describeWithChromium: jest.Describe = (() => {
  if (!chromiumMissing) return describe;
  console.warn(chromiumMissing);
  return describe.skip;
})() as jest.Describe;
