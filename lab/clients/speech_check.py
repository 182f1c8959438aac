"""The real openai-python audio calls against BASE_URL, as embedcheck's openai-python-audio
profile models them: what the SDK hands its caller, to compare with the profile.

  speech_check.py BASE_URL MODEL CLIP.wav [--json]

(speech_check.mjs makes the same calls with openai-node.)

CLIP.wav is the suite's own clip (lab/speech-client-check.sh writes it with
`cargo run -p embedcheck-core --example speech_clip`), uploaded as speech.wav, audio/wav.
Every call uses the SDK's defaults (two retries):
- `audio.transcriptions.create(model=M, file=F)`: the default call (json);
- the same with `response_format` text, srt, vtt and verbose_json;
- the same with `stream=True`, the events iterated;
- `audio.translations.create(model=M, file=F)`, and with `response_format="text"`.

Per call: worked or raised (the exception's class, status and message), what the caller got
(a `Transcription`'s text, or the `str` the SDK returns, flagged when that string is the JSON
envelope), and the retries seen (the SDK's own "Retrying request" log lines). The exit status
is 0 whatever the server did; 2 for bad arguments.
"""

import json
import logging
import os
import sys
import warnings
from importlib.metadata import version

import openai
from openai import OpenAI

FORMATS = ["text", "srt", "vtt", "verbose_json"]


class RetryCounter(logging.Handler):
    """Counts the SDK's "Retrying request in …" log records."""

    def __init__(self):
        super().__init__(logging.INFO)
        self.count = 0

    def emit(self, record):
        if "Retrying request" in record.getMessage():
            self.count += 1


def got(answer, wants_str):
    """Whether the caller holds its transcript, and what it holds, in a few words: a text
    format (text, srt, vtt) is typed str, the others a model whose .text is read."""
    if isinstance(answer, str) and not wants_str:
        return False, f"a str of {len(answer)} chars where a model is typed, so .text raises AttributeError"
    if isinstance(answer, str):
        try:
            parsed = json.loads(answer)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and "text" in parsed:
            return False, f"a str that is the JSON envelope ({len(answer)} chars): {answer[:60]!r}"
        return True, f"a str of {len(answer)} chars: {answer[:60]!r}"
    text = getattr(answer, "text", None)
    if isinstance(text, str):
        return not wants_str, f"{type(answer).__name__}.text of {len(text)} chars"
    return False, f"{type(answer).__name__} without a string text"


def streamed(events):
    """The events' types and the text a caller reading them by type gets."""
    types, deltas, done = [], [], None
    for event in events:
        kind = getattr(event, "type", None)
        types.append(kind)
        if kind == "transcript.text.delta":
            deltas.append(event.delta)
        elif kind == "transcript.text.done":
            done = event.text
    shown = sorted({str(t) for t in types})
    if done is None and not deltas:
        return False, f"{len(types)} events of types {shown}: no transcript.text events, no text"
    text = done if done is not None else "".join(deltas)
    return True, f"{len(types)} events of types {shown}: text of {len(text)} chars"


def call(name, thunk, counter):
    counter.count = 0
    try:
        answer = thunk()
        if "stream=True" in name:
            worked, what = streamed(answer)
        else:
            worked, what = got(answer, any(f"'{f}'" in name for f in ("text", "srt", "vtt")))
        return {"call": name, "worked": worked, "got": what, "retries": counter.count}
    except openai.APIStatusError as e:
        message = str(e)[:160]
        return {"call": name, "worked": False, "got": f"{type(e).__name__} {e.status_code}: {message}", "retries": counter.count}
    except Exception as e:  # noqa: BLE001 - what the caller sees, whatever it is
        return {"call": name, "worked": False, "got": f"{type(e).__name__}: {str(e)[:160]}", "retries": counter.count}


def main():
    args = [a for a in sys.argv[1:] if a != "--json"]
    if len(args) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    base, model, clip = args
    # openai-python marks audio.translations deprecated; the call is what clients make.
    warnings.simplefilter("ignore", DeprecationWarning)
    audio = open(clip, "rb").read()
    upload = lambda: ("speech.wav", audio, "audio/wav")  # noqa: E731
    counter = RetryCounter()
    logging.getLogger("openai").addHandler(counter)
    logging.getLogger("openai").setLevel(logging.INFO)
    client = OpenAI(base_url=base, api_key=os.environ.get("OPENAI_API_KEY", "sk-none"), timeout=900)
    calls = [("transcriptions.create()", lambda: client.audio.transcriptions.create(model=model, file=upload()))]
    for fmt in FORMATS:
        calls.append(
            (
                f"transcriptions.create(response_format={fmt!r})",
                lambda fmt=fmt: client.audio.transcriptions.create(model=model, file=upload(), response_format=fmt),
            )
        )
    calls.append(
        ("transcriptions.create(stream=True)", lambda: client.audio.transcriptions.create(model=model, file=upload(), stream=True))
    )
    calls.append(("translations.create()", lambda: client.audio.translations.create(model=model, file=upload())))
    calls.append(
        (
            "translations.create(response_format='text')",
            lambda: client.audio.translations.create(model=model, file=upload(), response_format="text"),
        )
    )
    # Named as embedcheck's profile is; the default call first.
    who = {"client": "openai-python-audio", "version": version("openai")}
    results = [dict(call(name, thunk, counter), **who) for name, thunk in calls]
    for r in results:
        if "--json" in sys.argv:
            print(json.dumps(r, ensure_ascii=False))
        else:
            word = "works " if r["worked"] else "BREAKS"
            print(f"{r['client']} {word} {r['call']:<48} {r['got']} (retries: {r['retries']})")


if __name__ == "__main__":
    main()
