//! A link as a QR code on a terminal, for a phone's camera: two modules a character (the
//! upper and lower half blocks), with the standard quiet zone of four modules. The colours are
//! set (black on white) rather than left to the terminal's theme: on a dark theme, blocks in
//! the default colour would draw the code inverted, which some cameras do not read.

use qrcode::QrCode;
use qrcode::render::unicode::Dense1x2;

/// Black modules on a white ground, then back to the terminal's own colours.
const COLOURS: &str = "\x1b[30;107m";
const RESET: &str = "\x1b[0m";

/// `text` as a QR code, one terminal line per two rows of modules; `None` when it is too long
/// to be one (over about 2900 bytes: never a sayso link).
pub fn render(text: &str) -> Option<String> {
    let code = QrCode::new(text.as_bytes()).ok()?;
    let blocks = code
        .render::<Dense1x2>()
        .dark_color(Dense1x2::Dark)
        .light_color(Dense1x2::Light)
        .quiet_zone(true)
        .module_dimensions(1, 1)
        .build();
    Some(
        blocks
            .lines()
            .map(|line| format!("{COLOURS}{line}{RESET}\n"))
            .collect(),
    )
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Reads a rendered code back as a camera would: the characters as modules (a half
    /// block's upper or lower half dark), each module drawn as 4×4 pixels, then decoded.
    pub(crate) fn read_back(rendered: &str) -> String {
        let mut rows: Vec<Vec<bool>> = Vec::new();
        for line in rendered.lines() {
            let line = line.replace(COLOURS, "").replace(RESET, "");
            let (top, bottom): (Vec<bool>, Vec<bool>) = line
                .chars()
                .map(|c| match c {
                    '█' => (true, true),
                    '▀' => (true, false),
                    '▄' => (false, true),
                    ' ' => (false, false),
                    other => panic!("{other:?} is not a half block"),
                })
                .unzip();
            rows.push(top);
            rows.push(bottom);
        }
        const SCALE: usize = 4;
        let (w, h) = (rows[0].len(), rows.len());
        let mut img = rqrr::PreparedImage::prepare_from_greyscale(w * SCALE, h * SCALE, |x, y| {
            if rows[y / SCALE][x / SCALE] { 0 } else { 255 }
        });
        let grids = img.detect_grids();
        assert_eq!(grids.len(), 1, "one code in:\n{rendered}");
        grids[0].decode().expect("the code decodes").1
    }

    #[test]
    fn a_feed_link_renders_to_a_code_that_reads_back_as_the_link() {
        let link = "http://192.168.1.20:8080/inbox/AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AbCdEf";
        let rendered = render(link).unwrap();
        assert_eq!(read_back(&rendered), link);
        // The quiet zone: the first line and each line's first two characters are white.
        let first = rendered.lines().next().unwrap();
        let blank = first.replace(COLOURS, "").replace(RESET, "");
        assert!(blank.chars().all(|c| c == ' '), "{first:?}");
        for line in rendered.lines() {
            assert!(line.starts_with(&format!("{COLOURS}  ")), "{line:?}");
            assert!(line.ends_with(RESET), "{line:?}");
        }
    }

    #[test]
    fn text_too_long_for_a_code_is_none() {
        assert!(render(&"x".repeat(8000)).is_none());
    }
}
