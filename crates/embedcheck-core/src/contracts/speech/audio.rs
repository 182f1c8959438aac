//! Audio the suite makes itself, deterministically: nothing is downloaded, and the same
//! seed gives the same bytes on every machine. The compressed copies of the clip (MP3,
//! Ogg Opus, FLAC: 87 KB in `fixtures/audio/`) are the one thing committed, since no
//! encoder ships with the suite; `lab/libexec/encode_speech_clips.py` makes them again
//! from the clip's own bytes, and their digests are pinned here.
//!
//! The clip is speech-like rather than speech: voiced syllables (a pitch between 110
//! and 220 Hz with its harmonics, shaped by two vowel-like formants) between short
//! pauses, which a recogniser's front end takes for a voice. What a server answers to
//! it is judged by its shape and its agreement with itself, never by its words.

use crate::http::form::Upload;
use std::f64::consts::PI;
use std::sync::Arc;

/// A clip as a client uploads it.
#[derive(Clone, Debug, PartialEq)]
pub struct Clip {
    /// The name it is uploaded under, with the extension OpenAI reads the format from.
    pub file_name: &'static str,
    pub content_type: &'static str,
    pub upload: Upload,
    /// Its length in seconds.
    pub seconds: f64,
}

/// Three seconds of speech-like sound at 16 kHz, mono, 16-bit PCM WAV (96,044 bytes):
/// the clip every clause sends unless it needs another.
pub fn speech_wav() -> Clip {
    speech_wav_at(16_000, 1, "speech.wav")
}

/// The same three seconds at `rate` samples a second on `channels` channels (each the
/// same voice), uploaded as `file_name`: 8 kHz stereo is 96,044 bytes, 44.1 kHz mono
/// 264,644.
pub fn speech_wav_at(rate: u32, channels: u16, file_name: &'static str) -> Clip {
    const SECONDS: f64 = 3.0;
    let samples = speech_like(SECONDS, rate, 7);
    Clip {
        file_name,
        content_type: "audio/wav",
        upload: Upload::new(Arc::from(wav(&samples, rate, channels))),
        seconds: SECONDS,
    }
}

/// The clip in the compressed containers OpenAI lists and clients upload, each with
/// what it is: MP3 (32 kbit/s, what LangChain's `OpenAIWhisperParser` uploads), Opus
/// in Ogg (32 kbit/s, what Open WebUI compresses a large recording to) and FLAC.
pub fn compressed() -> [(&'static str, Clip); 3] {
    let clip = |file_name, content_type, bytes: &'static [u8]| Clip {
        file_name,
        content_type,
        upload: Upload::new(Arc::from(bytes)),
        seconds: 3.0,
    };
    [
        (
            "MP3",
            clip(
                "speech.mp3",
                "audio/mpeg",
                include_bytes!("../../../fixtures/audio/speech.mp3"),
            ),
        ),
        (
            "Ogg Opus",
            clip(
                "speech.ogg",
                "audio/ogg",
                include_bytes!("../../../fixtures/audio/speech.ogg"),
            ),
        ),
        (
            "FLAC",
            clip(
                "speech.flac",
                "audio/flac",
                include_bytes!("../../../fixtures/audio/speech.flac"),
            ),
        ),
    ]
}

/// 820 s of silence at 16 kHz, mono, 16-bit PCM WAV: 26,240,044 bytes, past OpenAI's
/// 25 MiB (26,214,400-byte) upload limit, made without synthesis.
pub fn oversize_wav() -> Clip {
    const RATE: u32 = 16_000;
    const SECONDS: f64 = 820.0;
    Clip {
        file_name: "long.wav",
        content_type: "audio/wav",
        upload: Upload::new(Arc::from(wav(
            &vec![0; (SECONDS * f64::from(RATE)) as usize],
            RATE,
            1,
        ))),
        seconds: SECONDS,
    }
}

