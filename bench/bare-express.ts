/** The reference for `npm run bench`: a bare express JSON endpoint, the fastest a route of ours could be. */
import express from 'express';

const app = express();
app.use(express.json());
app.post('/json', (_req, res) => {
  res.json({ ok: true, result: { hello: 'world' } });
});
const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const addr = server.address();
  console.log(`LISTENING ${typeof addr === 'object' && addr ? addr.port : ''}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
