//! Stdio framing: pi's strict JSONL.
//!
//! This layer only knows about lines of bytes; what a line means (JSON-RPC, pi command,
//! garbage) is decided by `rpc`. Keeping the codec apart from the envelope logic (as
//! rust-analyzer's lsp-server does) lets each be tested on its own.
//!
//! Framing rules (docs/protocol.md "Transport"):
//! - split on `\n` only, strip ONE trailing `\r`;
//! - U+2028 / U+2029 are ordinary characters (we work on bytes, so they never split);
//! - a final line without `\n` is still yielded at EOF;
//! - empty and whitespace-only lines are skipped;
//! - a line longer than the maximum is never buffered whole: its bytes are discarded up to
//!   the next `\n` and reported as [`Line::TooLong`] so the server can answer and go on.

use std::io;

use serde::Serialize;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

/// Default maximum length of one input line, in bytes (excluding the terminator).
pub const DEFAULT_MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// Read buffer size; big enough that typical requests arrive in one `fill_buf`.
const READ_BUFFER_BYTES: usize = 64 * 1024;

/// One unit of input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// The line's bytes without the `\n` and without one trailing `\r`. Not validated as
    /// UTF-8: that is the parser's problem (it answers with a parse error).
    Data(Vec<u8>),
    /// A line exceeded the maximum and was discarded. `len` is its length in bytes, counted
    /// the same way as for `Data` (terminator and one trailing `\r` excluded).
    TooLong { len: usize },
}

/// Splits an async byte stream into [`Line`]s.
#[derive(Debug)]
pub struct LineReader<R> {
    inner: BufReader<R>,
    max_line_bytes: usize,
    /// Bytes of the current, not yet terminated line.
    buf: Vec<u8>,
    /// `Some(bytes seen so far)` while skipping the rest of an over-long line.
    discarding: Option<usize>,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    /// A reader with the default maximum line length (64 MiB).
    pub fn new(inner: R) -> Self {
        Self::with_max_line_bytes(inner, DEFAULT_MAX_LINE_BYTES)
    }

    /// A reader that rejects lines longer than `max_line_bytes`.
    pub fn with_max_line_bytes(inner: R, max_line_bytes: usize) -> Self {
        Self {
            inner: BufReader::with_capacity(READ_BUFFER_BYTES, inner),
            max_line_bytes,
            buf: Vec::new(),
            discarding: None,
        }
    }

    /// The next non-blank line, or `None` at EOF.
    ///
    /// Cancel-safe (so it can sit in a `select!`): a partial line is kept in `self` and
    /// bytes are consumed from the buffer only after they have been copied or counted.
    pub async fn next_line(&mut self) -> io::Result<Option<Line>> {
        loop {
            let available = self.inner.fill_buf().await?;
            if available.is_empty() {
                // EOF: whatever is pending is the final, unterminated line.
                return Ok(self.finish_line());
            }
            let (chunk, terminated) = match available.iter().position(|&b| b == b'\n') {
                Some(i) => (&available[..i], true),
                None => (available, false),
            };
            let chunk_len = chunk.len();
            match &mut self.discarding {
                Some(seen) => *seen = seen.saturating_add(chunk_len),
                None => {
                    // One byte of slack: a line of exactly `max` bytes followed by "\r\n"
                    // is legal, and we only learn the `\r` was the last byte at the `\n`.
                    let limit = self.max_line_bytes.saturating_add(1);
                    if self.buf.len() + chunk_len > limit {
                        self.discarding = Some(self.buf.len() + chunk_len);
                        // Release the memory of the partial line right away.
                        self.buf = Vec::new();
                    } else {
                        self.buf.extend_from_slice(chunk);
                    }
                }
            }
            let consumed = if terminated { chunk_len + 1 } else { chunk_len };
            self.inner.consume(consumed);
            if terminated {
                if let Some(line) = self.finish_line() {
                    return Ok(Some(line));
                }
            }
        }
    }

    /// Turns the pending bytes into a line; `None` when there is nothing worth yielding.
    fn finish_line(&mut self) -> Option<Line> {
        if let Some(seen) = self.discarding.take() {
            // The one-byte slack above may have been a `\r`; we no longer have the bytes,
            // so report the raw count. It is only used in the error message.
            return Some(Line::TooLong { len: seen });
        }
        let mut line = std::mem::take(&mut self.buf);
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        if line.len() > self.max_line_bytes {
            return Some(Line::TooLong { len: line.len() });
        }
        if line.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r')) {
            return None;
        }
        Some(Line::Data(line))
    }
}

