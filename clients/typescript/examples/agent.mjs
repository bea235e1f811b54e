#!/usr/bin/env node
// An agent that remembers: the loop of examples/agent, in JavaScript on Node 18+. An ES
// module (.mjs: import, top-level await), as the client is ESM only.
//
// For each thing the user says: read what memory holds for it, put that in the model's
// prompt, answer, then write the turn to memory. Any OpenAI-compatible chat server
// answers (Ollama, vLLM, llama.cpp server, LM Studio, OpenAI).
//
//   CREDO_KEY=credo_... node examples/agent.mjs --scope user:ana "I moved to Miami last month."
//   CREDO_KEY=credo_... node examples/agent.mjs --scope user:ana      # one turn per line of input
//
// Environment: CREDO_URL (default http://127.0.0.1:9464) and CREDO_KEY (a key with the
// read and write rights); OPENAI_BASE_URL (default http://127.0.0.1:11434/v1, Ollama's
// OpenAI-compatible API), OPENAI_API_KEY and CHAT_MODEL (default qwen2.5:7b).
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { APIError, Client } from "@credohq/credo";

/** One answer of an OpenAI-compatible chat server. */
async function chat(messages) {
  const base = (process.env.OPENAI_BASE_URL ?? "http://127.0.0.1:11434/v1").replace(/\/+$/, "");
  const headers = { "Content-Type": "application/json" };
  if (process.env.OPENAI_API_KEY) headers.Authorization = `Bearer ${process.env.OPENAI_API_KEY}`;
  const res = await fetch(`${base}/chat/completions`, {
    method: "POST",
    headers,
    body: JSON.stringify({ model: process.env.CHAT_MODEL ?? "qwen2.5:7b", messages }),
    signal: AbortSignal.timeout(300_000),
  });
  if (!res.ok) throw new Error(`chat model: HTTP ${res.status}: ${await res.text()}`);
  return (await res.json()).choices[0].message.content;
}

async function run(memory, scope, said) {
  const conversation = [];
  for await (const line of said) {
    const user = line.trim();
    if (!user) continue;
    // 1. Before answering: what memory holds for what the user just said.
    const known = await memory.context(scope, user);
    const system = `You are a helpful assistant. What you know about the user:\n${known.context}`;
    // 2. The model answers with it.
    const reply = await chat([{ role: "system", content: system }, ...conversation, { role: "user", content: user }]);
    console.log(`user: ${user}\nassistant: ${reply}`);
    conversation.push({ role: "user", content: user }, { role: "assistant", content: reply });
    // 3. After the turn: remember it. Extraction runs in the background; waiting here
    // only makes the next turn of this demo see it (a real agent moves on).
    const turn = await memory.addTranscript(scope, conversation.slice(-2));
    const [episode] = await memory.wait(turn, { timeout: 300_000 });
    if (episode.state !== "applied") throw new Error(`episode ${episode.id} failed: ${episode.last_error}`);
  }
}

const { values, positionals } = parseArgs({ options: { scope: { type: "string", default: "user:ana" } }, allowPositionals: true });
try {
  await run(new Client(), values.scope, positionals.length > 0 ? positionals : createInterface({ input: process.stdin }));
} catch (e) {
  console.error(`agent: ${e instanceof APIError ? `${e.code}: ${e.message}` : e.message}`);
  process.exit(1);
}
