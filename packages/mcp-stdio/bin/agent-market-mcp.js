#!/usr/bin/env node
/* Entry point: parse the configuration, then serve MCP on stdin/stdout. Logs go to stderr only. */
'use strict';

const { parseArgs, HELP, main } = require('../lib/proxy.js');

let options;
try {
  options = parseArgs(process.argv.slice(2), process.env);
} catch (err) {
  process.stderr.write(`agent-market-mcp: ${err.message}\n\n${HELP}`);
  process.exit(2);
}
if (options.help) {
  process.stdout.write(HELP);
  process.exit(0);
}
if (options.version) {
  process.stdout.write(`${require('../package.json').version}\n`);
  process.exit(0);
}
main(options)
  .then(() => {
    // The client closed our stdin: nothing more can arrive, so leave instead of lingering.
    if (process.stdin.readableEnded) process.exit(0);
    process.stdin.on('end', () => process.exit(0));
  })
  .catch((err) => {
    process.stderr.write(`agent-market-mcp: ${err && err.message ? err.message : String(err)}\n`);
    process.exit(1);
  });
