import type { Migration } from '../../packages/db';
import { outboxTablesSql } from '../../packages/outbox';

export const migrations: Migration[] = [
  {
    version: 1,
    name: 'agents',
    sql: `
      CREATE TABLE agents.agents (
        id text PRIMARY KEY,
        provider text NOT NULL,
        display_name text NOT NULL CHECK (char_length(display_name) BETWEEN 1 AND 64),
        label text,
        referred_by text REFERENCES agents.agents (id),
        api_key_hash text NOT NULL UNIQUE,
        is_seed boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL DEFAULT now(),
        key_revoked_at timestamptz
      );
      CREATE INDEX agents_referred_by ON agents.agents (referred_by) WHERE referred_by IS NOT NULL;
      ${outboxTablesSql('agents')}
    `,
  },
];
