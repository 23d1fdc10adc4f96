//! The object file format: a fixed 16-byte header followed by the payload.
//!
//! ```text
//! offset  size  field
//! 0       4     magic "RWOB"
//! 4       1     object format version (OBJECT_VERSION = 1)
//! 5       1     codec: 0 = raw, 1 = zstd (one zstd frame)
//! 6       2     reserved, MUST be zero
//! 8       8     uncompressed length, u64 little-endian
//! 16      ...   payload (the content itself, or its zstd frame)
//! ```
//!
//! The uncompressed length lets a reader bound its allocation before decompressing and
//! detect truncation of raw payloads without trusting the compressed stream.

use std::cell::RefCell;
use std::io::{self, Read, Write};

use super::object_id::ObjectId;

pub(crate) const MAGIC: &[u8; 4] = b"RWOB";
pub(crate) const OBJECT_VERSION: u8 = 1;
pub(crate) const HEADER_LEN: usize = 16;

/// zstd level 2. Compression is two thirds of a cold snapshot's CPU time;
/// on the benchmark corpora level 2 is 8-9 % faster than zstd's default 3
/// for a store 1.4 % larger (level 1: another 2 % faster, 2.6 % larger).
const ZSTD_LEVEL: i32 = 2;

/// Below this, a zstd frame's own overhead (magic, frame header, block header) means it
/// essentially never beats raw, so don't spend a compression call on it.
const MIN_COMPRESS_LEN: usize = 32;

/// Objects up to this size are decompressed in one call into a buffer of the exact declared
/// size. Larger ones are streamed, so a corrupt length field can never make us allocate
/// more than the stream actually produces.
const BULK_DECOMPRESS_MAX: u64 = 64 << 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Codec {
    Raw = 0,
    Zstd = 1,
}

thread_local! {
    // Reused per thread: creating a zstd context allocates several hundred KiB, and puts
    // happen on rayon / walker threads thousands of times per snapshot.
    static COMPRESSOR: RefCell<Option<zstd::bulk::Compressor<'static>>> = const { RefCell::new(None) };
    static DECOMPRESSOR: RefCell<Option<zstd::bulk::Decompressor<'static>>> = const { RefCell::new(None) };
}

/// Builds the header for a payload of `codec` whose content is `len` bytes long.
pub(crate) fn header(codec: Codec, len: u64) -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[0..4].copy_from_slice(MAGIC);
    h[4] = OBJECT_VERSION;
    h[5] = codec as u8;
    h[8..16].copy_from_slice(&len.to_le_bytes());
    h
}

/// Compresses `bytes` when zstd makes them smaller; `None` means store raw.
pub(crate) fn compress(bytes: &[u8]) -> Option<Vec<u8>> {
    if bytes.len() < MIN_COMPRESS_LEN {
        return None;
    }
    COMPRESSOR.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            // A context we cannot create just means this object is stored raw.
            *slot = zstd::bulk::Compressor::new(ZSTD_LEVEL).ok();
        }
        let compressor = slot.as_mut()?;
        // Capacity one byte short of the input: if the frame doesn't fit, it wouldn't have
        // saved space, and zstd reports "destination too small" instead of finishing.
        let mut out = Vec::with_capacity(bytes.len() - 1);
        match compressor.compress_to_buffer(bytes, &mut out) {
            Ok(_) if out.len() < bytes.len() => Some(out),
            _ => None,
        }
    })
}

/// One zstd frame written piece by piece, for content too large to hold in
/// memory (its compressed copy alone was as large as the content). Same
/// level as [`compress`]; the content length is pledged up front, so the
/// frame header records it as a one-shot frame does. The frame's bytes may
/// differ from [`compress`]'s for the same content (buffering decides where
/// blocks end), which readers never depend on: objects are named by their
/// uncompressed content.
pub(crate) struct FrameWriter<W: Write> {
    encoder: zstd::stream::write::Encoder<'static, Counted<W>>,
}

/// A writer that counts what went through it.
struct Counted<W: Write> {
    inner: W,
    bytes: u64,
}

