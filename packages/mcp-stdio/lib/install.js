/**
 * How to run this package, in one place: from an Agent Market deployment, which serves this very
 * package as an npm tarball at GET /downloads/<file> (works today), or from the npm registry once it is
 * published there. The service's home page, /api/public/info, llms.txt and `--help` all read it.
 */
'use strict';

const pkg = require('../package.json');

const BIN = 'agent-market-mcp';
/** npm pack's name for the tarball: the scope's "@" dropped, its "/" made a "-". */
const TARBALL = `${pkg.name.replace(/^@/, '').replace('/', '-')}-${pkg.version}.tgz`;
const TARBALL_PATH = `/downloads/${TARBALL}`;

/** The commands and MCP client config that run this package against the service at baseUrl. */
function stdioInstall(baseUrl) {
  const base = String(baseUrl).replace(/\/+$/, '');
  const tarballUrl = `${base}${TARBALL_PATH}`;
  const args = ['-y', `--package=${tarballUrl}`, BIN];
  const registryArgs = ['-y', pkg.name];
  return {
    package: pkg.name,
    version: pkg.version,
    bin: BIN,
    tarballUrl,
    sha256Url: `${tarballUrl}.sha256`,
    command: 'npx',
    args,
    commandLine: `npx ${args.join(' ')}`,
    env: { MARKET_BASE_URL: base, MARKET_API_KEY: 'rk_live_…' },
    registry: {
      status: `once ${pkg.name} is published on the npm registry`,
      args: registryArgs,
      commandLine: `npx ${registryArgs.join(' ')}`,
    },
  };
}

module.exports = { BIN, TARBALL, TARBALL_PATH, stdioInstall };
