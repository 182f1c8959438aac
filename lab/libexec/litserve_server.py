"""A home-made embedding server, written as LitServe's documentation shows: a LitAPI that
loads the model with sentence-transformers, behind LitServe's OpenAIEmbeddingSpec
(POST /v1/embeddings). lab/start.sh runs it; it binds 127.0.0.1 only.
Usage: python litserve_server.py MODEL_DIR PORT

What the spec does with a request (litserve 0.2.19, specs/openai_embedding.py): predict()
gets `input` as sent (a string or a list); `dimensions` is parsed and not passed on;
`encoding_format` "base64" packs the floats as little-endian float32; `model` in the
answer is the request's `model`, whatever it is; usage is what encode_response returns
(0 if it returns none), here the model's tokenizer count with special tokens.
"""

import sys

import litserve as ls
from sentence_transformers import SentenceTransformer


class EmbeddingAPI(ls.LitAPI):
    def setup(self, device):
        self.model = SentenceTransformer(self.model_dir, device=device)

    def predict(self, inputs):
        texts = inputs if isinstance(inputs, list) else [inputs]
        # Tokens the model embeds: its own tokenizer, cut at its max_seq_length.
        ids = self.model.tokenizer(texts, truncation=True, max_length=self.model.max_seq_length)["input_ids"]
        return self.model.encode(texts, normalize_embeddings=True), sum(len(x) for x in ids)

    def encode_response(self, output):
        vectors, tokens = output
        return {"embeddings": vectors, "prompt_tokens": tokens, "total_tokens": tokens}


if __name__ == "__main__":
    api = EmbeddingAPI(spec=ls.OpenAIEmbeddingSpec())
    api.model_dir = sys.argv[1]
    server = ls.LitServer(api, accelerator="cpu")
    server.run(host="127.0.0.1", port=int(sys.argv[2]), generate_client_file=False)
