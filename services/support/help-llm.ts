/**
 * ask_help's optional LLM composition (OpenAI-compatible chat completions), grounded in the retrieved
 * passages only: an answer naming a number or a tool the passages do not is dropped.
 */
import type { KnowledgeSection } from '../../packages/knowledge';
import type { HelpAnswer, HelpInput } from '../../packages/contracts/support';

export interface LlmOptions {
  url: string;
  key: string | null;
  model: string;
  timeoutMs: number;
}

const SYSTEM_PROMPT =
  'You are the help assistant of an agent marketplace. Answer ONLY from the passages given. ' +
  'Name tools, arguments and numbers exactly as the passages do; never invent a tool, an argument or a number. ' +
  'If the passages do not answer the question, say you do not know. Be brief: a few sentences, then the next tool call.';

function chatUrl(url: string): string {
  const u = url.replace(/\/+$/, '');
  return /\/chat\/completions$/.test(u) ? u : `${u}/chat/completions`;
}

/** Numbers and tool names in the LLM's text must all appear in what it was given. */
export function isGrounded(text: string, given: string): boolean {
  const numbers = (s: string) => new Set((s.match(/\d+(?:\.\d+)?/g) ?? []).map((n) => n.replace(/\.0+$/, '')));
  const givenNumbers = numbers(given);
  for (const n of numbers(text)) if (!givenNumbers.has(n)) return false;
  const snake = (s: string) => new Set(s.match(/\b[a-z]+(?:_[a-z]+)+\b/g) ?? []);
  const givenSnake = snake(given);
  for (const w of snake(text)) if (!givenSnake.has(w)) return false;
  return true;
}

export async function composeWithLlm(
  opts: LlmOptions,
  input: HelpInput,
  retrieval: HelpAnswer,
  passages: KnowledgeSection[],
): Promise<string | null> {
  const passageText = passages.map((p) => `[${p.id}] ${p.title}\n${p.body}`).join('\n\n---\n\n');
  const contextText = [
    input.stuckState ? `Stuck state: ${input.stuckState}` : '',
    input.context?.toolName ? `Tool: ${input.context.toolName}` : '',
    input.context?.error ? `Error: ${input.context.error}` : '',
    `Facts already established:\n${retrieval.answer}`,
  ]
    .filter(Boolean)
    .join('\n');
  const user = `Passages:\n${passageText}\n\n${contextText}\n\nQuestion: ${input.question}`;
  const res = await fetch(chatUrl(opts.url), {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(opts.key ? { authorization: `Bearer ${opts.key}` } : {}) },
    body: JSON.stringify({
      model: opts.model,
      temperature: 0,
      max_tokens: 600,
      messages: [
        { role: 'system', content: SYSTEM_PROMPT },
        { role: 'user', content: user },
      ],
    }),
    signal: AbortSignal.timeout(opts.timeoutMs),
  });
  if (!res.ok) throw new Error(`LLM answered HTTP ${res.status}`);
  // An OpenAI-compatible chat completion; anything else has no string content and is refused below.
  const json = (await res.json()) as { choices?: { message?: { content?: unknown } }[] } | null;
  const content = json?.choices?.[0]?.message?.content;
  if (typeof content !== 'string' || !content.trim()) throw new Error('LLM returned no content');
  const text = content.trim().slice(0, 4000);
  if (!isGrounded(text, `${user}\n${JSON.stringify(retrieval.nextStep ?? {})}`)) return null;
  return text;
}
