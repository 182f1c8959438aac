// The real openai-node audio calls against BASE_URL, as embedcheck's openai-node-audio profile
// models them (the same calls as speech_check.py: transcriptions in each response_format,
// streamed, and translations), with the suite's own clip uploaded as speech.wav.
//   node speech_check.mjs BASE_URL MODEL CLIP.wav [--json]
// Per call: worked or raised, what the caller got, and the retries seen (the SDK's own
// "retrying" debug lines). Exit status 0 whatever the server did; 2 for bad arguments.
import OpenAI, { toFile } from "openai";
import fs from "node:fs";
import { VERSION as version } from "openai/version";

const args = process.argv.slice(2).filter((a) => a !== "--json");
if (args.length !== 3) {
  console.error("usage: node speech_check.mjs BASE_URL MODEL CLIP.wav [--json]");
  process.exit(2);
}
const [baseURL, model, clip] = args;
const audio = fs.readFileSync(clip);
let retries = 0;
const logger = {
  debug: (message) => { if (String(message).toLowerCase().includes("retrying")) retries += 1; },
  info: () => {}, warn: () => {}, error: () => {},
};
const client = new OpenAI({ baseURL, apiKey: process.env.OPENAI_API_KEY ?? "sk-none", logger, logLevel: "debug", timeout: 900_000 });
const upload = () => toFile(audio, "speech.wav", { type: "audio/wav" });

// Whether the caller holds its transcript, and what it holds, in a few words: a text format
// (text, srt, vtt) is typed a string, the others an object with a string text.
function got(answer, wantsString = false) {
  if (typeof answer === "string" && !wantsString) {
    return [false, `a string of ${answer.length} chars where an object is typed, so .text is undefined`];
  }
  if (typeof answer === "string") {
    try {
      const parsed = JSON.parse(answer);
      if (parsed && typeof parsed === "object" && "text" in parsed) {
        return [false, `a string that is the JSON envelope (${answer.length} chars)`];
      }
    } catch {}
    return [true, `a string of ${answer.length} chars`];
  }
  if (answer && typeof answer.text === "string") {
    return [!wantsString, `an object whose text has ${answer.text.length} chars${wantsString ? ", where a string is typed" : ""}`];
  }
  return [false, `${typeof answer} without a string text`];
}

async function streamed(stream) {
  const types = [];
  let text = null;
  let deltas = "";
  for await (const event of stream) {
    types.push(String(event.type));
    if (event.type === "transcript.text.delta") deltas += event.delta;
    if (event.type === "transcript.text.done") text = event.text;
  }
  const shown = [...new Set(types)].sort();
  if (text === null && deltas === "") return [false, `${types.length} events of types [${shown}]: no transcript.text events, no text`];
  return [true, `${types.length} events of types [${shown}]: text of ${(text ?? deltas).length} chars`];
}

const calls = [["transcriptions.create()", async () => got(await client.audio.transcriptions.create({ model, file: await upload() }))]];
for (const format of ["text", "srt", "vtt", "verbose_json"]) {
  calls.push([`transcriptions.create(response_format='${format}')`,
    async () => got(await client.audio.transcriptions.create({ model, file: await upload(), response_format: format }), format !== "verbose_json")]);
}
calls.push(["transcriptions.create(stream=true)", async () => streamed(await client.audio.transcriptions.create({ model, file: await upload(), stream: true }))]);
calls.push(["translations.create()", async () => got(await client.audio.translations.create({ model, file: await upload() }))]);
calls.push(["translations.create(response_format='text')",
  async () => got(await client.audio.translations.create({ model, file: await upload(), response_format: "text" }), true)]);

for (const [name, run] of calls) {
  retries = 0;
  let worked, what;
  try {
    [worked, what] = await run();
  } catch (e) {
    worked = false;
    what = `${e.constructor.name}${e.status ? ` ${e.status}` : ""}: ${String(e.message).slice(0, 160)}`;
  }
  const r = { client: "openai-node-audio", version, call: name, worked, got: what, retries };
  if (process.argv.includes("--json")) console.log(JSON.stringify(r));
  else console.log(`${r.client} ${worked ? "works " : "BREAKS"} ${name.padEnd(48)} ${what} (retries: ${retries})`);
}
