"""What the rerank clients of TEI's and NIM's dialects do against a server, with their
documented configuration and defaults: LlamaIndex's TEI reranker
(llama-index-postprocessor-tei-rerank), NVIDIA's NVIDIARerank
(langchain-nvidia-ai-endpoints) and Voyage's own client (voyageai). Prints one JSON object per client:
{"client": NAME, "works": bool, "ranking": [document index, ...] or null, "error": str or null}.

  python lab/clients/dialect_check.py ROOT MODEL
  (ROOT is the server's root, http://127.0.0.1:PORT, no /v1; run with the lab's
  rerank-dialect-clients venv)

A client works when it returns a ranking without raising; the ranking is the documents'
indices in the order the client returns them.
"""

import json
import sys

QUERY = "What is the capital of France?"
DOCUMENTS = [
    "Berlin is the largest city in Germany.",
    "The capital of France is Paris.",
    "Bananas are rich in potassium.",
    "The Eiffel Tower was completed in 1889.",
    "Cats sleep for most of the day.",
]


def outcome(client, run):
    try:
        ranking = run()
        return {"client": client, "works": True, "ranking": ranking, "error": None}
    except Exception as error:  # the client's own exception, whatever its type
        return {"client": client, "works": False, "ranking": None, "error": f"{type(error).__name__}: {error}"[:300]}


def llama_index_tei(root, model):
    from llama_index.core.schema import NodeWithScore, TextNode
    from llama_index.postprocessor.tei_rerank import TextEmbeddingInference

    nodes = [NodeWithScore(node=TextNode(text=d, id_=str(i))) for i, d in enumerate(DOCUMENTS)]
    reranker = TextEmbeddingInference(base_url=root, top_n=5, model_name=model)
    ranked = reranker.postprocess_nodes(nodes, query_str=QUERY)
    return [int(n.node.id_) for n in ranked]


def nvidia(root, model):
    from langchain_core.documents import Document
    from langchain_nvidia_ai_endpoints import NVIDIARerank

    docs = [Document(page_content=d, metadata={"i": i}) for i, d in enumerate(DOCUMENTS)]
    reranker = NVIDIARerank(base_url=f"{root}/v1", model=model, top_n=5)
    ranked = reranker.compress_documents(docs, QUERY)
    return [d.metadata["i"] for d in ranked]


def voyage(root, model):
    import voyageai

    client = voyageai.Client(api_key="lab-key", base_url=f"{root}/v1")
    ranked = client.rerank(QUERY, DOCUMENTS, model=model)
    return [r.index for r in ranked.results]


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    root, model = sys.argv[1].rstrip("/"), sys.argv[2]
    for client, run in [
        ("llama-index-tei-rerank", lambda: llama_index_tei(root, model)),
        ("langchain-nvidia-rerank", lambda: nvidia(root, model)),
        ("voyageai-python", lambda: voyage(root, model)),
    ]:
        print(json.dumps(outcome(client, run)))


if __name__ == "__main__":
    main()