/// `seconds` of voiced syllables and pauses at `rate` samples a second, from `seed`.
fn speech_like(seconds: f64, rate: u32, seed: u64) -> Vec<i16> {
    let total = (seconds * f64::from(rate)) as usize;
    let mut random = SplitMix(seed);
    let mut samples = Vec::with_capacity(total);
    while samples.len() < total {
        let syllable = (random.between(0.12, 0.28) * f64::from(rate)) as usize;
        let pause = (random.between(0.04, 0.12) * f64::from(rate)) as usize;
        let voice = Voice {
            pitch: random.between(110.0, 220.0),
            glide: random.between(-0.25, 0.25),
            formants: [random.between(300.0, 800.0), random.between(900.0, 2300.0)],
        };
        samples.extend((0..syllable).map(|i| voice.sample(i, syllable, rate)));
        samples.extend(std::iter::repeat_n(0, pause));
    }
    samples.truncate(total);
    samples
}

/// One syllable's voice: its pitch, how far the pitch glides over it, its formants.
struct Voice {
    pitch: f64,
    glide: f64,
    formants: [f64; 2],
}

impl Voice {
    /// Sample `i` of a syllable `length` samples long.
    fn sample(&self, i: usize, length: usize, rate: u32) -> i16 {
        let t = i as f64 / f64::from(rate);
        let progress = i as f64 / length as f64;
        let pitch = self.pitch * (1.0 + self.glide * progress);
        let envelope = sine(PI * progress);
        let nyquist = f64::from(rate) / 2.0;
        let value: f64 = (1..)
            .map(|k| f64::from(k) * pitch)
            .take_while(|f| *f < nyquist)
            .map(|f| self.loudness(f) * sine(2.0 * PI * f * t))
            .sum();
        (value * envelope * 6000.0).clamp(-32768.0, 32767.0) as i16
    }

    /// How loud a harmonic at `frequency` is under the two formants.
    fn loudness(&self, frequency: f64) -> f64 {
        self.formants
            .iter()
            .map(|f| {
                let off = (frequency - f) / 150.0;
                1.0 / (1.0 + off * off)
            })
            .sum::<f64>()
            + 0.02
    }
}

/// The sine of `x` from additions and multiplications alone, which IEEE 754 rounds
/// alike on every machine (a platform's `sin` may differ in the last bit): within
/// 1e-4 of it, far below a 16-bit sample's step.
fn sine(x: f64) -> f64 {
    let x = x - 2.0 * PI * (x / (2.0 * PI)).round();
    let x2 = x * x;
    let mut term = x;
    let mut sum = x;
    for n in 1..8 {
        term *= -x2 / f64::from((2 * n) * (2 * n + 1));
        sum += term;
    }
    sum
}

/// Samples as a RIFF WAVE file of 16-bit little-endian PCM, each sample on every one
/// of `channels` channels.
fn wav(samples: &[i16], rate: u32, channels: u16) -> Vec<u8> {
    let frame = 2 * u32::from(channels);
    let data = samples.len() as u32 * frame;
    let mut bytes = Vec::with_capacity(44 + data as usize);
    bytes.extend_from_slice(b"RIFF");
    bytes.extend_from_slice(&(36 + data).to_le_bytes());
    bytes.extend_from_slice(b"WAVEfmt ");
    bytes.extend_from_slice(&16u32.to_le_bytes());
    bytes.extend_from_slice(&1u16.to_le_bytes()); // PCM
    bytes.extend_from_slice(&channels.to_le_bytes());
    bytes.extend_from_slice(&rate.to_le_bytes());
    bytes.extend_from_slice(&(rate * frame).to_le_bytes()); // bytes a second
    bytes.extend_from_slice(&(frame as u16).to_le_bytes()); // bytes a frame
    bytes.extend_from_slice(&16u16.to_le_bytes()); // bits a sample
    bytes.extend_from_slice(b"data");
    bytes.extend_from_slice(&data.to_le_bytes());
    for sample in samples {
        for _ in 0..channels {
            bytes.extend_from_slice(&sample.to_le_bytes());
        }
    }
    bytes
}

