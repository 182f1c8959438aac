//! Writes the speech clauses' canonical clip (`speech.wav`, 96,044 bytes) to standard
//! output, so that the compressed copies in `fixtures/audio/` can be made again from
//! the very bytes the suite sends (`lab/libexec/encode_speech_clips.py`).

use embedcheck_core::contracts::speech::audio;
use std::io::Write;

fn main() -> std::io::Result<()> {
    std::io::stdout().write_all(audio::speech_wav().upload.bytes())
}
