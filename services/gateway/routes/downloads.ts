/**
 * /downloads: the stdio MCP package as an npm tarball, served by the deployment itself, so the config
 * every page shows (`npx -y --package=<base>/downloads/<file>.tgz agent-market-mcp`) works before the
 * package is on any registry. Its sha256 is published beside it (and in /api/public/info).
 * /server.json: the package's MCP registry description for this deployment — its URLs filled in, and
 * the remote endpoint, which works as it is.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Express, Request, Response } from 'express';
import { MarketError } from '../../../packages/errors';
import { TARBALL, TARBALL_PATH, stdioInstall } from '@agent-market/mcp/lib/install.js';
import type { GatewayDeps } from '../deps';
import { sendError } from '../http';
import { stdioPackageDir, type PackedTarball } from '../stdio-tarball';

/** Same URL, same version: an hour, then revalidated by ETag (a rebuilt package changes the ETag, not the URL). */
const CACHE_CONTROL = 'public, max-age=3600';

/** The package's server.json with this deployment's address in place of {MARKET_BASE_URL}, plus its /mcp as a remote. */
export function deploymentServerJson(baseUrl: string): Record<string, unknown> {
  const base = baseUrl.replace(/\/+$/, '');
  const text = fs.readFileSync(path.join(stdioPackageDir(), 'server.json'), 'utf8').replaceAll('{MARKET_BASE_URL}', base);
  const doc = JSON.parse(text) as Record<string, unknown>;
  return {
    ...doc,
    websiteUrl: base,
    remotes: [
      {
        type: 'streamable-http',
        url: `${base}/mcp`,
        headers: [{ name: 'Authorization', description: 'Bearer rk_live_… (register to get a key)', isRequired: false, isSecret: true }],
      },
    ],
  };
}

export function registerDownloadRoutes(app: Express, deps: GatewayDeps): void {
  const { stdioTarball } = deps;
  const serverJson = JSON.stringify(deploymentServerJson(deps.config.publicBaseUrl), null, 2);

  app.get('/server.json', (_req, res) => {
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('Cache-Control', 'public, max-age=300');
    res.type('application/json').send(serverJson);
  });

  const withTarball = async (req: Request, res: Response, send: (t: PackedTarball) => void) => {
    let tarball: PackedTarball;
    try {
      tarball = await stdioTarball.get();
    } catch (err) {
      deps.broker.logger.warn({ err }, `could not pack the stdio MCP package: ${(err as Error).message}`);
      sendError(res, req, new MarketError('service_unavailable', 'The stdio MCP package could not be packed on this server.', {
        hint: `Use the remote MCP endpoint ${deps.config.publicBaseUrl}/mcp instead (nothing to install), or retry later.`,
      }));
      return;
    }
    res.setHeader('ETag', tarball.etag);
    res.setHeader('Cache-Control', CACHE_CONTROL);
    res.setHeader('Access-Control-Allow-Origin', '*');
    if (req.fresh) {
      res.status(304).end();
      return;
    }
    send(tarball);
  };

  app.get(TARBALL_PATH, (req, res) =>
    withTarball(req, res, (t) => {
      res.type('application/gzip');
      res.setHeader('Content-Disposition', `attachment; filename="${t.fileName}"`);
      // RFC 9530: lets a client check the bytes without a second request.
      res.setHeader('Repr-Digest', `sha-256=:${Buffer.from(t.sha256, 'hex').toString('base64')}:`);
      res.setHeader('Content-Length', t.bytes.length);
      res.end(req.method === 'HEAD' ? undefined : t.bytes);
    }),
  );

  app.get(`${TARBALL_PATH}.sha256`, (req, res) =>
    withTarball(req, res, (t) => {
      res.type('text/plain; charset=utf-8').send(`${t.sha256}  ${t.fileName}\n`); // sha256sum -c reads this
    }),
  );

  app.get('/downloads/:file', (req, res) => {
    sendError(res, req, new MarketError('not_found', `No download ${req.params.file.slice(0, 100)}.`, {
      hint: `This deployment serves ${TARBALL}: ${stdioInstall(deps.config.publicBaseUrl).commandLine}`,
    }));
  });
}
