"""One embeddings call each through the OpenAI Python SDK (its default base64 path) and
LangChain's OpenAIEmbeddings (its default tiktoken token-id path), against BASE_URL.
Each client is reported on its own; the exit status is 1 if any failed."""
import os
import sys

from langchain_openai import OpenAIEmbeddings
from openai import OpenAI

base_url, model = sys.argv[1], sys.argv[2]
key = os.environ.get("OPENAI_API_KEY", "sk-none")
failed = False


def report(name, fn):
    global failed
    try:
        print(f"{name}: {fn()}")
    except Exception as e:  # report the client's own error and go on
        failed = True
        first = str(e).splitlines()[0] if str(e) else ""
        print(f"{name}: FAILED {type(e).__name__}: {first}")


def sdk():
    r = OpenAI(base_url=base_url, api_key=key, max_retries=0).embeddings.create(model=model, input="hello")
    return f"{len(r.data[0].embedding)} dims"


def langchain():
    lc = OpenAIEmbeddings(model=model, base_url=base_url, api_key=key, max_retries=0)
    vecs = lc.embed_documents(["hello", "world"])
    return f"{len(vecs)} vectors of {len(vecs[0])} dims"


report("openai-python", sdk)
report("langchain-openai", langchain)
sys.exit(1 if failed else 0)
