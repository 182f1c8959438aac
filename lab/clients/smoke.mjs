// One embeddings call through the OpenAI Node SDK (its default base64 path), against BASE_URL.
import OpenAI from "openai";

const [baseURL, model] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey: process.env.OPENAI_API_KEY ?? "sk-none", maxRetries: 0 });
const r = await client.embeddings.create({ model, input: "hello" });
console.log(`openai-node: ${r.data[0].embedding.length} dims`);
