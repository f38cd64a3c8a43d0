/**
 * The written guidance (llms.txt, llms-full.txt, knowledge sections) comes from packages/knowledge,
 * which the support service owns. It is loaded lazily so the gateway still starts (and says so
 * honestly) if that package is missing from a build.
 */
export interface KnowledgeSection {
  id: string;
  title: string;
  body: string;
  [k: string]: unknown;
}

interface KnowledgeModule {
  knowledgeSections(baseUrl: string): KnowledgeSection[];
  renderLlmsTxt(baseUrl: string): string;
  renderLlmsFull(baseUrl: string): string;
}

let cached: KnowledgeModule | null | undefined;

export function knowledge(): KnowledgeModule | null {
  if (cached !== undefined) return cached;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const mod = require('../../../packages/knowledge') as Partial<KnowledgeModule>;
    cached =
      typeof mod.renderLlmsTxt === 'function' && typeof mod.renderLlmsFull === 'function' && typeof mod.knowledgeSections === 'function'
        ? (mod as KnowledgeModule)
        : null;
  } catch {
    cached = null;
  }
  return cached;
}
