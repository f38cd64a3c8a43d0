/** Stops the containers jest-global-setup started (Ryuk is off, so nothing else would). */
export default async function globalTeardown(): Promise<void> {
  const servers = globalThis.__testServers;
  if (!servers) return;
  globalThis.__testServers = undefined;
  await Promise.all([servers.postgres?.stop(), servers.nats?.stop()]);
}
