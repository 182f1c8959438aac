"""A home-made speech-to-text server, written as LitServe's documentation shows and as a first
version is written: a LitAPI at POST /v1/audio/transcriptions that loads a Whisper with
transformers and transcribes the uploaded file with generate(). It binds 127.0.0.1 only; the
migration study's home-made server answered speech beside embeddings and rerank in the same
way (one process per model here). lab/start.sh litserve+whispertiny runs it.
Usage: python litserve_speech.py MODEL_DIR PORT [SERVED_NAME]

What it does with a request (litserve 0.2.19 hands decode_request the multipart form):
- `file` is read as WAV with Python's `wave` module (16-bit PCM), its channels averaged and
  resampled to 16 kHz with scipy's resample_poly; any other container is answered 400
  {"detail": "…"} (FastAPI's envelope, as LitServe raises an HTTPException);
- `language` is passed to generate() as given (an unknown code raises inside transformers:
  LitServe answers 500 "Internal server error"); `model`, `prompt`, `temperature`,
  `response_format` and `stream` are read by nobody: every answer is {"text": …} JSON, greedy;
- a missing or empty `file` raises while decoding: 500, as LitServe answers any exception.
There is no /v1/audio/translations.
"""

import io
import sys
import wave
from math import gcd

import litserve as ls
import numpy as np
import torch
from fastapi import HTTPException
from fastapi import Request
from scipy.signal import resample_poly
from transformers import WhisperForConditionalGeneration, WhisperProcessor

RATE = 16000


def samples_of(data):
    """A WAV file's samples as 16 kHz mono floats."""
    try:
        with wave.open(io.BytesIO(data), "rb") as w:
            rate, channels, width = w.getframerate(), w.getnchannels(), w.getsampwidth()
            frames = w.readframes(w.getnframes())
    except (wave.Error, EOFError) as e:
        raise HTTPException(status_code=400, detail=f"Could not read the audio as WAV: {e}") from e
    if width != 2:
        raise HTTPException(status_code=400, detail="Only 16-bit PCM WAV is supported")
    audio = np.frombuffer(frames, dtype="<i2").astype(np.float32) / 32768.0
    audio = audio.reshape(-1, channels).mean(axis=1)
    if rate != RATE:
        common = gcd(rate, RATE)
        audio = resample_poly(audio, RATE // common, rate // common).astype(np.float32)
    return audio


class TranscriptionAPI(ls.LitAPI):
    def setup(self, device):
        torch.set_num_threads(1)
        self.processor = WhisperProcessor.from_pretrained(self.model_dir)
        self.model = WhisperForConditionalGeneration.from_pretrained(self.model_dir).eval()

    def decode_request(self, request: Request):
        upload = request["file"]
        data = upload.file.read() if hasattr(upload, "file") else upload
        language = request.get("language")
        return samples_of(data), language

    def predict(self, inputs):
        audio, language = inputs
        features = self.processor(audio, sampling_rate=RATE, return_tensors="pt").input_features
        with torch.no_grad():
            ids = self.model.generate(features, language=language, task="transcribe")
        return self.processor.batch_decode(ids, skip_special_tokens=True)[0]

    def encode_response(self, text):
        return {"text": text}


if __name__ == "__main__":
    api = TranscriptionAPI(api_path="/v1/audio/transcriptions")
    api.model_dir = sys.argv[1]
    api.served_name = sys.argv[3] if len(sys.argv) > 3 else sys.argv[1]
    server = ls.LitServer(api, accelerator="cpu")
    server.run(host="127.0.0.1", port=int(sys.argv[2]), generate_client_file=False)
