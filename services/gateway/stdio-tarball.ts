/**
 * The stdio MCP package (packages/mcp-stdio) as the npm tarball the gateway serves at
 * /downloads/<file>.tgz, so `npx -y --package=<that URL> agent-market-mcp` works before (and without)
 * any registry. Packed with `npm pack` once — in the background after the gateway listens, or on the
 * first request — and cached by a hash of the package's files: a restart with the same files reuses
 * the tarball, a changed file packs anew. npm's tarballs are reproducible (fixed mtimes, sorted
 * entries), so replicas with the same files serve the same bytes and the same sha256.
 */
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { TARBALL } from '@agent-market/mcp/lib/install.js';

const run = promisify(execFile);
const PACK_TIMEOUT_MS = 120_000;

export interface PackedTarball {
  fileName: string;
  bytes: Buffer;
  /** Hex, as `sha256sum` prints it. */
  sha256: string;
  /** What npm records in a lockfile: sha512-<base64>. */
  integrity: string;
  etag: string;
}

/** The package's folder, found the way Node finds it (the workspace link in node_modules). */
export function stdioPackageDir(): string {
  return path.dirname(require.resolve('@agent-market/mcp/package.json'));
}

/** A hash of what `npm pack` reads: package.json and every path its "files" names. */
export function sourceHash(dir: string): string {
  const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { files?: string[] };
  const hash = crypto.createHash('sha256');
  const add = (rel: string) => {
    const abs = path.join(dir, rel);
    const stat = fs.statSync(abs, { throwIfNoEntry: false });
    if (!stat) return;
    if (stat.isDirectory()) {
      for (const entry of fs.readdirSync(abs).sort()) add(path.join(rel, entry));
    } else {
      hash.update(`${rel.split(path.sep).join('/')}\0`).update(fs.readFileSync(abs)).update('\0');
    }
  };
  for (const rel of ['package.json', ...(pkg.files ?? [])].sort()) add(rel);
  return hash.digest('hex');
}

function tarballOf(fileName: string, bytes: Buffer): PackedTarball {
  const sha256 = crypto.createHash('sha256').update(bytes).digest('hex');
  return {
    fileName,
    bytes,
    sha256,
    integrity: `sha512-${crypto.createHash('sha512').update(bytes).digest('base64')}`,
    etag: `"sha256-${sha256}"`,
  };
}

export class StdioTarball {
  private packing: Promise<PackedTarball> | null = null;
  private packed: PackedTarball | null = null;

  constructor(
    private readonly cacheDir: string,
    private readonly sourceDir: string = stdioPackageDir(),
  ) {}

  /** The data dir's downloads/ folder; the system temp folder for an in-memory data dir (tests). */
  static forDataDir(dataDir: string): StdioTarball {
    return new StdioTarball(dataDir === 'memory://' ? path.join(os.tmpdir(), 'agent-market-downloads') : path.join(dataDir, 'downloads'));
  }

  /** The tarball, packed on the first call (a failed pack is retried by the next call). */
  get(): Promise<PackedTarball> {
    if (this.packed) return Promise.resolve(this.packed);
    if (!this.packing) {
      this.packing = this.build().then(
        (t) => (this.packed = t),
        (err) => {
          this.packing = null;
          throw err;
        },
      );
    }
    return this.packing;
  }

  /** The tarball if it is ready within `withinMs`, else null (for pages that must not wait for npm). */
  async ready(withinMs: number): Promise<PackedTarball | null> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), withinMs)));
    try {
      return await Promise.race([this.get().catch(() => null), late]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async build(): Promise<PackedTarball> {
    const dir = path.join(this.cacheDir, sourceHash(this.sourceDir).slice(0, 16));
    const cached = path.join(dir, TARBALL);
    if (fs.existsSync(cached)) return tarballOf(TARBALL, fs.readFileSync(cached));

    fs.mkdirSync(this.cacheDir, { recursive: true });
    const work = fs.mkdtempSync(path.join(this.cacheDir, '.pack-'));
    try {
      // npm_* variables of an enclosing `npm start` (workspace, dry-run…) must not steer this pack.
      const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
      const { stdout } = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], {
        cwd: this.sourceDir,
        env,
        timeout: PACK_TIMEOUT_MS,
        maxBuffer: 10_000_000,
        shell: process.platform === 'win32',
      });
      const [info] = JSON.parse(stdout) as [{ filename: string }];
      if (info.filename !== TARBALL) throw new Error(`npm pack wrote ${info.filename}, expected ${TARBALL}`);
      fs.mkdirSync(dir, { recursive: true });
      // A rename is atomic: a concurrent packer (another process on the same data dir) writes the same bytes.
      fs.renameSync(path.join(work, info.filename), cached);
      return tarballOf(TARBALL, fs.readFileSync(cached));
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
  }
}
