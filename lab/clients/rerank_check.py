"""What real rerank clients send, expect and do: the Cohere Python SDK (v1 `Client` and
`ClientV2`, two versions), LangChain's `CohereRerank`, LlamaIndex's `CohereRerank`, and exact
standard-library replicas of Dify's OpenAI-API-compatible rerank plugin and Open WebUI's
`ExternalReranker`, against a local echo server with canned answers or against running rerank
servers (through a recording proxy).

  python3 lab/clients/rerank_check.py echo [--json OUT] [--markdown]
  python3 lab/clients/rerank_check.py servers LABEL=URL[,key-env=VAR][,model=NAME][,reference=FILE] ...
          [--reference FILE] [--cases ID,ID] [--json OUT] [--markdown]
  python3 lab/clients/rerank_check.py render OUT.json [--markdown]
  (lab/clients/rerank-check.sh runs it with the lab's offline environment)

URL is a server's root (http://127.0.0.1:PORT, no /v1). The orchestrator (this file, standard
library only, any python3) starts a recording HTTP server on 127.0.0.1 and runs the clients in
worker processes of the venvs STATE/venvs/rerank-clients (cohere 5.21.1, langchain-cohere,
llama-index-postprocessor-cohere-rerank) and STATE/venvs/rerank-clients-cohere7 (cohere 7.3.1
alone: langchain-cohere and LlamaIndex's package cap cohere below 6 and 7). Each client is
configured the way its documentation tells a user to point it at a self-hosted server:

  cohere-v1           cohere.Client(api_key=K, base_url=ROOT).rerank(model=M, query=Q, documents=D)
  cohere-v2           cohere.ClientV2(api_key=K, base_url=ROOT).rerank(model=M, query=Q, documents=D)
  langchain-cohere    CohereRerank(model=M, base_url=ROOT, cohere_api_key=K).compress_documents(docs, Q)
  llamaindex-cohere   CohereRerank(model=M, api_key=K, base_url=ROOT).postprocess_nodes(nodes, query_str=Q)
  dify-oai-compat     endpoint_url = ROOT/v1; POST {endpoint_url}/rerank (replica, below)
  openwebui-external  url = ROOT/v1/rerank; ExternalReranker.predict + RerankCompressor (replica)

In the workers `time.sleep` is replaced by a recorder, so the clients' retry back-off is
recorded (seconds asked for) instead of waited. Echo mode: every client against each canned
answer (URL joining, request bodies and headers, response variants, errors and retries).
Servers mode: every client against each server for cases of the reference file, with the
client's own defaults, with top_n = N and with top_n = None (null on the wire); each outcome
is held against the answer the server gave to that very request (recorded by the proxy) and
against the reference scores (fixtures/reference/tiny-rerank-bert.jsonl unless given).
The exit status is 0 whatever the clients did; 2 for bad arguments or a worker that failed.
"""

import argparse
import http.server
import json
import math
import os
import socketserver
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))


def fail(msg):
    print(msg, file=sys.stderr)
    sys.exit(2)


LAB = os.path.dirname(HERE)
REPO = os.path.dirname(LAB)
STATE = os.environ.get("EMBEDCHECK_LAB_DIR") or os.path.join(LAB, ".state")

# ---------------------------------------------------------------- replicas (standard library)
#
# Dify: langgenius/dify-official-plugins@7af22831a58ded846388b8de0c232b2b377a1055
#   models/openai_api_compatible/models/rerank/rerank.py, OpenAIRerankModel._invoke (text mode;
#   plugin version 0.0.63, dify_plugin>=0.9.0). RerankDocument is a pydantic model
#   (langgenius/dify-plugin-sdks@28d1d223:src/dify_plugin/entities/model/rerank.py: index: int,
#   text: str, score: float, lax mode); the error classes are dify_plugin/errors/model.py's.
# Open WebUI: open-webui/open-webui@ab233f82c11b0ba0027a298ecbab8a028ef951e3
#   backend/open_webui/retrieval/models/external.py (ExternalReranker.predict) and
#   @60b8cfb9fa2228eac878c3c52eccdff7abc4d384 backend/open_webui/retrieval/utils.py
#   (RerankCompressor.compress_documents); defaults RAG_TOP_K_RERANKER 3,
#   RAG_RELEVANCE_THRESHOLD 0.0 (@2586f1f39273cacddb86fb6d793141d663b79803 config.py).
# Both use `requests.post(url, headers=..., json=...)`; here urllib sends the same method, URL,
# the same two application headers and the same JSON (requests' json= is
# json.dumps(payload, allow_nan=False) as UTF-8; only the transport headers differ: requests
# adds User-Agent python-requests/X, Accept-Encoding, Accept */*, Connection keep-alive).


class DifyInvokeError(Exception):
    """dify_plugin.errors.model.InvokeError"""


class DifyInvokeServerUnavailableError(DifyInvokeError):
    """dify_plugin.errors.model.InvokeServerUnavailableError (a subclass of InvokeError)"""


class _HTTPStatusError(Exception):
    """requests.exceptions.HTTPError from raise_for_status (a RequestException)."""


class _BadJSON(Exception):
    """requests.exceptions.JSONDecodeError from response.json() (a RequestException)."""


class _ConnectionFailed(Exception):
    """requests.exceptions.ConnectionError / Timeout (RequestExceptions)."""


def _requests_like_post(url, headers, payload, timeout):
    """requests.post(url, headers=headers, json=payload, timeout=timeout), raise_for_status()
    and .json(): returns (status, parsed JSON) or raises the exceptions above."""
    data = json.dumps(payload, allow_nan=False).encode("utf-8")
    req = urllib.request.Request(url, data=data, method="POST")
    for k, v in headers.items():
        req.add_header(k, v)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            status, reason, body = r.status, r.reason, r.read()
    except urllib.error.HTTPError as e:
        status, reason, body = e.code, e.reason, e.read()
    except (urllib.error.URLError, OSError) as e:
        raise _ConnectionFailed(str(e)) from e
    if 400 <= status < 600:  # requests.Response.raise_for_status
        kind = "Client" if status < 500 else "Server"
        raise _HTTPStatusError(f"{status} {kind} Error: {reason} for url: {url}")
    try:
        return status, json.loads(body.decode("utf-8"))
    except ValueError as e:
        raise _BadJSON(str(e)) from e


