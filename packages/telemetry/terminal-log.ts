/**
 * Logs for a person at a terminal (LOG_FORMAT=pretty, the default there): one line per entry,
 * `time LEVEL module  message  key=value…`, instead of pino's JSON. Containers, tests and log shippers
 * keep the JSON lines. Two things keep the startup banner the first thing a person reads:
 * - Moleculer's own start-up chatter (its broker and registry modules, and each service's
 *   "started"/"waiting for" lines) is shown only at LOG_LEVEL=debug or trace;
 * - the other info lines written while the process starts are held until the entry point has
 *   printed its banner (`releaseStartupLines`), or the process exits, or a minute has passed.
 * Warnings and errors are never held.
 */
/** Moleculer's own modules: at a terminal they speak only when something is wrong (unless LOG_LEVEL=debug). */
const FRAMEWORK_MODULES = ['BROKER', 'REGISTRY', 'TRANSIT', 'TRANSPORTER', 'DISCOVERER', 'CACHER', '$NODE'];

/** The lines Moleculer writes for every service as it starts and stops, under that service's own name. */
const SERVICE_LIFECYCLE = [/^Service '[^']+' (started|stopped)\.$/, /^Waiting for service\(s\) /, /^Service\(s\) .+ are available\.$/];

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
const COLOURS: Record<number, string> = { 40: '\x1b[33m', 50: '\x1b[31m', 60: '\x1b[31m' };
const WARN = 40;
const HOLD_AT_MOST_MS = 60_000;
/** Fields every line carries, or that the line's layout already shows. */
const LAYOUT_FIELDS = new Set(['level', 'time', 'pid', 'hostname', 'nodeID', 'ns', 'mod', 'svc', 'msg', 'err']);

const verbose = (level: string) => level === 'debug' || level === 'trace';

/** Moleculer's per-module levels at a terminal: the framework's modules at warn unless LOG_LEVEL asks for more. */
export function terminalLogLevels(level: string): Record<string, string> {
  if (verbose(level)) return { '**': level };
  return { ...Object.fromEntries(FRAMEWORK_MODULES.map((m) => [m, 'warn'])), '**': level };
}

interface Output {
  write(text: string): unknown;
  isTTY?: boolean;
}

let held: string[] | null = [];
let heldOutput: Output | null = null;

function flush(): void {
  const lines = held ?? [];
  held = null;
  if (heldOutput && lines.length) heldOutput.write(lines.join(''));
}

/** The entry point printed its banner: what was held is written now, and nothing more is held. */
export function releaseStartupLines(): void {
  flush();
}

/** One JSON line of pino as the line a person reads. */
export function formatLogLine(entry: Record<string, unknown>, colour = false): string {
  const level = typeof entry.level === 'number' ? entry.level : 30;
  const time = new Date(typeof entry.time === 'number' ? entry.time : Date.now());
  const hms = `${String(time.getHours()).padStart(2, '0')}:${String(time.getMinutes()).padStart(2, '0')}:${String(time.getSeconds()).padStart(2, '0')}`;
  const label = (LEVELS[level] ?? String(level)).padEnd(5);
  const mod = typeof entry.mod === 'string' ? entry.mod : '';
  const extras = Object.entries(entry)
    .filter(([k]) => !LAYOUT_FIELDS.has(k))
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`);
  const err = entry.err as { stack?: string; message?: string } | undefined;
  const stack = err?.stack ? `\n    ${err.stack.split('\n').join('\n    ')}` : err?.message ? `\n    ${err.message}` : '';
  const head = colour && COLOURS[level] ? `${COLOURS[level]}${label}\x1b[0m` : label;
  return `${hms} ${head} ${mod ? `${mod.padEnd(13)} ` : ''}${String(entry.msg ?? '')}${extras.length ? `  ${extras.join(' ')}` : ''}${stack}\n`;
}

/**
 * pino's destination at a terminal. `level` is LOG_LEVEL: at debug or trace nothing is quieted.
 * Lines are written synchronously, so they stay in order with the banner printed with console.log.
 */
export function terminalLogDestination(level: string, out: Output = process.stdout): { write(line: string): void } {
  const quiet = !verbose(level);
  const colour = !!out.isTTY;
  if (held && !heldOutput) {
    heldOutput = out;
    process.once('exit', flush);
    // A process whose entry point prints no banner (a script) still shows its lines, a little late.
    setTimeout(flush, HOLD_AT_MOST_MS).unref();
  }
  return {
    write(line: string) {
      let entry: Record<string, unknown>;
      try {
        entry = JSON.parse(line) as Record<string, unknown>;
      } catch {
        out.write(line);
        return;
      }
      const lvl = typeof entry.level === 'number' ? entry.level : 30;
      if (quiet && lvl < WARN && SERVICE_LIFECYCLE.some((p) => p.test(String(entry.msg ?? '')))) return;
      const text = formatLogLine(entry, colour);
      if (held && lvl < WARN && out === heldOutput) held.push(text);
      else out.write(text);
    },
  };
}