/// Writes one JSON message per line: compact JSON, one `\n`, flushed.
#[derive(Debug)]
pub struct LineWriter<W> {
    inner: W,
}

impl<W: AsyncWrite + Unpin> LineWriter<W> {
    pub fn new(inner: W) -> Self {
        Self { inner }
    }

    /// Serializes `message` compactly and writes it as one line.
    pub async fn write_json<T: Serialize + ?Sized>(&mut self, message: &T) -> io::Result<()> {
        let bytes = serde_json::to_vec(message).map_err(io::Error::other)?;
        self.write_line(bytes).await
    }

    /// Writes already-serialized compact JSON plus `\n` and flushes, so a host that waits
    /// for a reply never waits on our buffer. The caller guarantees `json` holds no raw
    /// newline (compact JSON from serde_json never does: newlines in strings are escaped).
    pub async fn write_line(&mut self, mut json: Vec<u8>) -> io::Result<()> {
        json.push(b'\n');
        self.inner.write_all(&json).await?;
        self.inner.flush().await
    }

    pub async fn flush(&mut self) -> io::Result<()> {
        self.inner.flush().await
    }

    pub fn into_inner(self) -> W {
        self.inner
    }
}

#[cfg(test)]
mod tests {
    use std::pin::Pin;
    use std::task::{Context, Poll};

    use tokio::io::ReadBuf;

    use super::*;

    /// Yields its data one byte per `poll_read`, to exercise lines split across reads.
    struct ByteByByte {
        data: Vec<u8>,
        pos: usize,
    }

    impl AsyncRead for ByteByByte {
        fn poll_read(
            mut self: Pin<&mut Self>,
            _cx: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<io::Result<()>> {
            if self.pos < self.data.len() && buf.remaining() > 0 {
                let byte = self.data[self.pos];
                buf.put_slice(&[byte]);
                self.pos += 1;
            }
            Poll::Ready(Ok(()))
        }
    }

    async fn lines_from<R: AsyncRead + Unpin>(reader: R, max: usize) -> Vec<Line> {
        let mut reader = LineReader::with_max_line_bytes(reader, max);
        let mut out = Vec::new();
        while let Some(line) = reader.next_line().await.unwrap() {
            out.push(line);
        }
        out
    }

    async fn lines(input: &[u8], max: usize) -> Vec<Line> {
        lines_from(input, max).await
    }

    fn data(s: &str) -> Line {
        Line::Data(s.as_bytes().to_vec())
    }

    #[tokio::test]
    async fn splits_on_newline_only() {
        assert_eq!(
            lines(b"a\nb\nc\n", 100).await,
            vec![data("a"), data("b"), data("c")]
        );
    }

    #[tokio::test]
    async fn strips_exactly_one_trailing_cr() {
        assert_eq!(
            lines(b"a\r\nb\r\r\nc\n", 100).await,
            vec![data("a"), data("b\r"), data("c")]
        );
    }

    #[tokio::test]
    async fn lone_cr_inside_a_line_is_kept() {
        assert_eq!(
            lines(b"a\rb\n\r\n", 100).await,
            vec![data("a\rb")],
            "a line that is only \\r is blank after stripping and skipped"
        );
    }

    #[tokio::test]
    async fn unicode_line_separators_do_not_split() {
        let input = "{\"s\":\"x\u{2028}y\u{2029}z\"}\n";
        assert_eq!(
            lines(input.as_bytes(), 100).await,
            vec![data("{\"s\":\"x\u{2028}y\u{2029}z\"}")]
        );
    }

    #[tokio::test]
    async fn final_unterminated_line_is_yielded() {
        assert_eq!(lines(b"a\nlast", 100).await, vec![data("a"), data("last")]);
        assert_eq!(lines(b"last\r", 100).await, vec![data("last")]);
    }

    #[tokio::test]
    async fn blank_lines_are_skipped() {
        assert_eq!(lines(b"\n\n  \n\t\r\na\n \r\n", 100).await, vec![data("a")]);
        assert_eq!(lines(b"", 100).await, vec![]);
        assert_eq!(lines(b"   ", 100).await, vec![]);
    }

