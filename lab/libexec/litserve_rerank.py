"""A home-made rerank server, written as LitServe's documentation shows: a LitAPI that loads a
cross-encoder with sentence-transformers' CrossEncoder and answers the Cohere/Jina shape
(POST /v1/rerank and POST /rerank, one LitAPI each). It binds 127.0.0.1 only.
Usage: python litserve_rerank.py MODEL_DIR PORT [SERVED_NAME]

Request: {"model"?, "query", "documents": [strings], "top_n"?, "return_documents"?} (pydantic;
LitServe answers a body that does not validate with FastAPI's 422 {"detail": [...]}).
Response: {"id", "model", "results": [{"index", "relevance_score", "document"?: {"text"}}],
"usage": {"prompt_tokens", "total_tokens"}}, sorted by score (Python's stable sort: ties
keep input order), cut to top_n when top_n is given and positive, scores as the library gives
them (CrossEncoder.predict: sigmoid for one label), `model` the served name. Written the way
a first version is written: no limit on the number of documents, no check for an empty list,
the library's own truncation (longest_first at the tokenizer's max length).
"""

import sys
import uuid
from typing import List, Optional

import litserve as ls
from pydantic import BaseModel
from sentence_transformers import CrossEncoder


class RerankRequest(BaseModel):
    model: Optional[str] = None
    query: str
    documents: List[str]
    top_n: Optional[int] = None
    return_documents: bool = False


class RerankAPI(ls.LitAPI):
    def setup(self, device):
        self.model = CrossEncoder(self.model_dir, device=device)

    def decode_request(self, request: RerankRequest):
        return request

    def predict(self, request):
        pairs = [(request.query, d) for d in request.documents]
        scores = self.model.predict(pairs, convert_to_numpy=True, show_progress_bar=False)
        ids = self.model.tokenizer([p[0] for p in pairs], [p[1] for p in pairs], truncation="longest_first",
                                   max_length=self.model.tokenizer.model_max_length)["input_ids"]
        order = sorted(range(len(pairs)), key=lambda i: -float(scores[i]))
        if request.top_n:
            order = order[: request.top_n]
        results = []
        for i in order:
            item = {"index": i, "relevance_score": float(scores[i])}
            if request.return_documents:
                item["document"] = {"text": request.documents[i]}
            results.append(item)
        tokens = sum(len(x) for x in ids)
        return {"results": results, "tokens": tokens}

    def encode_response(self, output):
        return {
            "id": str(uuid.uuid4()),
            "model": self.served_name,
            "results": output["results"],
            "usage": {"prompt_tokens": output["tokens"], "total_tokens": output["tokens"]},
        }


if __name__ == "__main__":
    apis = []
    for path in ("/v1/rerank", "/rerank"):
        api = RerankAPI(api_path=path)
        api.model_dir = sys.argv[1]
        api.served_name = sys.argv[3] if len(sys.argv) > 3 else sys.argv[1]
        apis.append(api)
    server = ls.LitServer(apis, accelerator="cpu")
    server.run(host="127.0.0.1", port=int(sys.argv[2]), generate_client_file=False)
