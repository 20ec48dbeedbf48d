//! Newline-delimited framing with a size limit that refuses a long line without buffering it.

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Frame {
    Line(Vec<u8>),
    /// A line longer than the limit, skipped; carries its length.
    TooLarge(usize),
    Eof,
}

/// The largest line buffer a reader keeps for the next line ([`FrameReader::recycle`]).
pub(crate) const KEPT_LINE_BYTES: usize = 64 * 1024;

/// Reads frames; [`FrameReader::next`] is cancel-safe (a partly read line is kept for the next
/// call), so the connection loop may race it against other events.
pub(crate) struct FrameReader<R> {
    inner: BufReader<R>,
    max: usize,
    /// The line read so far.
    line: Vec<u8>,
    /// The length of an oversized line being skipped.
    skipped: Option<usize>,
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    pub(crate) fn new(reader: R, max: usize) -> Self {
        Self {
            inner: BufReader::with_capacity(64 * 1024, reader),
            max,
            line: Vec::new(),
            skipped: None,
        }
    }

    /// Gives back a line [`FrameReader::next`] returned, once read, so the next line is read
    /// into its buffer rather than a new one (an allocation per message less). A buffer of more
    /// than [`KEPT_LINE_BYTES`] is dropped, so one large message does not keep its memory.
    pub(crate) fn recycle(&mut self, mut line: Vec<u8>) {
        if self.line.capacity() == 0 && line.capacity() <= KEPT_LINE_BYTES {
            line.clear();
            self.line = line;
        }
    }

    /// The next non-blank line (without its `\n` / `\r\n`).
    pub(crate) async fn next(&mut self) -> std::io::Result<Frame> {
        loop {
            loop {
                // Only `fill_buf` awaits, and it is cancel-safe; what was consumed is in `self`.
                let buf = self.inner.fill_buf().await?;
                if buf.is_empty() {
                    // End of input: a last line without a newline still counts.
                    if let Some(n) = self.skipped.take() {
                        return Ok(Frame::TooLarge(n));
                    }
                    if self.line.is_empty() {
                        return Ok(Frame::Eof);
                    }
                    break;
                }
                // memchr: a byte-at-a-time search was a tenth of a pipelined call's instructions.
                let (chunk, done) = match memchr::memchr(b'\n', buf) {
                    Some(i) => (&buf[..i], Some(i + 1)),
                    None => (buf, None),
                };
                match self.skipped.as_mut() {
                    Some(n) => *n += chunk.len(),
                    None if self.line.len() + chunk.len() > self.max => {
                        self.skipped = Some(self.line.len() + chunk.len());
                        self.line = Vec::new();
                    }
                    None => self.line.extend_from_slice(chunk),
                }
                let consumed = done.unwrap_or(buf.len());
                self.inner.consume(consumed);
                if done.is_some() {
                    break;
                }
            }
            if let Some(n) = self.skipped.take() {
                return Ok(Frame::TooLarge(n));
            }
            if self.line.iter().all(u8::is_ascii_whitespace) {
                // A blank line: nothing to give, and its buffer is kept for the next.
                self.line.clear();
                continue;
            }
            let mut line = std::mem::take(&mut self.line);
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            return Ok(Frame::Line(line));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn all(input: &[u8], max: usize) -> Vec<Frame> {
        let mut r = FrameReader::new(input, max);
        let mut out = Vec::new();
        loop {
            let f = r.next().await.unwrap();
            if f == Frame::Eof {
                return out;
            }
            out.push(f);
        }
    }

    #[tokio::test]
    async fn splits_and_skips_blank_lines() {
        let frames = all(b"a\r\n\n  \nbb\nc", 10).await;
        assert_eq!(
            frames,
            vec![
                Frame::Line(b"a".to_vec()),
                Frame::Line(b"bb".to_vec()),
                Frame::Line(b"c".to_vec())
            ]
        );
    }

    /// A line given back is read into again (no new buffer), unless it is larger than
    /// `KEPT_LINE_BYTES`; what is read is the next line only.
    #[tokio::test]
    async fn a_recycled_line_buffer_is_reused_up_to_its_bound() {
        let big = vec![b'y'; KEPT_LINE_BYTES + 1];
        let mut input = b"first line\nsecond\n".to_vec();
        input.extend_from_slice(&big);
        input.extend_from_slice(b"\nlast\n");
        let mut r = FrameReader::new(&input[..], 2 * KEPT_LINE_BYTES);
        let Frame::Line(first) = r.next().await.unwrap() else {
            panic!("a line")
        };
        let capacity = first.capacity();
        r.recycle(first);
        assert_eq!(r.line.capacity(), capacity, "the buffer given back is kept");
        let Frame::Line(second) = r.next().await.unwrap() else {
            panic!("a line")
        };
        assert_eq!(second, b"second");
        assert_eq!(second.capacity(), capacity, "the next line is read into it");
        r.recycle(second);
        let Frame::Line(large) = r.next().await.unwrap() else {
            panic!("a line")
        };
        assert_eq!(large.len(), KEPT_LINE_BYTES + 1);
        r.recycle(large);
        assert_eq!(r.line.capacity(), 0, "a buffer over the bound is not kept");
        assert_eq!(r.next().await.unwrap(), Frame::Line(b"last".to_vec()));
    }

    #[tokio::test]
    async fn long_line_is_refused_and_reading_goes_on() {
        let mut input = vec![b'x'; 100];
        input.extend_from_slice(b"\nok\n");
        let frames = all(&input, 10).await;
        assert_eq!(frames, vec![Frame::TooLarge(100), Frame::Line(b"ok".to_vec())]);
    }

    #[tokio::test]
    async fn a_cancelled_read_keeps_the_partial_line() {
        use tokio::io::AsyncWriteExt;
        let (mut w, r) = tokio::io::duplex(64);
        let mut reader = FrameReader::new(r, 100);
        w.write_all(b"{\"a\":").await.unwrap();
        // The read is cancelled mid-line, as the connection loop's select may do.
        let cancelled = tokio::time::timeout(std::time::Duration::from_millis(20), reader.next()).await;
        assert!(cancelled.is_err());
        w.write_all(b"1}\n").await.unwrap();
        assert_eq!(reader.next().await.unwrap(), Frame::Line(b"{\"a\":1}".to_vec()));
    }
}
