//! Text someone else wrote, made safe to show on a terminal. A remote's
//! manifest, a pulled session's lines and a hook's payload are written by
//! whoever could write there (docs/remote.md "What a remote can and cannot
//! do to you"): an escape sequence in a session id or a directory name must
//! not retitle the window, clear the screen or hide text when it is printed.
//! Every control character (C0, DEL, C1) and the bidirectional overrides
//! are shown as `\u{..}` escapes; everything else is left as it is.

use std::borrow::Cow;

/// Whether `c` would act on a terminal rather than show.
fn acts(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with every character that would act on a terminal escaped.
pub fn printable(text: &str) -> Cow<'_, str> {
    if !text.chars().any(acts) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if acts(c) {
            out.push_str(&c.escape_unicode().to_string());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A writer that passes what is written through [`printable`], line breaks
/// and tabs kept: the log's writer, so a field that quotes a remote or a
/// payload cannot act on the terminal either.
pub struct PrintableWriter<W>(pub W);

impl<W: std::io::Write> std::io::Write for PrintableWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        let mut out = String::with_capacity(text.len());
        for line in text.split_inclusive(['\n', '\t']) {
            let (body, end) = match line.strip_suffix(['\n', '\t']) {
                Some(body) => (body, &line[body.len()..]),
                None => (line, ""),
            };
            out.push_str(&printable(body));
            out.push_str(end);
        }
        self.0.write_all(out.as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_what_acts_and_leaves_the_rest() {
        assert!(matches!(printable("plain/path é 名"), Cow::Borrowed(_)));
        assert_eq!(
            printable("a\u{1b}]0;pwned\u{7}b"),
            "a\\u{1b}]0;pwned\\u{7}b"
        );
        assert_eq!(printable("x\u{9b}2Jy"), "x\\u{9b}2Jy");
        assert_eq!(printable("t\u{202e}xt\n"), "t\\u{202e}xt\\u{a}");
    }

    #[test]
    fn the_writer_keeps_line_breaks_and_tabs() {
        use std::io::Write;
        let mut w = PrintableWriter(Vec::new());
        w.write_all(b"a\tb\x1b[2J\nc\n").unwrap();
        assert_eq!(String::from_utf8(w.0).unwrap(), "a\tb\\u{1b}[2J\nc\n");
    }
}
