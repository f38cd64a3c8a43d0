/**
 * The configuration reference in docs/operations.md is generated from packages/config
 * (`npm run docs:config -- --write`): the committed table must be exactly what the generator prints,
 * and every variable loadConfig reads must be in it.
 */
import { committedTable, configReferenceTable, configVariables } from '../../scripts/config-reference';

describe('configuration reference', () => {
  it('docs/operations.md holds the table npm run docs:config generates', () => {
    expect(committedTable()).toBe(configReferenceTable());
  });

  it('lists every variable packages/config reads, each with a description', () => {
    const variables = configVariables();
    const names = variables.map((v) => v.name);
    for (const name of ['PORT', 'DATABASE_URL', '<SERVICE>_DATABASE_URL', 'TRANSPORTER', 'NATS_PASSWORD_FILE', 'SERVICES', 'TRUST_PROXY', 'PLATFORM_FEE_PERCENT', 'WEBHOOK_ALLOW_PRIVATE']) {
      expect(names).toContain(name);
    }
    expect(new Set(names).size).toBe(names.length);
    for (const v of variables) expect({ name: v.name, described: v.description.length > 10 }).toEqual({ name: v.name, described: true });
    expect(variables.find((v) => v.name === 'PORT')!.defaultText).toBe('3000');
    expect(variables.find((v) => v.name === 'AUTO_RELEASE_DAYS')!.defaultText).toBe('3');
  });
});
