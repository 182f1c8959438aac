// The real OpenAI Node SDK with its default settings against BASE_URL, as embedcheck's
// openai-node client profile models it: what the client experienced.
//
//   node profile_check.mjs BASE_URL MODEL [--json]
//
// `client.embeddings.create({model, input})` with nothing else set (base64 on the wire,
// every item decoded unless it is already an array, two retries), for one sentence and a
// batch of four documents, each compared with the same input asked for with
// `encoding_format: "float"`. Prints: worked or raised (the client's own message), vector
// length, the lowest cosine to the float vectors, and retries seen (requests the SDK's
// `fetch` made beyond the first of each call). Exit status 0 whatever the client
// experienced; 2 for bad arguments.
import OpenAI from "openai";
import { VERSION as version } from "openai/version";

const SENTENCE = "The quick brown fox jumps over the lazy dog.";
const BATCH = [
  "Embeddings map text to vectors.",
  "Retrieval ranks documents by cosine similarity.",
  "서울은 대한민국의 수도입니다.",
  "A migration should not change the answers.",
];
const SAME = 0.999;

const args = process.argv.slice(2).filter((a) => !a.startsWith("--"));
const flags = process.argv.slice(2).filter((a) => a.startsWith("--"));
if (args.length !== 2 || flags.some((f) => f !== "--json")) {
  console.error("usage: node profile_check.mjs BASE_URL MODEL [--json]");
  process.exit(2);
}
const [baseURL, model] = args;
const apiKey = process.env.OPENAI_API_KEY ?? "sk-none";

let attempts = 0;
const counting = (url, init) => {
  attempts += 1;
  return fetch(url, init);
};
const client = new OpenAI({ baseURL, apiKey, fetch: counting }); // every other default
const reference = new OpenAI({ baseURL, apiKey, maxRetries: 0 });

const cosine = (a, b) => {
  if (a.length !== b.length || a.length === 0) return 0;
  let dot = 0, na = 0, nb = 0;
  for (let i = 0; i < a.length; i += 1) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
};

const result = {
  client: "openai-node", version, worked: false, raised: null, dims: null, cosine: null,
  retries: 0, notes: [],
};
const lowest = (c, dims) => {
  result.cosine = result.cosine === null ? c : Math.min(result.cosine, c);
  result.dims = dims;
};
try {
  for (const input of [SENTENCE, BATCH]) {
    const before = attempts;
    let got;
    try {
      got = (await client.embeddings.create({ model, input })).data.map((d) => d.embedding);
    } finally {
      result.retries += attempts - before - 1;
    }
    const want = (await reference.embeddings.create({ model, input, encoding_format: "float" }))
      .data.map((d) => d.embedding);
    if (got.length !== want.length) {
      result.notes.push(`${got.length} vectors for ${want.length} inputs`);
      lowest(0, got.length ? got[0].length : 0);
      continue;
    }
    got.forEach((g, i) => lowest(cosine(g, want[i]), g.length));
  }
} catch (e) {
  result.raised = `${e.constructor.name}: ${String(e.message ?? e).split("\n")[0]}`;
}
result.worked = result.raised === null && result.cosine !== null && result.cosine >= SAME;
if (flags.includes("--json")) {
  console.log(JSON.stringify(result));
} else {
  const how = result.worked ? "worked" : result.raised ? `raised ${result.raised}` : "wrong vectors";
  const low = result.cosine === null ? "-" : result.cosine.toFixed(4);
  console.log(`${result.client} ${version}: ${how}; dims ${result.dims}; lowest cosine ${low}; `
    + `retries ${result.retries}${result.notes.map((n) => `; ${n}`).join("")}`);
}
