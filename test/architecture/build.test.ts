/**
 * The production build (`npm run build`, tsconfig.build.json — what the image runs) compiles: nothing it
 * includes pulls in test code (jest's globals are not in its types), e.g. a script importing a test kit.
 * The image build finds the same, but only where Docker runs.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

test('tsc -p tsconfig.build.json compiles with no test code in it', () => {
  let output = '';
  try {
    execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--noEmit'], { cwd: ROOT, encoding: 'utf8', stdio: 'pipe' });
  } catch (err) {
    output = String((err as { stdout?: string }).stdout ?? err);
  }
  expect(output).toBe('');
}, 180_000);
