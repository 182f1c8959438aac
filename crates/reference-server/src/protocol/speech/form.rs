//! `multipart/form-data` bodies (RFC 7578), read strictly: the boundary from the
//! content type, each part's name (and a file's name and type) from its headers.

use super::super::ApiError;

/// One part of a form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Part<'a> {
    pub(super) name: String,
    /// The file name, where the part is a file.
    pub(super) file_name: Option<String>,
    pub(super) content_type: Option<String>,
    pub(super) body: &'a [u8],
}

/// The parts of `body`, sent with `content_type`.
pub(super) fn parts<'a>(
    content_type: Option<&str>,
    body: &'a [u8],
) -> Result<Vec<Part<'a>>, ApiError> {
    let boundary = boundary(content_type)?;
    let delimiter = format!("--{boundary}");
    let mut rest = body
        .strip_prefix(delimiter.as_bytes())
        .ok_or_else(|| malformed("the body does not start with the boundary"))?;
    let mut parts = Vec::new();
    loop {
        if rest.starts_with(b"--") {
            return Ok(parts);
        }
        rest = rest
            .strip_prefix(b"\r\n")
            .ok_or_else(|| malformed("a boundary is not followed by CRLF"))?;
        let end = find(rest, format!("\r\n{delimiter}").as_bytes())
            .ok_or_else(|| malformed("a part has no closing boundary"))?;
        parts.push(part(&rest[..end])?);
        rest = &rest[end + 2 + delimiter.len()..];
    }
}

fn boundary(content_type: Option<&str>) -> Result<String, ApiError> {
    let content_type = content_type.unwrap_or_default();
    let mut params = content_type.split(';');
    let media_type = params.next().unwrap_or_default().trim();
    if !media_type.eq_ignore_ascii_case("multipart/form-data") {
        return Err(ApiError::UnsupportedMediaType(
            Some(content_type.to_owned()).filter(|c| !c.is_empty()),
        ));
    }
    params
        .filter_map(|p| p.trim().split_once('='))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("boundary"))
        .map(|(_, value)| value.trim().trim_matches('"').to_owned())
        .filter(|b| !b.is_empty())
        .ok_or_else(|| malformed("the content type names no boundary"))
}

fn part(raw: &[u8]) -> Result<Part<'_>, ApiError> {
    let split = find(raw, b"\r\n\r\n").ok_or_else(|| malformed("a part has no header end"))?;
    let headers = std::str::from_utf8(&raw[..split])
        .map_err(|_| malformed("a part's headers are not UTF-8"))?;
    let mut name = None;
    let mut file_name = None;
    let mut content_type = None;
    for line in headers.split("\r\n") {
        let Some((header, value)) = line.split_once(':') else {
            continue;
        };
        match header.trim().to_ascii_lowercase().as_str() {
            "content-disposition" => {
                name = parameter(value, "name");
                file_name = parameter(value, "filename");
            }
            "content-type" => content_type = Some(value.trim().to_owned()),
            _ => {}
        }
    }
    Ok(Part {
        name: name.ok_or_else(|| malformed("a part has no name"))?,
        file_name,
        content_type,
        body: &raw[split + 4..],
    })
}

/// A `name="value"` parameter of a header.
fn parameter(header: &str, name: &str) -> Option<String> {
    header.split(';').find_map(|p| {
        let (key, value) = p.trim().split_once('=')?;
        (key.trim() == name).then(|| value.trim().trim_matches('"').to_owned())
    })
}

/// Where `needle` first occurs in `haystack`: candidates found by its first byte, then
/// compared whole (a 25 MiB upload is scanned once, not once per offset).
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    let (first, rest) = needle.split_first()?;
    let mut from = 0;
    while let Some(offset) = haystack[from..].iter().position(|b| b == first) {
        let at = from + offset;
        if haystack[at + 1..].starts_with(rest) {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

fn malformed(why: &str) -> ApiError {
    ApiError::MalformedForm(why.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    const TYPE: &str = "multipart/form-data; boundary=XyZ";

    #[test]
    fn a_form_reads_as_its_parts() {
        let body = b"--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.wav\"\r\nContent-Type: audio/wav\r\n\r\nRIFF\r\n--XyZ\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nm\r\n--XyZ--\r\n";
        let parts = parts(Some(TYPE), body).unwrap();
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0].file_name.as_deref(), Some("a.wav"));
        assert_eq!(parts[0].content_type.as_deref(), Some("audio/wav"));
        assert_eq!(parts[0].body, b"RIFF");
        assert_eq!(
            (parts[1].name.as_str(), parts[1].body),
            ("model", &b"m"[..])
        );
    }

    #[test]
    fn anything_else_is_a_client_mistake() {
        assert!(matches!(
            parts(Some("application/json"), b"{}"),
            Err(ApiError::UnsupportedMediaType(_))
        ));
        for body in [
            &b"no boundary"[..],
            b"--XyZ\r\nno header end",
            b"--XyZ\r\n\r\nunclosed",
        ] {
            assert!(matches!(
                parts(Some(TYPE), body),
                Err(ApiError::MalformedForm(_))
            ));
        }
    }
}