impl<W: Write> Write for Counted<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

impl<W: Write> FrameWriter<W> {
    /// A frame for `len` bytes of content, written to `out`. Finishing it
    /// after any other number of bytes fails.
    pub(crate) fn new(out: W, len: u64) -> io::Result<FrameWriter<W>> {
        let mut encoder = zstd::stream::write::Encoder::new(
            Counted {
                inner: out,
                bytes: 0,
            },
            ZSTD_LEVEL,
        )?;
        encoder.set_pledged_src_size(Some(len))?;
        Ok(FrameWriter { encoder })
    }

    pub(crate) fn write_all(&mut self, content: &[u8]) -> io::Result<()> {
        self.encoder.write_all(content)
    }

    /// Frame bytes handed to the writer so far (the encoder holds back up
    /// to a block): a lower bound of the frame's final length.
    pub(crate) fn written(&self) -> u64 {
        self.encoder.get_ref().bytes
    }

    /// Ends the frame; its whole length.
    pub(crate) fn finish(self) -> io::Result<u64> {
        Ok(self.encoder.finish()?.bytes)
    }
}

/// Why an object file could not be decoded. Every case is reported as `Corrupt`; the
/// distinction only serves tests and debugging.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum DecodeError {
    Header,
    Length,
    Stream,
    Hash,
}

/// Parsed header: codec and declared uncompressed length.
pub(crate) fn parse_header(h: &[u8]) -> Result<(Codec, u64), DecodeError> {
    if h.len() < HEADER_LEN || &h[0..4] != MAGIC || h[4] != OBJECT_VERSION || h[6..8] != [0, 0] {
        return Err(DecodeError::Header);
    }
    let codec = match h[5] {
        0 => Codec::Raw,
        1 => Codec::Zstd,
        _ => return Err(DecodeError::Header),
    };
    let mut len = [0u8; 8];
    len.copy_from_slice(&h[8..16]);
    Ok((codec, u64::from_le_bytes(len)))
}

/// Turns a payload back into content and verifies it hashes to `id`.
pub(crate) fn decode_payload(
    id: &ObjectId,
    codec: Codec,
    len: u64,
    payload: Vec<u8>,
) -> Result<Vec<u8>, DecodeError> {
    let content = match codec {
        Codec::Raw => {
            if payload.len() as u64 != len {
                return Err(DecodeError::Length);
            }
            payload
        }
        Codec::Zstd => decompress(&payload, len)?,
    };
    if ObjectId::of(&content) != *id {
        return Err(DecodeError::Hash);
    }
    Ok(content)
}

fn decompress(payload: &[u8], len: u64) -> Result<Vec<u8>, DecodeError> {
    let out = if len <= BULK_DECOMPRESS_MAX {
        // `len` fits usize: it is at most 64 MiB.
        let cap = len as usize;
        DECOMPRESSOR.with(|cell| {
            let mut slot = cell.borrow_mut();
            if slot.is_none() {
                *slot = zstd::bulk::Decompressor::new().ok();
            }
            match slot.as_mut() {
                // Fails if the frame would produce more than `cap` bytes.
                Some(d) => d.decompress(payload, cap).map_err(|_| DecodeError::Stream),
                None => stream_decompress(payload, len),
            }
        })?
    } else {
        stream_decompress(payload, len)?
    };
    if out.len() as u64 != len {
        return Err(DecodeError::Length);
    }
    Ok(out)
}

