"""A home-made embedding server, written as LitServe's documentation shows: a LitAPI that
loads the model with sentence-transformers, behind LitServe's OpenAIEmbeddingSpec
(POST /v1/embeddings). lab/start.sh runs it; it binds 127.0.0.1 only.
Usage: python litserve_server.py MODEL_DIR PORT [--speech WHISPER_DIR NAME] [--rerank DIR NAME]

With --speech the same server also answers POST /v1/audio/transcriptions with that Whisper
(litserve_speech.py's LitAPI), with --rerank POST /v1/rerank and /rerank with that
cross-encoder (litserve_rerank.py's), one LitServer for all: the migration study's home-made
server answered embeddings, rerank and speech at one address (LITSERVE_SPEECH=1
LITSERVE_RERANK=1 lab/start.sh litserve).

What the spec does with a request (litserve 0.2.19, specs/openai_embedding.py): predict()
gets `input` as sent (a string or a list); `dimensions` is parsed and not passed on;
`encoding_format` "base64" packs the floats as little-endian float32; `model` in the
answer is the request's `model`, whatever it is; usage is what encode_response returns
(0 if it returns none), here the model's tokenizer count with special tokens.

For a model with a sentence-transformers "query" prompt (an instruction-aware model such as
Qwen3-Embedding), the server does what the migration study's home-made server did: a request
with `input_type: "query"` is embedded with the model's query prompt in front of each text;
one with `instruction` (a string) with that instruction in the query prompt's format
(Qwen3-Embedding: "Instruct: {instruction}\\nQuery:{text}"); `input_type` "document" or
"passage", or none, embeds the bare text; any other `input_type` is answered 400. The spec's
request model would drop both fields (pydantic ignores unknown fields), so this server
declares them on a request model of its own. For a model without prompts (all-MiniLM-L6-v2)
the stock spec is used and nothing changes.
"""

import json
import os
import sys
from typing import Optional

import litserve as ls
from fastapi import HTTPException
from litserve.specs.openai_embedding import EmbeddingRequest, EmbeddingResponse
from sentence_transformers import SentenceTransformer


def query_prompt_of(model_dir):
    """The model's sentence-transformers "query" prompt, or None."""
    path = os.path.join(model_dir, "config_sentence_transformers.json")
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        return (json.load(f).get("prompts") or {}).get("query") or None


def instruction_prompt(query_prompt, instruction):
    """The query prompt with its instruction replaced: Qwen3-Embedding's prompt is
    "Instruct: {task}\\nQuery:"; any other prompt is replaced by the instruction itself."""
    head, sep, tail = query_prompt.partition("\n")
    if head.startswith("Instruct: ") and sep:
        return f"Instruct: {instruction}\n{tail}"
    return instruction


class QueryAwareRequest(EmbeddingRequest):
    input_type: Optional[str] = None
    instruction: Optional[str] = None


class QueryAwareSpec(ls.OpenAIEmbeddingSpec):
    async def embeddings_endpoint(self, request: QueryAwareRequest) -> EmbeddingResponse:
        return await super().embeddings_endpoint(request)

    def decode_request(self, request, context_kwargs=None):
        return request


class EmbeddingAPI(ls.LitAPI):
    def setup(self, device):
        self.model = SentenceTransformer(self.model_dir, device=device)

    def decode_request(self, request, **kwargs):
        if self.query_prompt is None:
            return super().decode_request(request, **kwargs)
        texts = request.input
        if request.instruction is not None:
            return texts, instruction_prompt(self.query_prompt, request.instruction)
        if request.input_type in (None, "document", "passage"):
            return texts, None
        if request.input_type == "query":
            return texts, self.query_prompt
        raise HTTPException(status_code=400, detail=f"input_type must be query, document or passage, "
                                                    f"not {request.input_type!r}")

    def predict(self, inputs):
        prompt = None
        if self.query_prompt is not None:
            inputs, prompt = inputs
        texts = inputs if isinstance(inputs, list) else [inputs]
        prompted = [prompt + t for t in texts] if prompt else texts
        # Tokens the model embeds: its own tokenizer, cut at its max_seq_length.
        ids = self.model.tokenizer(prompted, truncation=True, max_length=self.model.max_seq_length)["input_ids"]
        vectors = self.model.encode(texts, prompt=prompt, normalize_embeddings=True)
        return vectors, sum(len(x) for x in ids)

    def encode_response(self, output):
        vectors, tokens = output
        return {"embeddings": vectors, "prompt_tokens": tokens, "total_tokens": tokens}


if __name__ == "__main__":
    model_dir = sys.argv[1]
    apis = []
    if "--speech" in sys.argv:
        from litserve_speech import TranscriptionAPI

        at = sys.argv.index("--speech")
        speech = TranscriptionAPI(api_path="/v1/audio/transcriptions")
        speech.model_dir, speech.served_name = sys.argv[at + 1], sys.argv[at + 2]
        apis.append(speech)
    if "--rerank" in sys.argv:
        from litserve_rerank import RerankAPI

        at = sys.argv.index("--rerank")
        for path in ("/v1/rerank", "/rerank"):
            rerank = RerankAPI(api_path=path)
            rerank.model_dir, rerank.served_name = sys.argv[at + 1], sys.argv[at + 2]
            apis.append(rerank)
    query_prompt = query_prompt_of(model_dir)
    api = EmbeddingAPI(spec=QueryAwareSpec() if query_prompt else ls.OpenAIEmbeddingSpec())
    api.model_dir = model_dir
    api.query_prompt = query_prompt
    server = ls.LitServer([api, *apis], accelerator="cpu")
    server.run(host="127.0.0.1", port=int(sys.argv[2]), generate_client_file=False)
