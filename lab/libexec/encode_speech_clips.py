"""Encode the speech clauses' canonical clip as the compressed containers clients upload.

Reads speech.wav (the suite's own clip, from `cargo run -p embedcheck-core --example
speech_clip`) and writes speech.mp3 (MPEG-1/2 Layer III, libmp3lame, 32 kbit/s, 16 kHz
mono: what LangChain's OpenAIWhisperParser uploads), speech.ogg (Opus in Ogg, 32 kbit/s,
as Open WebUI compresses a large upload) and speech.flac (16 kHz mono, 16 bit) with
PyAV's FFmpeg. The same PyAV release gives the same bytes: the digests are pinned in
crates/embedcheck-core/src/contracts/speech/audio.rs.

usage: python encode_speech_clips.py speech.wav OUTDIR
"""

import sys
from pathlib import Path

import av

# (file name, container, codec, sample rate, bit rate)
TARGETS = [
    ("speech.mp3", "mp3", "libmp3lame", 16_000, 32_000),
    ("speech.ogg", "ogg", "libopus", 48_000, 32_000),
    ("speech.flac", "flac", "flac", 16_000, None),
]


def encode(source: Path, target: Path, container: str, codec: str, rate: int, bit_rate):
    # Bit-exact: no encoder tag naming the FFmpeg build, and Ogg's stream serial
    # number 0 rather than random, so two runs write the same bytes.
    bitexact = {"fflags": "+bitexact"}
    with (
        av.open(str(source)) as inp,
        av.open(str(target), "w", format=container, options=bitexact) as out,
    ):
        stream = out.add_stream(codec, rate=rate, options={"flags": "+bitexact"})
        stream.layout = "mono"
        if bit_rate:
            stream.bit_rate = bit_rate
        formats = stream.codec_context.codec.audio_formats
        resampler = av.AudioResampler(format=formats[0].name, layout="mono", rate=rate)
        for frame in inp.decode(audio=0):
            for piece in resampler.resample(frame):
                out.mux(stream.encode(piece))
        for piece in resampler.resample(None):
            out.mux(stream.encode(piece))
        out.mux(stream.encode(None))


def main():
    source, outdir = Path(sys.argv[1]), Path(sys.argv[2])
    outdir.mkdir(parents=True, exist_ok=True)
    for name, container, codec, rate, bit_rate in TARGETS:
        encode(source, outdir / name, container, codec, rate, bit_rate)
        print(name, (outdir / name).stat().st_size)


if __name__ == "__main__":
    main()