def _pydantic_lax_float(v):
    """What pydantic 2 (lax) accepts for `score: float` (checked against pydantic 2.14.4)."""
    if isinstance(v, bool) or isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v.strip())
        except ValueError:
            pass
    raise ValueError(f"1 validation error for RerankDocument\nscore\n  Input should be a valid number "
                     f"[input_value={v!r}, input_type={type(v).__name__}]")


def _pydantic_lax_int(v):
    if isinstance(v, bool) or isinstance(v, int):
        return int(v)
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, str):
        try:
            return int(v.strip())
        except ValueError:
            pass
    raise ValueError(f"1 validation error for RerankDocument\nindex\n  Input should be a valid integer "
                     f"[input_value={v!r}, input_type={type(v).__name__}]")


def dify_rerank(endpoint_url, api_key, model, query, docs, score_threshold=None, top_n=None,
                endpoint_model_name=""):
    """OpenAIRerankModel._invoke (text mode). Returns the RerankResult's docs as
    [{"index", "score", "text"}], or raises DifyInvokeError / DifyInvokeServerUnavailableError."""
    if not docs:
        return []
    endpoint_url = (endpoint_url or "").rstrip("/")
    endpoint_model_name = endpoint_model_name or model
    headers = {"Content-Type": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    payload = {
        "model": endpoint_model_name,
        "query": query,
        "documents": docs,
        "top_n": top_n if top_n is not None else len(docs),
    }
    try:
        _, result = _requests_like_post(f"{endpoint_url}/rerank", headers, payload, timeout=60)
        rerank_docs = []
        for item in result.get("results", []):
            index = item.get("index", 0)
            score = item.get("relevance_score", 0.0)
            if index < len(docs):
                rerank_docs.append({"index": _pydantic_lax_int(index), "score": _pydantic_lax_float(score),
                                    "text": docs[index]})
        rerank_docs.sort(key=lambda x: x["score"], reverse=True)
        if top_n:
            rerank_docs = rerank_docs[:top_n]
        if score_threshold is not None:
            rerank_docs = [d for d in rerank_docs if d["score"] >= score_threshold]
        return rerank_docs
    except (_HTTPStatusError, _BadJSON, _ConnectionFailed) as ex:
        raise DifyInvokeServerUnavailableError(str(ex))
    except Exception as ex:
        raise DifyInvokeError(str(ex))


def openwebui_predict(url, api_key, model, query, docs, timeout=None):
    """ExternalReranker.predict: the scores as a list (positional: sorted by the answer's
    `index`, one per result), or None on any error or without `results`."""
    payload = {"model": model, "query": query, "documents": docs, "top_n": len(docs)}
    try:
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {api_key}"}
        _, data = _requests_like_post(f"{url}", headers, payload, timeout=timeout)
        if "results" in data:
            sorted_results = sorted(data["results"], key=lambda x: x["index"])
            return [result["relevance_score"] for result in sorted_results]
        return None
    except Exception:
        return None


def openwebui_compress(docs, scores, top_n=3, r_score=0.0):
    """RerankCompressor.compress_documents after the reranking function: the documents zipped
    positionally with the scores, filtered by r_score when it is truthy, sorted by score,
    top_n kept; without scores the original documents come back. Returns [(index, score)]."""
    if scores:
        docs_with_scores = list(zip(range(len(docs)), scores))
        if r_score:
            docs_with_scores = [(d, s) for d, s in docs_with_scores if s >= r_score]
        result = sorted(docs_with_scores, key=lambda t: t[1], reverse=True)
        return [(d, s) for d, s in result[:top_n]]
    return None


# ---------------------------------------------------------------- worker (runs in a venv)

def _worker():
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # anything a library prints goes to stderr, not into the protocol
    sleeps = []
    time.sleep = lambda s: sleeps.append(round(float(s), 3))
    versions = {}
    from importlib.metadata import version, PackageNotFoundError
    for p in ("cohere", "langchain-cohere", "langchain-core", "llama-index-postprocessor-cohere-rerank",
              "llama-index-core", "httpx", "pydantic", "requests"):
        try:
            versions[p] = version(p)
        except PackageNotFoundError:
            pass
    proto.write(json.dumps({"ready": True, "versions": versions}) + "\n")
    for line in sys.stdin:
        job = json.loads(line)
        del sleeps[:]
        try:
            res = _run_job(job)
        except Exception as e:  # noqa: BLE001 (what the client raised is the result)
            res = {"ok": False, "exc": f"{type(e).__module__}.{type(e).__name__}", "msg": str(e)[:400]}
            for attr in ("status_code",):
                if hasattr(e, attr):
                    res[attr] = getattr(e, attr)
            if hasattr(e, "body"):
                try:
                    res["body"] = json.loads(json.dumps(e.body, default=repr))
                except Exception:  # noqa: BLE001
                    res["body"] = repr(e.body)[:300]
        res["sleeps"] = list(sleeps)
        proto.write(json.dumps(res, default=repr) + "\n")


def _describe(v):
    return {"value": v if isinstance(v, (int, float, str, type(None), bool)) else repr(v),
            "type": type(v).__name__}


def _run_job(job):
    kind = job["client"]
    base, key, model, query, docs = job["base"], job["key"], job["model"], job["query"], job["documents"]
    top_n = job.get("top_n")  # None: the client's default (the argument is not passed)
    kw = {} if top_n is None else {"top_n": top_n}
    if job.get("top_n_null"):
        kw = {"top_n": None}
    if kind == "base-url":  # which base URL each client object ends up with (no request)
        return _base_urls(job)
    if kind == "requests-headers":  # the transport headers real requests adds (Dify, Open WebUI)
        import requests
        r = requests.post(base, headers={"Content-Type": "application/json", "Authorization": f"Bearer {key}"},
                          json={"probe": True}, timeout=10)
        return {"ok": True, "status": r.status_code}
    if kind in ("cohere-v1", "cohere-v2"):
        import cohere
        cls = cohere.Client if kind == "cohere-v1" else cohere.ClientV2
        ckw = {} if job.get("no_base_url") else {"base_url": base}
        c = cls(api_key=key, **ckw) if key is not None else cls(**ckw)
        resp = c.rerank(model=model, query=query, documents=docs, **kw)
        if resp.results is None:  # the SDK does not validate: an answer without `results`
            return {"ok": True, "out": None, "note": "response.results is None", "response_type": type(resp).__name__}
        out = []
        for r in resp.results:
            d = getattr(r, "document", None)
            out.append({"index": _describe(r.index), "score": _describe(r.relevance_score),
                        "document": repr(d)[:80] if d is not None else None,
                        "extra": sorted((getattr(r, "model_extra", None) or {}).keys())})
        return {"ok": True, "out": out, "response_type": type(resp).__name__,
                "response_extra": sorted((getattr(resp, "model_extra", None) or {}).keys())}
    if kind == "langchain-cohere":
        from langchain_cohere import CohereRerank
        from langchain_core.documents import Document
        ckw = {"model": model, "base_url": base}
        if key is not None:
            ckw["cohere_api_key"] = key
        rr = CohereRerank(**ckw, **kw)
        got = rr.compress_documents([Document(page_content=d, metadata={"i": i}) for i, d in enumerate(docs)], query)
        return {"ok": True, "out": [{"index": _describe(g.metadata["i"]), "score": _describe(g.metadata["relevance_score"])}
                                    for g in got]}
    if kind == "llamaindex-cohere":
        from llama_index.postprocessor.cohere_rerank import CohereRerank
        from llama_index.core.schema import NodeWithScore, TextNode
        ckw = {"model": model, "base_url": base}
        if key is not None:
            ckw["api_key"] = key
        rr = CohereRerank(**ckw, **kw)
        nodes = [NodeWithScore(node=TextNode(text=d, id_=f"doc-{i}")) for i, d in enumerate(docs)]
        got = rr.postprocess_nodes(nodes, query_str=query)
        return {"ok": True, "out": [{"index": _describe(int(g.node.id_.split("-")[1])), "score": _describe(g.score)}
                                    for g in got]}
    if kind == "dify-oai-compat":
        got = dify_rerank(base, key, model, query, docs, score_threshold=job.get("score_threshold"), top_n=top_n)
        res = {"ok": True, "out": [{"index": _describe(g["index"]), "score": _describe(g["score"])} for g in got]}
        res["pydantic_check"] = _dify_pydantic_check(job.get("canned_body"), docs)
        return res
    if kind == "openwebui-external":
        scores = openwebui_predict(base, key, model, query, docs)
        final = openwebui_compress(docs, scores, top_n=3 if top_n is None else top_n)
        res = {"ok": True, "predict": scores}
        if final is None:
            res["unreranked"] = True
            res["out"] = [{"index": _describe(i), "score": _describe(None)} for i in range(len(docs))]
        else:
            res["out"] = [{"index": _describe(i), "score": _describe(s)} for i, s in final]
        return res
    raise ValueError(f"unknown client {kind}")


def _dify_pydantic_check(body, docs):
    """Where pydantic is installed: does the replica's coercion give what RerankDocument would?"""
    if body is None:
        return None
    try:
        from pydantic import BaseModel
    except ImportError:
        return None

    class RerankDocument(BaseModel):
        index: int
        text: str
        score: float
    items = body.get("results", []) if isinstance(body, dict) else None
    if not isinstance(items, list):
        return "n/a"
    for item in items:
        if not isinstance(item, dict):
            return "n/a"
        index, score = item.get("index", 0), item.get("relevance_score", 0.0)
        try:
            ok_index = index < len(docs)
        except TypeError:
            return "n/a"
        if not ok_index:
            continue
        try:
            text = docs[index]
        except TypeError:
            return "n/a"
        try:
            pyd = RerankDocument(index=index, text=text, score=score).score
        except Exception:  # noqa: BLE001
            pyd = "error"
        try:
            mine = _pydantic_lax_float(score)
            _pydantic_lax_int(index)
        except ValueError:
            mine = "error"
        if not (pyd == mine or (isinstance(pyd, float) and isinstance(mine, float) and math.isnan(pyd) and math.isnan(mine))):
            return f"MISMATCH pydantic {pyd!r} replica {mine!r}"
    return "same"


def _base_urls(job):
    """Base URL held by each client object for a base_url argument (or none, CO_API_URL set)."""
    import cohere
    from langchain_cohere import CohereRerank as LC
    from llama_index.postprocessor.cohere_rerank import CohereRerank as LI
    out = {}
    b = job.get("base_url_arg")
    kw = {} if b is None else {"base_url": b}
    out["cohere-v1"] = cohere.Client(api_key="k", **kw)._client_wrapper.get_base_url()
    out["cohere-v2"] = cohere.ClientV2(api_key="k", **kw)._client_wrapper.get_base_url()
    out["langchain-cohere"] = LC(model="m", cohere_api_key="k", **kw).client._client_wrapper.get_base_url()
    out["llamaindex-cohere"] = LI(model="m", api_key="k", **kw)._client._client_wrapper.get_base_url()
    return {"ok": True, "base_urls": out}


# ---------------------------------------------------------------- recording server / proxy

class Recorder:
    def __init__(self):
        self.log = []
        self.canned = [(200, {"Content-Type": "application/json"}, b"{}")]
        self.upstream = None  # a root URL: forward every request there (servers mode)
        self.lock = threading.Lock()

    def set_canned(self, responses):
        with self.lock:
            self.canned = list(responses)
            self.log = []

    def next_canned(self):
        with self.lock:
            return self.canned.pop(0) if len(self.canned) > 1 else self.canned[0]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _handle(self):
        rec = self.server.recorder
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        entry = {"method": self.command, "path": self.path, "headers": list(self.headers.items()),
                 "body": body.decode("utf-8", "replace")}
        if rec.upstream:
            status, headers, out = self._forward(rec.upstream, body)
        else:
            status, headers, out = rec.next_canned()
        entry["status"] = status
        entry["response"] = out.decode("utf-8", "replace")[:200000]
        with rec.lock:
            rec.log.append(entry)
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def _forward(self, upstream, body):
        req = urllib.request.Request(upstream + self.path, data=body if self.command != "GET" else None,
                                     method=self.command)
        for k, v in self.headers.items():
            if k.lower() not in ("host", "content-length", "connection", "accept-encoding", "keep-alive"):
                req.add_header(k, v)
        try:
            with urllib.request.urlopen(req, timeout=900) as r:
                status, hdrs, out = r.status, r.headers, r.read()
        except urllib.error.HTTPError as e:
            status, hdrs, out = e.code, e.headers, e.read()
        except Exception as e:  # noqa: BLE001
            return 502, {"Content-Type": "text/plain"}, f"proxy: {type(e).__name__}: {e}".encode()
        keep = {}
        for k in ("Content-Type", "Retry-After"):
            if hdrs.get(k):
                keep[k] = hdrs.get(k)
        return status, keep, out

    do_POST = do_GET = do_PUT = _handle


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def start_recorder():
    rec = Recorder()
    srv = Server(("127.0.0.1", 0), Handler)
    srv.recorder = rec
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, rec, f"http://127.0.0.1:{srv.server_address[1]}"


# ---------------------------------------------------------------- orchestrator

CLIENTS = [  # (name, worker, client kind)
    ("cohere5-v1", "main", "cohere-v1"),
    ("cohere5-v2", "main", "cohere-v2"),
    ("cohere7-v1", "c7", "cohere-v1"),
    ("cohere7-v2", "c7", "cohere-v2"),
    ("langchain-cohere", "main", "langchain-cohere"),
    ("llamaindex-cohere", "main", "llamaindex-cohere"),
    ("dify-oai-compat", "main", "dify-oai-compat"),
    ("openwebui-external", "main", "openwebui-external"),
]
VENVS = {"main": "rerank-clients", "c7": "rerank-clients-cohere7"}


class Worker:
    def __init__(self, venv, extra_env=None, tag=""):
        py = os.path.join(STATE, "venvs", venv, "bin", "python")
        if not os.path.exists(py):
            fail(f"no {py}: lab/install.sh rerank-clients")
        logdir = os.path.join(STATE, "logs")
        os.makedirs(logdir, exist_ok=True)
        self.errlog = open(os.path.join(logdir, f"rerank-check-{venv}{tag}.log"), "w")
        env = dict(os.environ)
        env.update(extra_env or {})
        for k in ("CO_API_KEY", "COHERE_API_KEY"):
            if k not in (extra_env or {}):
                env.pop(k, None)
        self.p = subprocess.Popen([py, os.path.abspath(__file__), "--worker"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=self.errlog, text=True, env=env)
        hello = self.p.stdout.readline()
        if not hello:
            fail(f"worker {venv} failed (log: {self.errlog.name})")
        self.versions = json.loads(hello)["versions"]

    def run(self, job):
        self.p.stdin.write(json.dumps(job) + "\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line:
            fail(f"worker died (log: {self.errlog.name})")
        return json.loads(line)

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=60)
        self.errlog.close()


def client_base(client_kind, root):
    """How a user points each client at a server root."""
    if client_kind == "dify-oai-compat":
        return root + "/v1"
    if client_kind == "openwebui-external":
        return root + "/v1/rerank"
    return root


# ------------------------------------------------ echo mode: canned answers

QUERY = "what is the capital of france"
DOCS = ["Paris is the capital and largest city of France.", "Berlin is the capital of Germany.",
        "Cats sleep for most of the day."]
TRUTH = {0: 0.9, 1: 0.5, 2: 0.1}  # the canned scores (sorted order 0, 1, 2)
TRUTH_SHUF = {0: 0.2, 1: 0.9, 2: 0.5}  # for the order variants (sorted order 1, 2, 0)
M = "embedcheck/tiny-rerank-bert"


def _items(order, truth, score_key="relevance_score", doc=None, extra=None):
    out = []
    for i in order:
        it = {"index": i, score_key: truth[i]}
        if doc == "object":
            it["document"] = {"text": DOCS[i]}
        elif doc == "vllm":
            it["document"] = {"text": DOCS[i], "multi_modal": None}
        elif doc == "string":
            it["document"] = DOCS[i]
        elif doc == "null":
            it["document"] = None
        if extra:
            it.update(extra)
        out.append(it)
    return out


def _j(obj, status=200, headers=None):
    h = {"Content-Type": "application/json"}
    h.update(headers or {})
    return (status, h, json.dumps(obj).encode())


def _t(text, status, ctype="text/plain; charset=utf-8", headers=None):
    h = {"Content-Type": ctype}
    h.update(headers or {})
    return (status, h, text.encode())


SORTED = [0, 1, 2]
SHUF_SORTED = [1, 2, 0]


def variants():
    """(name, what it is, [responses], truth {index: score} or None)."""
    v = []
    add = lambda name, what, resp, truth=TRUTH: v.append((name, what, resp if isinstance(resp, list) else [resp], truth))
    add("cohere", "Cohere's shape: id, results[{index, relevance_score, document{text}}], meta",
        _j({"id": "r-1", "results": _items(SORTED, TRUTH, doc="object"),
            "meta": {"api_version": {"version": "2"}, "billed_units": {"search_units": 1}}}))
    add("minimal", "only results[{index, relevance_score}]", _j({"results": _items(SORTED, TRUTH)}))
    add("infinity", "Infinity: object, id, created, model, usage, document null",
        _j({"object": "rerank", "id": "inf-1", "created": 1, "model": M,
            "usage": {"prompt_tokens": 358, "total_tokens": 358}, "results": _items(SORTED, TRUTH, doc="null")}))
    add("document-string", "Infinity with return_documents: document a string",
        _j({"object": "rerank", "results": _items(SORTED, TRUTH, doc="string")}))
    add("vllm", "vLLM: document {text, multi_modal: null}, usage",
        _j({"id": "rerank-1", "model": M, "usage": {"total_tokens": 44}, "results": _items(SORTED, TRUTH, doc="vllm")}))
    add("llamaserver-logits", "llama-server: object list, usage, no document, logits (negative, > 1)",
        _j({"model": M, "object": "list", "usage": {"prompt_tokens": 40, "total_tokens": 40},
            "results": _items(SORTED, {0: 2.9, 1: 1.0, 2: -1.2})}), {0: 2.9, 1: 1.0, 2: -1.2})
    add("extra-item-fields", "each result also has score and meta_info",
        _j({"results": _items(SORTED, TRUTH, extra={"score": 7, "meta_info": {"id": "x"}})}))
    add("input-order", "results in input order, not sorted", _j({"results": _items([0, 1, 2], TRUTH_SHUF)}), TRUTH_SHUF)
    add("ascending", "results sorted ascending", _j({"results": _items([0, 2, 1], TRUTH_SHUF)}), TRUTH_SHUF)
    add("fewer", "2 results of 3 (a server that caps or ignores top_n = N)", _j({"results": _items([1, 2], TRUTH_SHUF)}),
        TRUTH_SHUF)
    add("score-string", "relevance_score \"0.9\" (strings)",
        _j({"results": [{"index": i, "relevance_score": str(TRUTH[i])} for i in SORTED]}))
    add("score-null", "relevance_score null on one result",
        _j({"results": [{"index": 0, "relevance_score": 0.9}, {"index": 1, "relevance_score": 0.5},
                         {"index": 2, "relevance_score": None}]}))
    add("score-missing", "one result without relevance_score",
        _j({"results": [{"index": 0, "relevance_score": 0.9}, {"index": 1, "relevance_score": 0.5}, {"index": 2}]}))
    add("score-key", "results[{index, score}] (score instead of relevance_score)",
        _j({"results": _items(SORTED, TRUTH, score_key="score")}))
    add("index-missing", "one result without index (score 0.4)",
        _j({"results": [{"index": 0, "relevance_score": 0.9}, {"relevance_score": 0.4}, {"index": 2, "relevance_score": 0.1}]}))
    add("index-string", "index \"1\" (strings)",
        _j({"results": [{"index": str(i), "relevance_score": TRUTH[i]} for i in SORTED]}))
    add("index-float", "index 1.0 (floats)",
        _j({"results": [{"index": float(i), "relevance_score": TRUTH[i]} for i in SORTED]}))
    add("index-out-of-range", "index 3 (score 0.4) for 3 documents, no index 1",
        _j({"results": [{"index": 0, "relevance_score": 0.9}, {"index": 3, "relevance_score": 0.4},
                         {"index": 2, "relevance_score": 0.1}]}))
    add("index-negative", "index -1 (score 0.4), no index 2",
        _j({"results": [{"index": 0, "relevance_score": 0.9}, {"index": 1, "relevance_score": 0.5},
                         {"index": -1, "relevance_score": 0.4}]}))
    add("index-duplicate", "index 0 twice (0.9, 0.4), no index 1",
        _j({"results": [{"index": 0, "relevance_score": 0.9}, {"index": 0, "relevance_score": 0.4},
                         {"index": 2, "relevance_score": 0.1}]}))
    add("index-fraction", "index 1.7 (score 0.5)",
        _j({"results": [{"index": 0, "relevance_score": 0.9}, {"index": 1.7, "relevance_score": 0.5},
                         {"index": 2, "relevance_score": 0.1}]}))
    add("results-empty", "results: []", _j({"results": []}))
    add("bare-array", "SGLang/Dynamo: a bare array [{score, index, meta_info}]",
        _j([{"score": TRUTH[i], "index": i, "meta_info": {"id": "s"}} for i in SORTED]))
    add("bare-array-relevance", "a bare array [{index, relevance_score}]", _j(_items(SORTED, TRUTH)))
    add("rankings", "NVIDIA's rankings[{index, logit}]", _j({"rankings": [{"index": i, "logit": TRUTH[i]} for i in SORTED]}))
    add("not-json-200", "200 with a text body", _t("OK", 200))
    add("html-200", "200 text/html (a proxy's page)", _t("<html><body>hi</body></html>", 200, "text/html"))
    add("400-vllm", "400 {error:{message, type, param, code}}",
        _j({"error": {"message": "maximum context length is 512 tokens", "type": "BadRequestError", "param": None,
                      "code": 400}}, 400))
    add("401", "401 {error}", _j({"error": {"message": "Authentication Error", "type": "auth_error", "code": "401"}}, 401))
    add("404-json", "404 {detail: Not Found}", _j({"detail": "Not Found"}, 404))
    add("404-text", "404 text body", _t("File Not Found", 404))
    add("405", "405 {detail}", _j({"detail": "Method Not Allowed"}, 405))
    add("422-infinity", "422 {detail:[...]}",
        _j({"detail": [{"type": "missing", "loc": ["body", "query"], "msg": "Field required", "input": {}}]}, 422))
    add("429", "429 with Retry-After: 2", _j({"error": {"message": "rate limited"}}, 429, {"Retry-After": "2"}))
    add("500-json", "500 {detail}", _j({"detail": "Internal server error"}, 500))
    add("500-text", "500 text body", _t("Internal Server Error", 500))
    add("502-empty", "502, empty body", _t("", 502))
    add("503-json", "503 {error}", _j({"error": {"message": "overloaded"}}, 503))
    add("503-then-200", "503 once, then the minimal answer",
        [_j({"error": {"message": "overloaded"}}, 503), _j({"results": _items(SORTED, TRUTH)})])
    return v


def summarise(res, truth, ndocs=3):
    """A short outcome for a (client, canned answer) cell."""
    if not res.get("ok"):
        exc = res["exc"].split(".")[-1]
        st = res.get("status_code")
        return f"raises {exc}" + (f" ({st})" if st is not None else "")
    if res.get("unreranked"):
        return "None: documents unreranked"
    if res.get("out") is None:
        return "returns " + res.get("note", "nothing")
    out = res["out"]
    parts = [f"{len(out)}"]
    idx = [o["index"]["value"] for o in out]
    sc = [o["score"]["value"] for o in out]
    types = {o["score"]["type"] for o in out}
    if types - {"float"}:
        parts.append("score " + "/".join(sorted(types)))
    if truth is not None:
        wrong = []
        for i, s in zip(idx, sc):
            t = truth.get(i) if isinstance(i, int) and not isinstance(i, bool) else None
            try:
                same = t is not None and s is not None and abs(float(s) - t) < 1e-12
            except (TypeError, ValueError):
                same = False
            if not same:
                wrong.append(f"{i!r}:{s!r}")
        if wrong:
            parts.append("wrong " + ",".join(wrong))
    try:
        fs = [float(s) for s in sc]
        if fs == sorted(fs, reverse=True):
            parts.append("desc")
        else:
            parts.append("order " + ",".join(str(i) for i in idx))
    except (TypeError, ValueError):
        parts.append("order " + ",".join(str(i) for i in idx))
    return " ".join(parts)


def run_echo(args):
    srv, rec, root = start_recorder()
    workers = {"main": Worker(VENVS["main"]), "c7": Worker(VENVS["c7"])}
    report = {"versions": {k: w.versions for k, w in workers.items()}, "urls": [], "requests": [], "variants": []}
    ok = _j({"results": _items(SORTED, TRUTH)})

    def job(kind, base, **kw):
        j = {"client": kind, "base": base, "key": "sk-test", "model": M, "query": QUERY, "documents": DOCS}
        j.update(kw)
        return j

    # 1. URL joining: the path each client calls for each form of base URL.
    forms = ["", "/", "/v1", "/v1/", "/v2", "/v1/rerank"]
    for name, w, kind in CLIENTS:
        row = {"client": name}
        for f in forms:
            rec.set_canned([ok])
            res = workers[w].run(job(kind, root + f))
            paths = [e["path"] for e in rec.log]
            row[f or "(root)"] = paths[0] if paths else ("no request: " + res.get("exc", "?").split(".")[-1])
        report["urls"].append(row)
    # The base URL each Cohere-based client object holds without base_url, with CO_API_URL set.
    co = Worker(VENVS["main"], {"CO_API_URL": root + "/from-env"}, tag="-co-api-url")
    report["base_url_default"] = {
        "CO_API_URL set, no base_url": co.run({"client": "base-url", "base_url_arg": None, "base": "", "key": "",
                                               "model": "", "query": "", "documents": []}).get("base_urls")}
    co.close()
    report["base_url_default"]["nothing set"] = workers["main"].run(
        {"client": "base-url", "base_url_arg": None, "base": "", "key": "", "model": "", "query": "",
         "documents": []}).get("base_urls")

    # 2. Request bodies and headers: defaults, top_n=2, top_n None (LangChain), no key.
    cases = [("defaults", {}), ("top_n=2", {"top_n": 2}), ("top_n=None", {"top_n_null": True}),
             ("no key (None / unset, no env)", {"key": None}), ("key empty string", {"key": ""})]
    for label, kw in cases:
        for name, w, kind in CLIENTS:
            if kind in ("dify-oai-compat", "openwebui-external") and ("top_n_null" in kw or kw.get("key", 1) is None):
                continue  # they take top_n from their caller and the key from a string setting
            rec.set_canned([ok])
            res = workers[w].run(job(kind, client_base(kind, root), **kw))
            e = rec.log[0] if rec.log else None
            report["requests"].append({
                "case": label, "client": name, "path": e and e["path"],
                "headers": e and [(k, v) for k, v in e["headers"] if k.lower() not in ("host", "content-length")],
                "body": e and e["body"], "outcome": summarise(res, TRUTH),
                "error": None if res.get("ok") else f"{res['exc']}: {res['msg'][:200]}"})
    rec.set_canned([ok])
    workers["main"].run({"client": "requests-headers", "base": root + "/requests", "key": "sk-test", "model": "",
                         "query": "", "documents": []})
    report["requests_transport_headers"] = rec.log[0]["headers"] if rec.log else None
    rec.set_canned([ok])
    res = workers["main"].run({"client": "requests-headers", "base": root + "/requests", "key": "", "model": "",
                               "query": "", "documents": []})
    report["requests_empty_key"] = {"outcome": "sent" if res.get("ok") else res.get("exc"),
                                    "authorization": [v for k, v in (rec.log[0]["headers"] if rec.log else [])
                                                      if k.lower() == "authorization"]}
    # Dify's credential check (validate_credentials): the same call with score_threshold 0.8, top_n 3.
    rec.set_canned([ok])
    res = workers["main"].run(job("dify-oai-compat", root + "/v1", top_n=3, score_threshold=0.8))
    report["dify_validate_credentials"] = {"body": rec.log[0]["body"] if rec.log else None,
                                           "outcome": summarise(res, TRUTH)}

    # 3. Response variants and errors.
    for vname, what, responses, truth in variants():
        row = {"variant": vname, "what": what, "cells": {}}
        for name, w, kind in CLIENTS:
            rec.set_canned(responses)
            canned_body = None
            try:
                canned_body = json.loads(responses[-1][2])
            except ValueError:
                pass
            res = workers[w].run(job(kind, client_base(kind, root), canned_body=canned_body))
            cell = {"outcome": summarise(res, truth), "requests": len(rec.log), "sleeps": res.get("sleeps")}
            if not res.get("ok"):
                cell["error"] = f"{res['exc']}: {res['msg'][:300]}"
            if res.get("predict") is not None:
                cell["predict"] = res["predict"]
            if res.get("pydantic_check") not in (None, "same", "n/a"):
                cell["pydantic_check"] = res["pydantic_check"]
            cell["out"] = res.get("out")
            row["cells"][name] = cell
        report["variants"].append(row)
    for w in workers.values():
        w.close()
    srv.shutdown()
    return report


def print_echo(report, md):
    print("# versions")
    for k, v in report["versions"].items():
        print(f"  {VENVS[k]}: " + ", ".join(f"{p} {x}" for p, x in v.items()))
    print("\n# URL joining: base URL given -> path requested")
    forms = ["(root)", "/", "/v1", "/v1/", "/v2", "/v1/rerank"]
    table(["client"] + ["ROOT" + (f if f != "(root)" else "") for f in forms],
          [[r["client"]] + [r[f] for f in forms] for r in report["urls"]], md)
    print("\n# base URL held without base_url")
    for k, v in report["base_url_default"].items():
        print(f"  {k}: {json.dumps(v)}")
    print("\n# requests")
    for r in report["requests"]:
        print(f"- [{r['case']}] {r['client']}: POST {r['path']}  -> {r['outcome']}" + (f"  ({r['error']})" if r["error"] else ""))
        if r["body"] is not None:
            print(f"    body: {r['body']}")
            print("    headers: " + "; ".join(f"{k}: {v}" for k, v in r["headers"]))
    print("\n# requests (the library) adds: " + "; ".join(f"{k}: {v}" for k, v in report["requests_transport_headers"] or []))
    print(f"# requests with an empty key (Open WebUI's default): {report.get('requests_empty_key')}")
    print(f"# Dify credential check: {report['dify_validate_credentials']}")
    print("\n# response variants x clients (results, score types, wrong index:score pairs, order; HTTP requests when > 1)")
    names = [c[0] for c in CLIENTS]
    rows = []
    for r in report["variants"]:
        cells = []
        for n in names:
            c = r["cells"][n]
            s = c["outcome"]
            if c["requests"] != 1:
                s += f" [{c['requests']} req"
                if c["sleeps"]:
                    s += " sleeps " + ",".join(f"{x:g}" for x in c["sleeps"])
                s += "]"
            if c.get("pydantic_check"):
                s += " " + c["pydantic_check"]
            cells.append(s)
        rows.append([r["variant"]] + cells)
    table(["variant"] + names, rows, md)
    print("\n# errors (message excerpts)")
    for r in report["variants"]:
        for n in names:
            c = r["cells"][n]
            if c.get("error"):
                print(f"  {r['variant']} / {n}: {c['error'][:240]}")


def table(head, rows, md):
    if md:
        print("| " + " | ".join(head) + " |")
        print("| " + " | ".join("---" for _ in head) + " |")
        for r in rows:
            print("| " + " | ".join(str(x).replace("|", "\\|") for x in r) + " |")
        return
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    for r in [head] + rows:
        print("  ".join(str(x).ljust(wd) for x, wd in zip(r, widths)))


# ------------------------------------------------ servers mode

DEFAULT_CASES = ["en-basic", "duplicate-documents", "mixed-scripts", "empty-document", "long-document-over",
                 "many-100"]


def load_reference(path):
    with open(path) as f:
        lines = [json.loads(x) for x in f if x.strip()]
    return lines[0], {c["id"]: c for c in lines[1:]}


def parse_answer(text):
    """{index: score} and the order of indices of a server's answer (any of the real shapes)."""
    try:
        d = json.loads(text)
    except ValueError:
        return None, None
    items = d if isinstance(d, list) else (d.get("results") if isinstance(d, dict) else None)
    if not isinstance(items, list):
        return None, None
    scores, order = {}, []
    for it in items:
        if not isinstance(it, dict) or not isinstance(it.get("index"), int):
            continue
        s = it.get("relevance_score", it.get("score"))
        if isinstance(s, (int, float)):
            scores[it["index"]] = float(s)
            order.append(it["index"])
    return scores, order


def compare(res, log, case, k_expected):
    """Outcome of one client call against a real server: vs the server's answer and vs the reference."""
    reqs = [e for e in log]
    statuses = [e["status"] for e in reqs]
    cell = {"statuses": statuses, "sleeps": res.get("sleeps")}
    if not res.get("ok"):
        exc = res["exc"].split(".")[-1]
        cell["outcome"] = f"raises {exc}"
        cell["error"] = f"{res['exc']}: {res['msg'][:300]}"
        cell["class"] = "raises"
        return cell
    if res.get("out") is None:
        cell["outcome"] = "returns " + res.get("note", "nothing")
        cell["class"] = "wrong"
        return cell
    out = [(o["index"]["value"], o["score"]["value"]) for o in res["out"]]
    cell["out"] = out
    if res.get("unreranked"):
        cell["outcome"] = "None: documents unreranked"
        cell["class"] = "wrong"
        return cell
    server_scores, server_order = parse_answer(reqs[-1]["response"]) if reqs else (None, None)
    client_notes, ref_notes = [], []
    if len(out) != k_expected:
        client_notes.append(f"{len(out)} results for {k_expected}")
    # vs the server's own answer to this very request
    if server_scores is None:
        client_notes.append("server answer not parsed")
    else:
        bad = [(i, s) for i, s in out if not isinstance(s, (int, float)) or i not in server_scores
               or abs(float(s) - server_scores[i]) > 1e-9]
        if bad:
            client_notes.append("≠ server: " + ", ".join(
                f"#{i} {s!r} (server {server_scores.get(i)!r})" for i, s in bad[:3]))
        order = [i for i, _ in out]
        by_score = sorted(order, key=lambda i: -server_scores.get(i, -math.inf))
        if [server_scores.get(i) for i in order] != [server_scores.get(i) for i in by_score]:
            client_notes.append("not sorted by the server's scores")
    # vs the reference: the library's sigmoid scores (and its raw logits), and its ranking
    def maxdiff(ref):
        try:
            return max(abs(float(s) - ref[i]) for i, s in out) if out else 0.0
        except (TypeError, ValueError, IndexError):
            return math.inf
    d_sig, d_raw = maxdiff(case["scores"]), maxdiff(case["raw"])
    cell["max_diff_ref"], cell["max_diff_raw"] = d_sig, d_raw
    ref = case["scores"]
    want = sorted(ref, reverse=True)[:len(out)]
    got = [ref[i] for i, _ in out] if all(isinstance(i, int) and 0 <= i < len(ref) for i, _ in out) else None
    ranking_ok = got is not None and all(abs(a - b) < 1e-6 for a, b in zip(got, want))
    cell["ranking_ok"] = ranking_ok
    if d_sig > 1e-4:
        ref_notes.append(f"reference: logits (Δ {d_raw:.2g})" if d_raw < 0.05 else f"reference Δ {min(d_sig, d_raw):.3g}")
    if not ranking_ok:
        ref_notes.append("ranking ≠ reference")
    cell["class"] = "client" if client_notes else ("server" if ref_notes else "ok")
    head = "; ".join(client_notes) if client_notes else "= server"
    cell["outcome"] = head + ("; " + "; ".join(ref_notes) if ref_notes else "; = reference")
    return cell


def run_servers(args):
    ids = args.cases.split(",") if args.cases else DEFAULT_CASES
    workers = {"main": Worker(VENVS["main"]), "c7": Worker(VENVS["c7"])}
    report = {"versions": {k: w.versions for k, w in workers.items()}, "servers": []}
    for spec in args.servers:
        label, _, rest = spec.partition("=")
        parts = rest.split(",")
        url, opts = parts[0].rstrip("/"), dict(p.split("=", 1) for p in parts[1:])
        key = os.environ.get(opts["key-env"], "") if "key-env" in opts else "sk-none"
        ref_path = opts.get("reference", args.reference)
        header, cases = load_reference(ref_path)
        for i in ids:
            if i not in cases:
                fail(f"no case {i} in {ref_path}")
        model = opts.get("model", header["model"])
        srv, rec, proxy = start_recorder()
        rec.upstream = url
        entry = {"label": label, "url": url, "model": model, "reference": os.path.relpath(ref_path, REPO),
                 "cells": []}
        for cid in ids:
            case = cases[cid]
            n = len(case["documents"])
            for mode in ("defaults", "top_n=N", "top_n=null"):
                for name, w, kind in CLIENTS:
                    if mode == "top_n=null" and kind in ("dify-oai-compat", "openwebui-external"):
                        continue  # their top_n comes from the application, never null on the wire
                    top_n = None if mode != "top_n=N" else n
                    if kind == "openwebui-external" and mode == "top_n=N":
                        top_n = n  # the compressor keeps N (it always sends top_n = N)
                    k = n
                    if mode == "defaults":
                        k = {"langchain-cohere": 3, "llamaindex-cohere": 2, "openwebui-external": 3}.get(kind, n)
                    k = min(k, n)
                    rec.set_canned([])
                    rec.log = []
                    t0 = time.monotonic()
                    res = workers[w].run({"client": kind, "base": client_base(kind, proxy), "key": key, "model": model,
                                          "query": case["query"], "documents": case["documents"], "top_n": top_n,
                                          "top_n_null": mode == "top_n=null"})
                    cell = compare(res, list(rec.log), case, k)
                    cell.update({"case": cid, "mode": mode, "client": name, "seconds": round(time.monotonic() - t0, 2),
                                 "paths": sorted({e["path"] for e in rec.log})})
                    if rec.log:
                        cell["request_body"] = rec.log[0]["body"][:300]
                        cell["response_excerpt"] = rec.log[-1]["response"][:300]
                    entry["cells"].append(cell)
                    print(f"{label} {cid} {mode} {name}: {cell['outcome']} {cell['statuses']}", file=sys.stderr)
        srv.shutdown()
        report["servers"].append(entry)
    for w in workers.values():
        w.close()
    return report


def print_servers(report, md):
    print("# versions")
    for k, v in report["versions"].items():
        print(f"  {VENVS[k]}: " + ", ".join(f"{p} {x}" for p, x in v.items()))
    names = [c[0] for c in CLIENTS]
    for s in report["servers"]:
        print(f"\n# {s['label']} ({s['url']}, model {s['model']}, reference {s['reference']})")
        rows = []
        keys = []
        for c in s["cells"]:
            if (c["case"], c["mode"]) not in keys:
                keys.append((c["case"], c["mode"]))
        for case, mode in keys:
            row = [f"{case} / {mode}"]
            for n in names:
                c = next((x for x in s["cells"] if x["case"] == case and x["mode"] == mode and x["client"] == n), None)
                if c is None:
                    row.append("-")
                    continue
                o = c["outcome"]
                if len(c["statuses"]) != 1 or c["statuses"][0] != 200:
                    o += " [" + ",".join(str(x) for x in c["statuses"]) + "]"
                row.append(o)
            rows.append(row)
        table(["case / mode"] + names, rows, md)
        print("  errors:")
        seen = set()
        for c in s["cells"]:
            if c.get("error") and (c["client"], c["error"][:80]) not in seen:
                seen.add((c["client"], c["error"][:80]))
                print(f"    {c['client']} ({c['case']}, {c['paths']}): {c['error'][:240]}")


def _category(c):
    o = c["outcome"]
    if o.startswith("raises") or o.startswith("None") or o.startswith("returns"):
        st = sorted({x for x in c["statuses"] if x != 200})
        return o + (" " + "/".join(str(x) for x in st) if st else "") + (f" ({len(c['statuses'])} req)"
                                                                          if len(c["statuses"]) > 1 else "")
    if o.startswith("= server; = reference"):
        return "ok"
    if o.startswith("= server"):
        return "= server ≠ reference"
    return "CLIENT: " + o.split(";")[0]


def print_matrix(report, md):
    """clients x servers: outcome categories over every case and mode, with counts and where."""
    names = [c[0] for c in CLIENTS]
    rows = []
    for n in names:
        row = [n]
        for s in report["servers"]:
            cells = [c for c in s["cells"] if c["client"] == n]
            groups = {}
            for c in cells:
                groups.setdefault(_category(c), []).append(c)
            parts = []
            for cat, cs in sorted(groups.items(), key=lambda t: (t[0] != "ok", -len(t[1]))):
                where = ""
                if len(groups) > 1:
                    all_cases = {c["case"] for c in cells}
                    by_mode = {}
                    for c in cs:
                        by_mode.setdefault(c["mode"], set()).add(c["case"])
                    full = [m for m, cc in by_mode.items() if cc == all_cases]
                    rest = {m: cc for m, cc in by_mode.items() if cc != all_cases}
                    bits = []
                    if full:
                        bits.append(",".join(full) + (": every case" if len(full) < len({c["mode"] for c in cells})
                                                      else ""))
                    same = {frozenset(cc) for cc in rest.values()}
                    if len(same) == 1:
                        bits.append(",".join(sorted(next(iter(same)))) + " (" + ",".join(rest) + ")")
                    else:
                        bits += [f"{m}: {','.join(sorted(cc))}" for m, cc in rest.items()]
                    where = f" [{'; '.join(b for b in bits if b)}]"
                parts.append(f"{cat} ×{len(cs)}{where}")
            row.append("; ".join(parts))
        rows.append(row)
    print("\n# clients x servers (outcomes over the cases and modes: ok = the server's answer and the reference)")
    table(["client"] + [s["label"] for s in report["servers"]], rows, md)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        return _worker()
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="mode", required=True)
    e = sub.add_parser("echo")
    e.add_argument("--json")
    e.add_argument("--markdown", action="store_true")
    s = sub.add_parser("servers")
    s.add_argument("servers", nargs="+", help="LABEL=URL[,key-env=VAR][,model=NAME][,reference=FILE]")
    s.add_argument("--reference", default=os.path.join(REPO, "fixtures", "reference", "tiny-rerank-bert.jsonl"))
    s.add_argument("--cases")
    s.add_argument("--json")
    s.add_argument("--markdown", action="store_true")
    r = sub.add_parser("render", help="print the tables of a --json report again")
    r.add_argument("report")
    r.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    if args.mode == "render":
        with open(args.report) as f:
            report = json.load(f)
        if "variants" in report:
            print_echo(report, args.markdown)
        else:
            print_servers(report, args.markdown)
            print_matrix(report, args.markdown)
        return 0
    if args.mode == "echo":
        report = run_echo(args)
        print_echo(report, args.markdown)
    else:
        for spec in args.servers:
            if "=" not in spec or not spec.split("=", 1)[1].startswith("http://127.0.0.1:"):
                ap.error(f"{spec}: LABEL=http://127.0.0.1:PORT expected")
        report = run_servers(args)
        print_servers(report, args.markdown)
        print_matrix(report, args.markdown)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1, default=repr)
    return 0


if __name__ == "__main__":
    sys.exit(main() or 0)
