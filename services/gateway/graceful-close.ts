/**
 * Closing an HTTP server without cutting calls. `server.close()` alone stops accepting, but Node keeps
 * answering `Connection: keep-alive` on open sockets and leaves a socket idle after its last answer, so
 * a client keeps sending onto it and the close waits for the idle timeout. Here, once closing starts,
 * every answer not yet begun says `Connection: close` (Node then ends its socket), and a socket that
 * falls idle is closed at once.
 */
import type { Server, ServerResponse } from 'node:http';

export interface GracefulClose {
  /** Stops accepting, lets in-flight requests finish, then closes every socket (all of them after forceAfterMs). */
  close(forceAfterMs: number): Promise<void>;
}

export function gracefulClose(server: Server): GracefulClose {
  const inFlight = new Set<ServerResponse>();
  let closing = false;
  server.on('request', (_req, res: ServerResponse) => {
    if (closing) res.setHeader('connection', 'close');
    inFlight.add(res);
    res.once('close', () => {
      inFlight.delete(res);
      // The socket is marked idle after this event: look once the current tick is done.
      if (closing) setImmediate(() => server.closeIdleConnections());
    });
  });
  return {
    async close(forceAfterMs) {
      closing = true;
      for (const res of inFlight) if (!res.headersSent) res.setHeader('connection', 'close');
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const force = setTimeout(() => server.closeAllConnections(), forceAfterMs);
      await closed;
      clearTimeout(force);
    },
  };
}
