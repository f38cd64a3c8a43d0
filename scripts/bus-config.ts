/**
 * `npm run bus:config [-- --namespace NS] [--out FILE]`: writes the NATS server's users and
 * permissions, generated from the call table (packages/call-table), to deploy/nats/auth.conf
 * (or FILE; "-" prints it). The committed file uses the default namespace; a test fails when it
 * differs from this command's output.
 */
import fs from 'node:fs';
import path from 'node:path';
import { DEFAULT_NAMESPACE, natsAuthConfig } from '../packages/call-table/nats-auth';

export const AUTH_CONF_PATH = path.resolve(__dirname, '../deploy/nats/auth.conf');

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

if (require.main === module) {
  const namespace = arg('namespace') ?? process.env.NAMESPACE ?? DEFAULT_NAMESPACE;
  const out = arg('out') ?? AUTH_CONF_PATH;
  const text = natsAuthConfig(namespace);
  if (out === '-') process.stdout.write(text);
  else {
    fs.mkdirSync(path.dirname(out), { recursive: true });
    fs.writeFileSync(out, text);
    console.log(`wrote ${path.relative(process.cwd(), out) || out} (namespace ${namespace})`);
  }
}
