//! `context_image_b64`: base64 decoding and image type sniffing from the bytes alone.

use base64::Engine as _;
use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};

use super::issues::Issues;
use super::spec::Image;

/// The largest decoded image accepted.
pub const MAX_IMAGE_BYTES: usize = 5 * 1024 * 1024;

const CONFIG: GeneralPurposeConfig = GeneralPurposeConfig::new()
    .with_decode_padding_mode(DecodePaddingMode::Indifferent)
    .with_decode_allow_trailing_bits(true);
const STANDARD: GeneralPurpose = GeneralPurpose::new(&alphabet::STANDARD, CONFIG);
const URL_SAFE: GeneralPurpose = GeneralPurpose::new(&alphabet::URL_SAFE, CONFIG);

/// Decodes base64 image data (standard or URL-safe alphabet, padded or not, with an optional
/// `data:image/…;base64,` prefix and any whitespace) and sniffs its type from magic bytes;
/// the prefix's claimed type is not trusted.
pub fn decode_image(input: &str, path: &str, issues: &mut Issues) -> Option<Image> {
    let mut data = input.trim();
    if data
        .as_bytes()
        .get(..5)
        .is_some_and(|p| p.eq_ignore_ascii_case(b"data:"))
    {
        match data.find(',') {
            Some(comma) if data[..comma].to_ascii_lowercase().ends_with(";base64") => {
                data = &data[comma + 1..];
            }
            _ => {
                issues.push(
                    path,
                    "must be base64 image data; a data: URL must be of the form data:image/png;base64,…",
                );
                return None;
            }
        }
    }
    // Every 4 characters hold 3 bytes: refuse what cannot fit before decoding anything.
    let significant = data.bytes().filter(|b| !b.is_ascii_whitespace()).count();
    if significant / 4 * 3 > MAX_IMAGE_BYTES + 3 {
        issues.push(
            path,
            format!(
                "the image must be at most 5 MiB decoded (got about {} KiB)",
                significant / 4 * 3 / 1024
            ),
        );
        return None;
    }
    let compact: Vec<u8> = data.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    if compact.is_empty() {
        issues.push(path, "must not be empty (expected base64 image data)");
        return None;
    }
    let engine = if compact.iter().any(|b| *b == b'-' || *b == b'_') {
        &URL_SAFE
    } else {
        &STANDARD
    };
    let bytes = match engine.decode(&compact) {
        Ok(bytes) => bytes,
        Err(e) => {
            issues.push(path, format!("must be valid base64 ({e})"));
            return None;
        }
    };
    if bytes.len() > MAX_IMAGE_BYTES {
        issues.push(
            path,
            format!(
                "the image must be at most 5 MiB decoded (got {} KiB)",
                bytes.len() / 1024
            ),
        );
        return None;
    }
    match sniff(&bytes) {
        Some(content_type) => Some(Image {
            content_type,
            bytes,
        }),
        None => {
            issues.push(
                path,
                "must be a PNG, JPEG, GIF or WebP image (the decoded bytes are none of these)",
            );
            None
        }
    }
}

/// The image type from the first bytes, or `None` for anything but PNG, JPEG, GIF, WebP.
pub fn sniff(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && bytes.starts_with(b"RIFF") && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use base64::engine::general_purpose;

    use super::*;

    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

    fn decode(s: &str) -> (Option<Image>, Vec<String>) {
        let mut issues = Issues::new();
        let image = decode_image(s, "img", &mut issues);
        let messages = issues.into_vec().into_iter().map(|i| i.message).collect();
        (image, messages)
    }

    #[test]
    fn png_is_sniffed_from_its_bytes() {
        let b64 = general_purpose::STANDARD.encode(PNG);
        let (image, issues) = decode(&b64);
        assert!(issues.is_empty());
        let image = image.unwrap();
        assert_eq!(image.content_type, "image/png");
        assert_eq!(image.bytes, PNG);
    }

    #[test]
    fn data_url_prefix_whitespace_and_missing_padding_are_tolerated() {
        let jpeg = [0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10, b'J', b'F'];
        let b64 = general_purpose::STANDARD_NO_PAD.encode(jpeg);
        let wrapped = format!("data:image/png;base64,{}\n{}", &b64[..4], &b64[4..]);
        let (image, issues) = decode(&wrapped);
        assert!(issues.is_empty(), "{issues:?}");
        // The sniffed type wins over the prefix's claim.
        assert_eq!(image.unwrap().content_type, "image/jpeg");
    }

    #[test]
    fn url_safe_alphabet_is_accepted() {
        let mut gif = b"GIF89a".to_vec();
        gif.extend([0xFB, 0xFF, 0xFE]);
        let b64 = general_purpose::URL_SAFE.encode(&gif);
        assert!(b64.contains('-') || b64.contains('_'));
        assert_eq!(decode(&b64).0.unwrap().content_type, "image/gif");
    }

    #[test]
    fn webp_is_recognised() {
        let webp = b"RIFF\x10\0\0\0WEBPVP8 ";
        let b64 = general_purpose::STANDARD.encode(webp);
        assert_eq!(decode(&b64).0.unwrap().content_type, "image/webp");
    }

    #[test]
    fn text_that_is_not_base64_is_refused() {
        let (image, issues) = decode("this is not base64!");
        assert!(image.is_none());
        assert!(issues[0].starts_with("must be valid base64"), "{issues:?}");
    }

    #[test]
    fn other_file_types_are_refused() {
        let b64 = general_purpose::STANDARD.encode(b"%PDF-1.7 hello");
        let (image, issues) = decode(&b64);
        assert!(image.is_none());
        assert!(issues[0].starts_with("must be a PNG, JPEG, GIF or WebP image"));
    }

    #[test]
    fn images_over_5_mib_are_refused_before_decoding() {
        let big = "A".repeat(8 * 1024 * 1024);
        let (image, issues) = decode(&big);
        assert!(image.is_none());
        assert!(issues[0].starts_with("the image must be at most 5 MiB"));
    }

    #[test]
    fn a_data_url_without_base64_is_refused() {
        let (image, issues) = decode("data:image/svg+xml,<svg/>");
        assert!(image.is_none());
        assert_eq!(issues.len(), 1);
    }

    #[test]
    fn non_ascii_text_is_refused_without_panicking() {
        let (image, issues) = decode("日本語のテキスト");
        assert!(image.is_none());
        assert_eq!(issues.len(), 1);
    }
}
