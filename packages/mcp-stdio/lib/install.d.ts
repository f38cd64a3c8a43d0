/** Types of lib/install.js (how to run this package), for the gateway's TypeScript. */
export interface StdioInstall {
  package: string;
  version: string;
  bin: string;
  /** <base>/downloads/<file>.tgz: this package, served by the deployment itself. */
  tarballUrl: string;
  sha256Url: string;
  command: 'npx';
  args: string[];
  commandLine: string;
  env: { MARKET_BASE_URL: string; MARKET_API_KEY: string };
  registry: { status: string; args: string[]; commandLine: string };
}

export const BIN: string;
export const TARBALL: string;
export const TARBALL_PATH: string;
export function stdioInstall(baseUrl: string): StdioInstall;
