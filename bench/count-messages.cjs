/* eslint-disable @typescript-eslint/no-require-imports, no-undef -- a CommonJS preload for node, outside the TypeScript sources */
/**
 * Bench-only preload (`NODE_OPTIONS=--require bench/count-messages.cjs`, set by `npm run bench` for every
 * process it starts): counts the messages a process sends — SQL round trips (pg Client.query), NATS
 * messages out and in (protocol level: Moleculer packets, JetStream publishes, pulls and acks alike),
 * JetStream publishes, pulls (fetch) and acks, Moleculer remote requests — and writes them to
 * $BENCH_COUNT_DIR/<pid>.json on SIGUSR2. No timer, no cost beyond a counter increment per call.
 */
const fs = require('node:fs');
const path = require('node:path');

const counts = { sql: 0, sqlInFlight: 0, natsOut: 0, natsIn: 0, jsPublish: 0, jsFetch: 0, jsAck: 0, moleculerRequests: 0 };

function patch(load, method, key) {
  try {
    const C = load();
    if (!C || !C.prototype || typeof C.prototype[method] !== 'function') return;
    const orig = C.prototype[method];
    C.prototype[method] = function counted(...args) {
      counts[key]++;
      return orig.apply(this, args);
    };
  } catch {
    // the module is not used by this process
  }
}

patch(() => require('pg').Client, 'query', 'sql');
// How many of this process's SQL statements are in flight when one starts (itself included): what batching
// concurrent statements into one could group at most (sqlInFlight / sql = the average).
let inFlight = 0;
try {
  const C = require('pg').Client;
  const counted = C.prototype.query;
  C.prototype.query = function inFlightCounted(...args) {
    inFlight++;
    counts.sqlInFlight += inFlight;
    let done = false;
    const end = () => { if (!done) { done = true; inFlight--; } };
    const cb = args.length && typeof args[args.length - 1] === 'function' ? args.length - 1 : -1;
    if (cb >= 0) {
      const orig = args[cb];
      args[cb] = function ended(...r) { end(); return orig.apply(this, r); };
    }
    const result = counted.apply(this, args);
    if (cb < 0 && result && typeof result.then === 'function') result.then(end, end);
    else if (cb < 0) end();
    return result;
  };
} catch {
  // pg is not used by this process
}
patch(() => require('nats/lib/nats-base-client/protocol').ProtocolHandler, 'publish', 'natsOut');
patch(() => require('nats/lib/nats-base-client/protocol').ProtocolHandler, 'processMsg', 'natsIn');
patch(() => require('nats/lib/jetstream/jsclient').JetStreamClientImpl, 'publish', 'jsPublish');
patch(() => require('nats/lib/jetstream/consumer').PullConsumerImpl, 'fetch', 'jsFetch');
patch(() => require('nats/lib/jetstream/jsmsg').JsMsgImpl, 'ack', 'jsAck');
// moleculer's package exports do not expose src/: load the file by its path (the same module instance).
patch(() => require(path.join(path.dirname(require.resolve('moleculer')), 'src', 'transit.js')), '_sendRequest', 'moleculerRequests');

const dir = process.env.BENCH_COUNT_DIR;
if (dir) {
  process.on('SIGUSR2', () => {
    try {
      fs.writeFileSync(path.join(dir, `${process.pid}.json`), JSON.stringify(counts));
    } catch {
      // the bench went away
    }
  });
}