/// Decompresses reading at most `len + 1` bytes of output, growing the buffer as output
/// actually arrives, so memory is bounded by what the stream really contains.
fn stream_decompress(payload: &[u8], len: u64) -> Result<Vec<u8>, DecodeError> {
    let decoder =
        zstd::stream::read::Decoder::with_buffer(payload).map_err(|_| DecodeError::Stream)?;
    let mut out = Vec::new();
    decoder
        .take(len.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|_| DecodeError::Stream)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(content: &[u8]) -> (Codec, Vec<u8>) {
        let id = ObjectId::of(content);
        let (codec, payload) = match compress(content) {
            Some(z) => (Codec::Zstd, z),
            None => (Codec::Raw, content.to_vec()),
        };
        let h = header(codec, content.len() as u64);
        assert_eq!(parse_header(&h).unwrap(), (codec, content.len() as u64));
        let back = decode_payload(&id, codec, content.len() as u64, payload).unwrap();
        assert_eq!(back, content);
        (codec, back)
    }

    #[test]
    fn small_and_incompressible_stay_raw() {
        assert_eq!(round_trip(b"").0, Codec::Raw);
        assert_eq!(round_trip(b"hello\n").0, Codec::Raw);
        let random: Vec<u8> = (0..4096).map(|_| rand::random::<u8>()).collect();
        assert_eq!(round_trip(&random).0, Codec::Raw);
    }

    #[test]
    fn compressible_uses_zstd() {
        let text = b"fn main() { println!(\"hi\"); }\n".repeat(1000);
        assert_eq!(round_trip(&text).0, Codec::Zstd);
    }

    #[test]
    fn a_streamed_frame_decodes_and_holds_its_pledged_length() {
        let text = b"fn main() { println!(\"hi\"); }\n".repeat(50_000);
        let mut frame = FrameWriter::new(Vec::new(), text.len() as u64).unwrap();
        for chunk in text.chunks(100_000) {
            frame.write_all(chunk).unwrap();
        }
        let written = frame.written();
        let z = {
            let mut out = Vec::new();
            let mut frame = FrameWriter::new(&mut out, text.len() as u64).unwrap();
            frame.write_all(&text).unwrap();
            let n = frame.finish().unwrap();
            assert_eq!(n, out.len() as u64);
            out
        };
        assert!(written <= z.len() as u64);
        let id = ObjectId::of(&text);
        let back = decode_payload(&id, Codec::Zstd, text.len() as u64, z).unwrap();
        assert!(back == text);
        // Fewer or more bytes than pledged: the frame cannot be finished.
        for n in [text.len() - 1, text.len() + 1] {
            let mut frame = FrameWriter::new(Vec::new(), text.len() as u64).unwrap();
            let content = b"x".repeat(n);
            let wrote = frame.write_all(&content);
            assert!(wrote.is_err() || frame.finish().is_err(), "{n} bytes");
        }
    }

    #[test]
    fn header_rejects_garbage() {
        let good = header(Codec::Zstd, 5);
        assert!(parse_header(&good[..15]).is_err());
        for i in [0, 4, 5, 6, 7] {
            let mut bad = good;
            bad[i] ^= 0x40;
            assert_eq!(parse_header(&bad), Err(DecodeError::Header), "byte {i}");
        }
    }

    #[test]
    fn wrong_declared_length_is_rejected_without_huge_allocation() {
        let text = b"abcdefgh".repeat(10_000);
        let id = ObjectId::of(&text);
        let z = compress(&text).unwrap();
        let n = text.len() as u64;
        // Too small: the bulk decompressor refuses to overflow its buffer.
        assert!(decode_payload(&id, Codec::Zstd, n - 1, z.clone()).is_err());
        // Absurdly large: streamed, bounded by the real output, then rejected.
        assert_eq!(
            decode_payload(&id, Codec::Zstd, u64::MAX / 2, z.clone()),
            Err(DecodeError::Length)
        );
        // Raw payload shorter than declared: truncation.
        assert_eq!(
            decode_payload(&id, Codec::Raw, n + 1, text.clone()),
            Err(DecodeError::Length)
        );
        assert_eq!(decode_payload(&id, Codec::Zstd, n, z).unwrap(), text);
    }

    #[test]
    fn large_objects_stream() {
        // Above the bulk threshold: exercises the streaming path end to end.
        let big = vec![7u8; (BULK_DECOMPRESS_MAX + 10) as usize];
        let id = ObjectId::of(&big);
        let z = compress(&big).unwrap();
        assert!(z.len() < 1 << 20);
        let back = decode_payload(&id, Codec::Zstd, big.len() as u64, z).unwrap();
        assert!(back == big);
    }
}
