//! What the reference server hears in an upload: the container it is in, its length,
//! and a deterministic transcript (the same file always gives the same words).

use super::super::ApiError;

/// The containers OpenAI lists, recognised by their first bytes.
const SUPPORTED: &str =
    "['flac', 'm4a', 'mp3', 'mp4', 'mpeg', 'mpga', 'oga', 'ogg', 'wav', 'webm']";

/// Words the transcriber says, chosen by the audio's bytes.
const WORDS: [&str; 32] = [
    "the", "river", "carries", "light", "across", "quiet", "hills", "and", "every", "morning",
    "brings", "a", "new", "voice", "to", "town", "where", "people", "listen", "closely", "under",
    "open", "skies", "while", "small", "boats", "drift", "past", "old", "stone", "bridges",
    "slowly",
];

/// An upload as heard: its length (where the container says it) and its words.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Heard {
    pub(super) seconds: f64,
    pub(super) words: Vec<&'static str>,
}

/// Hears `bytes`: a WAV file by its header, any other listed container by its
/// size; a file in no listed container is refused as OpenAI refuses it.
pub(super) fn hear(bytes: &[u8]) -> Result<Heard, ApiError> {
    let (seconds, silent) = match container(bytes) {
        Some(Container::Wav) => wav(bytes)?,
        Some(Container::Other) => (bytes.len() as f64 / 16_000.0, false),
        None => {
            return Err(ApiError::InvalidFileFormat(SUPPORTED));
        }
    };
    let count = if silent {
        0
    } else {
        ((seconds * 2.0).round() as usize).clamp(1, 2000)
    };
    let seed = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    });
    let words = (0..count)
        .map(|i| WORDS[((seed >> (i % 59)) as usize + i * 7) % WORDS.len()])
        .collect();
    Ok(Heard { seconds, words })
}

enum Container {
    Wav,
    Other,
}

fn container(bytes: &[u8]) -> Option<Container> {
    let starts = |magic: &[u8]| bytes.starts_with(magic);
    if starts(b"RIFF") && bytes.get(8..12) == Some(b"WAVE") {
        return Some(Container::Wav);
    }
    let mp3_frame = bytes.len() > 1 && bytes[0] == 0xFF && bytes[1] & 0xE0 == 0xE0;
    let mp4 = bytes.get(4..8) == Some(b"ftyp");
    let other = starts(b"fLaC")
        || starts(b"OggS")
        || starts(b"ID3")
        || starts(&[0x1A, 0x45, 0xDF, 0xA3])
        || mp3_frame
        || mp4;
    other.then_some(Container::Other)
}

/// A WAV file's length in seconds and whether every sample is zero, from its `fmt `
/// and `data` chunks.
fn wav(bytes: &[u8]) -> Result<(f64, bool), ApiError> {
    let broken = || ApiError::InvalidAudio;
    let mut at = 12;
    let mut rate_and_frame = None;
    while at + 8 <= bytes.len() {
        let id = &bytes[at..at + 4];
        let size =
            u32::from_le_bytes(bytes[at + 4..at + 8].try_into().map_err(|_| broken())?) as usize;
        let body = bytes.get(at + 8..at + 8 + size).ok_or_else(broken)?;
        match id {
            b"fmt " if size >= 16 => {
                let channels = u16::from_le_bytes([body[2], body[3]]);
                let rate = u32::from_le_bytes([body[4], body[5], body[6], body[7]]);
                let bits = u16::from_le_bytes([body[14], body[15]]);
                let frame = usize::from(channels) * usize::from(bits).div_ceil(8);
                if rate == 0 || frame == 0 {
                    return Err(broken());
                }
                rate_and_frame = Some((rate, frame));
            }
            b"data" => {
                let (rate, frame) = rate_and_frame.ok_or_else(broken)?;
                let seconds = (size / frame) as f64 / f64::from(rate);
                return Ok((seconds, body.iter().all(|b| *b == 0)));
            }
            _ => {}
        }
        at += 8 + size + size % 2;
    }
    Err(broken())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wav_of(samples: &[i16], rate: u32) -> Vec<u8> {
        let data = (samples.len() * 2) as u32;
        let mut bytes = b"RIFF".to_vec();
        bytes.extend_from_slice(&(36 + data).to_le_bytes());
        bytes.extend_from_slice(b"WAVEfmt ");
        bytes.extend_from_slice(&16u32.to_le_bytes());
        bytes.extend_from_slice(&[1, 0, 1, 0]);
        bytes.extend_from_slice(&rate.to_le_bytes());
        bytes.extend_from_slice(&(rate * 2).to_le_bytes());
        bytes.extend_from_slice(&[2, 0, 16, 0]);
        bytes.extend_from_slice(b"data");
        bytes.extend_from_slice(&data.to_le_bytes());
        samples
            .iter()
            .for_each(|s| bytes.extend_from_slice(&s.to_le_bytes()));
        bytes
    }

    #[test]
    fn a_wav_file_is_heard_for_its_length_and_the_same_words_each_time() {
        let clip = wav_of(&[100; 16_000], 8_000);
        let heard = hear(&clip).unwrap();
        assert_eq!(heard.seconds, 2.0);
        assert_eq!(heard.words.len(), 4);
        assert_eq!(hear(&clip).unwrap(), heard);
    }

    #[test]
    fn silence_is_heard_as_no_words() {
        assert!(hear(&wav_of(&[0; 8_000], 8_000)).unwrap().words.is_empty());
    }

    #[test]
    fn a_file_that_is_not_audio_is_refused() {
        assert_eq!(hear(b"hello"), Err(ApiError::InvalidFileFormat(SUPPORTED)));
        assert_eq!(hear(b""), Err(ApiError::InvalidFileFormat(SUPPORTED)));
        assert_eq!(hear(b"RIFF\0\0\0\0WAVEjunk"), Err(ApiError::InvalidAudio));
    }
}
