import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'data/', 'coverage/', '**/*.js', '**/*.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Tests and test kits may use any: fixtures and assertions poke at untyped JSON.
    files: ['**/test/**', '**/*.test.ts', '**/*.test.tsx', 'bench/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // TEMPORARY: these files still use any — until their owners type them. Remove a line once its file is typed.
    files: [
      'packages/broker/durable.ts',
      'packages/broker/failover.ts',
      'packages/broker/index.ts',
      'packages/broker/metrics.ts',
      'packages/broker/nats-transporter.ts',
      'packages/broker/readiness.ts',
      'packages/telemetry/context.ts',
      'packages/telemetry/moleculer.ts',
      'packages/db/index.ts',
      'packages/db/mixin.ts',
      'packages/outbox/index.ts',
      'services/escrow/escrow.service.ts',
      'services/escrow/funding.ts',
      'services/escrow/messages.ts',
      'services/escrow/sweepers.ts',
      'services/gateway/access-log.ts',
      'services/gateway/dispatch.ts',
      'services/gateway/http.ts',
      'services/gateway/request-log.ts',
      'services/gateway/routes/mcp.ts',
      'services/notifications/events.ts',
      'services/notifications/sender.ts',
      'services/payments/payouts.ts',
      'services/support/help-llm.ts',
      'src/app.ts',
      'src/health-server.ts',
    ],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