    #[tokio::test]
    async fn invalid_utf8_and_nul_are_passed_through() {
        assert_eq!(
            lines(b"\xff\x00\xfe\n", 100).await,
            vec![Line::Data(vec![0xff, 0, 0xfe])]
        );
    }

    #[tokio::test]
    async fn over_long_line_is_skipped_and_reading_continues() {
        let mut input = vec![b'x'; 50];
        input.extend_from_slice(b"\nok\n");
        assert_eq!(
            lines(&input, 10).await,
            vec![Line::TooLong { len: 50 }, data("ok")]
        );
    }

    #[tokio::test]
    async fn over_long_final_line_at_eof() {
        assert_eq!(
            lines(b"ok\nxxxxxxxxxxxxxxxxxxxx", 10).await,
            vec![data("ok"), Line::TooLong { len: 20 }]
        );
    }

    #[tokio::test]
    async fn over_long_line_is_not_buffered_whole() {
        // 1 MiB line with a 16-byte limit, read in 64 KiB chunks: the pending buffer must
        // never grow past the limit (checked indirectly: the reader's buf is released).
        let mut input = vec![b'y'; 1 << 20];
        input.extend_from_slice(b"\n{}\n");
        let mut reader = LineReader::with_max_line_bytes(&input[..], 16);
        assert_eq!(
            reader.next_line().await.unwrap(),
            Some(Line::TooLong { len: 1 << 20 })
        );
        assert!(reader.buf.capacity() <= 64 * 1024);
        assert_eq!(reader.next_line().await.unwrap(), Some(data("{}")));
        assert_eq!(reader.next_line().await.unwrap(), None);
    }

    #[tokio::test]
    async fn max_size_boundary_is_exact() {
        assert_eq!(lines(b"0123456789\n", 10).await, vec![data("0123456789")]);
        assert_eq!(
            lines(b"0123456789\r\n", 10).await,
            vec![data("0123456789")],
            "the stripped \\r does not count"
        );
        assert_eq!(
            lines(b"0123456789a\n", 10).await,
            vec![Line::TooLong { len: 11 }]
        );
        assert_eq!(
            lines(b"0123456789a", 10).await,
            vec![Line::TooLong { len: 11 }]
        );
        assert_eq!(
            lines(b"0123456789\r\r\n", 10).await,
            vec![Line::TooLong { len: 12 }]
        );
    }

    #[tokio::test]
    async fn line_split_across_single_byte_reads() {
        let input = b"{\"a\":1}\r\n\n{\"b\":\"\xe2\x80\xa8\"}\nab".to_vec();
        let reader = ByteByByte {
            data: input,
            pos: 0,
        };
        assert_eq!(
            lines_from(reader, 100).await,
            vec![data("{\"a\":1}"), data("{\"b\":\"\u{2028}\"}"), data("ab")]
        );
        let reader = ByteByByte {
            data: b"0123456789a\nok\n".to_vec(),
            pos: 0,
        };
        assert_eq!(
            lines_from(reader, 10).await,
            vec![Line::TooLong { len: 11 }, data("ok")]
        );
    }

    #[tokio::test]
    async fn line_split_across_duplex_writes() {
        let (mut client, server) = tokio::io::duplex(4);
        let writer = tokio::spawn(async move {
            for piece in [&b"{\"k\""[..], b":", b"\"v\"}", b"\r", b"\n", b"tail"] {
                client.write_all(piece).await.unwrap();
            }
        });
        let got = lines_from(server, 100).await;
        writer.await.unwrap();
        assert_eq!(got, vec![data("{\"k\":\"v\"}"), data("tail")]);
    }

    #[tokio::test]
    async fn writer_emits_compact_json_and_one_newline_per_message() {
        let mut out = Vec::new();
        {
            let mut writer = LineWriter::new(&mut out);
            writer
                .write_json(&serde_json::json!({"a": [1, 2], "s": "line\nbreak\u{2028}"}))
                .await
                .unwrap();
            writer.write_line(b"{}".to_vec()).await.unwrap();
        }
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{\"a\":[1,2],\"s\":\"line\\nbreak\u{2028}\"}\n{}\n"
        );
    }
}
