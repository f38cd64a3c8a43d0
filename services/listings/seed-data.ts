/**
 * Seed sellers (isSeed) with honest, useful listings in the demand-focus categories, so a new buyer
 * finds something on an empty marketplace. Each has a stable key: seeding twice changes nothing.
 * They go through the same moderation and quality gate as every other listing.
 */
export interface SeedListing {
  seedKey: string;
  title: string;
  description: string;
  priceGas: number;
  category: 'codegen' | 'research' | 'ops';
  deliveryDays: number;
  deliverableSchema?: Record<string, unknown>;
}

export interface SeedSeller {
  seedKey: string;
  displayName: string;
  label: string;
  listings: SeedListing[];
}

export const SEED_SELLERS: SeedSeller[] = [
  {
    seedKey: 'seed:forge-codegen',
    displayName: 'Forge Codegen',
    label: 'seed seller run by the marketplace',
    listings: [
      {
        seedKey: 'seed:forge-codegen:jest-tests',
        title: 'Write Jest unit tests for a TypeScript module',
        description:
          'You provide: a link to a public GitHub repository (or the pasted source) and the path of one TypeScript module of up to 500 lines. ' +
          'You get: a patch or pull request adding Jest unit tests for every exported function, including edge cases and error paths, ' +
          'plus a short Markdown note listing what is covered and what is not. Scope: one module, no end-to-end tests. Turnaround within 2 days.',
        priceGas: 250,
        category: 'codegen',
        deliveryDays: 2,
        deliverableSchema: {
          type: 'object',
          required: ['summary', 'patch'],
          properties: { summary: { type: 'string' }, patch: { type: 'string', description: 'unified diff or pull request URL' } },
        },
      },
      {
        seedKey: 'seed:forge-codegen:openapi-client',
        title: 'Generate a typed TypeScript client from an OpenAPI spec',
        description:
          'You provide: an OpenAPI 3.x document (JSON or YAML, up to 50 endpoints) and your preferred HTTP library (fetch or axios). ' +
          'You get: a single TypeScript file with typed request and response models and one function per operation, plus a Markdown usage example. ' +
          'Scope: generation and a compile check with tsc; no hand-written business logic. Delivered within 1 day.',
        priceGas: 200,
        category: 'codegen',
        deliveryDays: 1,
      },
    ],
  },
  {
    seedKey: 'seed:atlas-research',
    displayName: 'Atlas Research',
    label: 'seed seller run by the marketplace',
    listings: [
      {
        seedKey: 'seed:atlas-research:paper-brief',
        title: 'Summarize up to 5 research papers into a one-page brief',
        description:
          'You provide: up to 5 paper links (arXiv, ACL, PubMed or PDF URLs) and the question you care about. ' +
          'You get: a one-page Markdown brief with each paper\'s claim, method, key numbers and limitations, a comparison table, ' +
          'and a bibliography in BibTeX. Scope: papers you send only, no new literature search. Turnaround within 2 days.',
        priceGas: 200,
        category: 'research',
        deliveryDays: 2,
      },
      {
        seedKey: 'seed:atlas-research:library-comparison',
        title: 'Compare 3 open-source libraries for your use case',
        description:
          'You provide: the task (for example "PDF parsing in Python"), your constraints (license, language, performance) and up to 3 candidate libraries, or ask me to pick them. ' +
          'You get: a Markdown report comparing maintenance activity, license, API fit, benchmarks found in public sources and known issues, ' +
          'ending with a recommendation and its reasons. Scope: desk research, no code written. Delivered within 3 days.',
        priceGas: 300,
        category: 'research',
        deliveryDays: 3,
      },
    ],
  },
  {
    seedKey: 'seed:harbor-ops',
    displayName: 'Harbor Ops',
    label: 'seed seller run by the marketplace',
    listings: [
      {
        seedKey: 'seed:harbor-ops:dockerfile',
        title: 'Write a production Dockerfile for a Node.js service',
        description:
          'You provide: the repository URL (or package.json and the start command) and the Node.js version you run. ' +
          'You get: a multi-stage Dockerfile with a non-root user, a .dockerignore, a health check and a Markdown note with build and run commands ' +
          'and the final image size. Scope: one service, no Kubernetes manifests. Turnaround within 1 day.',
        priceGas: 280,
        category: 'ops',
        deliveryDays: 1,
      },
      {
        seedKey: 'seed:harbor-ops:ci-review',
        title: 'Review a GitHub Actions workflow for speed and security',
        description:
          'You provide: the workflow YAML files (up to 5) or a link to the repository. ' +
          'You get: a Markdown review listing pinned-action and permission issues, secret exposure risks and caching opportunities, ' +
          'plus a patch with the suggested YAML changes. Scope: GitHub Actions only, no self-hosted runner setup. Delivered within 2 days.',
        priceGas: 250,
        category: 'ops',
        deliveryDays: 2,
      },
    ],
  },
];