/// SplitMix64: a small seeded generator, the same on every platform.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `[low, high)`.
    fn between(&mut self, low: f64, high: f64) -> f64 {
        let unit = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        low + unit * (high - low)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clip_is_a_wav_file_of_its_stated_length() {
        let clip = speech_wav();
        let bytes = clip.upload.bytes();
        assert_eq!(bytes.len(), 96_044);
        assert_eq!(&bytes[..4], b"RIFF");
        assert_eq!(&bytes[8..16], b"WAVEfmt ");
        let rate = u32::from_le_bytes(bytes[24..28].try_into().unwrap());
        let data = u32::from_le_bytes(bytes[40..44].try_into().unwrap());
        assert_eq!(f64::from(data) / 2.0 / f64::from(rate), clip.seconds);
    }

    /// The compressed copies are the ones the lab script makes from this clip: their
    /// digests are pinned, and each starts as its container does.
    #[test]
    fn the_compressed_copies_are_the_pinned_files() {
        let clips = compressed();
        let digests: Vec<(&str, &str)> = clips
            .iter()
            .map(|(what, clip)| (*what, clip.upload.digest()))
            .collect();
        assert_eq!(
            digests,
            [
                (
                    "MP3",
                    "0d11e9f6a177a4015d908e1f7bb83d26184e69d8413bfdf6706080d7a3bc6104"
                ),
                (
                    "Ogg Opus",
                    "39e3cca76d5084bee3e5a3988a9d4a27f7769d17df153b3adf476cc19e8bb371"
                ),
                (
                    "FLAC",
                    "4f204f39fda79e75e8373871aaac1cf9f21ef99a68d664d125ebed5d54335808"
                ),
            ]
        );
        let [mp3, ogg, flac] = compressed().map(|(_, clip)| clip);
        assert!(mp3.upload.bytes().starts_with(b"ID3") || mp3.upload.bytes()[0] == 0xFF);
        assert!(ogg.upload.bytes().starts_with(b"OggS"));
        assert!(flac.upload.bytes().starts_with(b"fLaC"));
    }

    /// The same clip on every run and machine: its digest is pinned.
    #[test]
    fn the_clip_is_the_same_bytes_every_time() {
        assert_eq!(speech_wav(), speech_wav());
        assert_eq!(
            speech_wav().upload.digest(),
            "6c2321fb649e3aa016500a45614dcb996970afda1ad21f195dbc5b4c58d34ef6"
        );
    }

    #[test]
    fn the_sine_is_within_a_ten_thousandth_of_the_platforms() {
        for i in -2000..2000 {
            let x = f64::from(i) * 0.01;
            assert!((sine(x) - x.sin()).abs() < 1e-4, "{x}");
        }
    }

    #[test]
    fn other_rates_and_channels_are_the_same_clip_in_other_files() {
        let phone = speech_wav_at(8_000, 2, "phone.wav");
        let bytes = phone.upload.bytes();
        assert_eq!(bytes.len(), 96_044);
        assert_eq!(u16::from_le_bytes([bytes[22], bytes[23]]), 2);
        assert_eq!(bytes[44..46], bytes[46..48]);
        assert_eq!(
            speech_wav_at(44_100, 1, "cd.wav").upload.bytes().len(),
            264_644
        );
    }

    #[test]
    fn the_oversize_clip_is_past_openais_limit() {
        let clip = oversize_wav();
        assert_eq!(clip.upload.bytes().len(), 26_240_044);
        assert!(clip.upload.bytes().len() > 26_214_400);
    }

    /// Voiced syllables and pauses: loud and silent stretches both.
    #[test]
    fn the_clip_has_voice_and_pauses() {
        let samples = speech_like(3.0, 16_000, 7);
        let windows: Vec<i32> = samples
            .chunks(160)
            .map(|w| w.iter().map(|s| i32::from(*s).abs()).max().unwrap_or(0))
            .collect();
        let loud = windows.iter().filter(|m| **m > 3000).count();
        let silent = windows.iter().filter(|m| **m == 0).count();
        assert!(
            loud > 100 && silent > 20,
            "{loud} loud, {silent} silent windows"
        );
    }
}
