// Asking the knowledge base with an answer: the extension's own knowledge base gives the
// numbered, cited context (the engine, no server needed); Chrome's built-in model writes the
// answer on this device when the browser offers it, else the paired server's configured LLM
// does, else the context is the answer. The result always says which of the three produced it.

import { call, loadSettings } from './devlens.js';
import { engine } from './engine.js';

// The rules `devlens kb ask --generate` follows, word for word (devlens-kb/src/answer.rs
// SYSTEM_PROMPT; a test keeps them equal).
export const SYSTEM_PROMPT =
  "You answer a developer's question using only the numbered sources from their saved knowledge base. Cite every source you use as [1], [2], … right after the statement it supports. If the sources do not cover the question, or only part of it, say so plainly and say what is missing; never invent an answer the sources do not support. Include relevant code from the sources when it helps. Be concise but thorough.";

/** The user message: the sources, then the question (devlens-kb/src/answer.rs user_prompt). */
export function userPrompt(query, context) {
  return `Sources from the knowledge base:\n\n${context}\n\nQuestion: ${query}`;
}

/**
 * Whether Chrome's built-in model (the Prompt API, global `LanguageModel`) can answer now:
 * `{ usable, why }`, `why` saying what is missing when it cannot.
 */
export async function builtInModel() {
  if (typeof globalThis.LanguageModel === 'undefined') {
    return { usable: false, why: "this browser does not offer Chrome's built-in model (the Prompt API)" };
  }
  try {
    const availability = await globalThis.LanguageModel.availability();
    if (availability === 'available') return { usable: true, why: '' };
    if (availability === 'downloadable' || availability === 'downloading') {
      return { usable: false, why: "Chrome's built-in model is not downloaded yet" };
    }
    return { usable: false, why: "Chrome's built-in model is unavailable on this device" };
  } catch (e) {
    return { usable: false, why: `Chrome's built-in model did not answer (${e.message})` };
  }
}

/**
 * Asks `question` of the knowledge base in this browser: its top solutions are the numbered
 * sources. Answers `{ answer, producedBy, note, sources, context, notice }`: `producedBy` is
 * 'device' (Chrome's built-in model wrote the answer), 'server' (the paired devlens server's
 * [llm] did) or 'context' (no model could: the sources are the answer), and `note` says so.
 */
export async function ask(
  question,
  { mode = 'semantic', model = builtInModel, local = (query) => engine('askContext', { query, mode }), post = call, settings = loadSettings } = {},
) {
  const found = await local(question);
  if (!found.sources.length) return noSources(found);
  const onDevice = await model();
  if (onDevice.usable) {
    let session;
    try {
      session = await globalThis.LanguageModel.create({
        initialPrompts: [{ role: 'system', content: SYSTEM_PROMPT }],
      });
      const answer = await session.prompt(userPrompt(found.query, found.context));
      return {
        ...found,
        answer: answer.trim(),
        producedBy: 'device',
        note: "Answered by Chrome's built-in model on this device, from the sources below.",
      };
    } catch (e) {
      return { ...found, answer: null, producedBy: 'context', note: `Chrome's built-in model failed (${e.message}): read the sources below.` };
    } finally {
      if (session) session.destroy();
    }
  }
  const { paired } = await settings();
  if (!paired) {
    return {
      ...found,
      answer: null,
      producedBy: 'context',
      note: `Fell back to the sources alone: ${onDevice.why}, and no devlens server is paired to answer. The numbered sources below are the context an answer would be written from.`,
    };
  }
  let served;
  try {
    served = await post('/api/kb/ask', { query: question, generateAnswer: true });
  } catch (e) {
    return {
      ...found,
      answer: null,
      producedBy: 'context',
      note: `Fell back to the sources alone: ${onDevice.why}, and the paired devlens server did not answer (${e.message}).`,
    };
  }
  if (served.answer && served.sources.length) {
    return {
      ...served,
      producedBy: 'server',
      note: `Fell back to the paired devlens server's model (${served.answeredBy || 'its [llm] endpoint'}), from its synced knowledge base: ${onDevice.why}.`,
    };
  }
  return {
    ...found,
    answer: null,
    producedBy: 'context',
    note: `Fell back to the sources alone: ${onDevice.why}, and the devlens server has no LLM configured (its [llm] settings). The numbered sources below are the context an answer would be written from.`,
  };
}

function noSources(found) {
  return {
    ...found,
    answer: null,
    producedBy: 'context',
    note: 'No saved solution matches the question, so there is nothing to answer from.',
  };
}
