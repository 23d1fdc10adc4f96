//! Streamed puts: content longer than `STREAM_MIN` (a file, or bytes) is
//! hashed and compressed a chunk at a time, never whole in memory, and a
//! file that changes while it is read is detected and not stored.

use std::fs::{self, File};
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;

use std::sync::atomic::Ordering;

use super::{PutOutcome, Store, STREAM_CHUNK};
use crate::durability::{rename_into_place, BATCH_SYNC};
use crate::store::codec::{self, Codec, HEADER_LEN};
use crate::store::error::StoreError;
use crate::store::object_id::{IdHasher, ObjectId};

/// Why a streamed write stopped.
pub(super) enum StreamFail {
    Source(io::Error),
    Changed,
    Store(StoreError),
}

/// Where a streamed put reads its content. A file is read at offsets, so
/// every pass starts at its beginning whatever the file position.
#[derive(Clone, Copy)]
pub(super) enum Source<'a> {
    Bytes(&'a [u8]),
    File(&'a File),
}

impl Source<'_> {
    /// Hands the content to `sink` a chunk at a time, until the end or until
    /// `sink` returns `false`, reading at most `limit + 1` bytes (one more
    /// than expected tells that a file grew). Returns how many bytes were
    /// read, `None` if `sink` stopped early.
    pub(super) fn pass(
        &self,
        buf: &mut [u8],
        limit: u64,
        mut sink: impl FnMut(&[u8]) -> Result<bool, StreamFail>,
    ) -> Result<Option<u64>, StreamFail> {
        match *self {
            Source::Bytes(bytes) => {
                for chunk in bytes.chunks(STREAM_CHUNK) {
                    if !sink(chunk)? {
                        return Ok(None);
                    }
                }
                Ok(Some(bytes.len() as u64))
            }
            Source::File(file) => {
                let mut at = 0u64;
                while at <= limit {
                    let want = usize::try_from(limit - at + 1)
                        .unwrap_or(usize::MAX)
                        .min(buf.len());
                    let n = match file.read_at(&mut buf[..want], at) {
                        Ok(0) => break,
                        Ok(n) => n,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                        Err(e) => return Err(StreamFail::Source(e)),
                    };
                    at += n as u64;
                    if !sink(&buf[..n])? {
                        return Ok(None);
                    }
                }
                Ok(Some(at))
            }
        }
    }
}

/// Writes at explicit offsets of a file (a streamed object rewinds to
/// rewrite its header and, when compression did not pay, its payload).
pub(super) struct WriteAt<'a> {
    file: &'a File,
    at: u64,
}

impl Write for WriteAt<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.file.write_at(buf, self.at)?;
        self.at += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A small file's content, read whole: `Changed` unless it is exactly `len`
/// bytes (reading stops one byte past `len`, so a file that grew
/// meanwhile costs no more memory than the one announced).
pub(super) fn read_whole(file: &File, len: u64) -> Result<Vec<u8>, StreamFail> {
    let len = usize::try_from(len).map_err(|_| StreamFail::Changed)?;
    let mut bytes = vec![0u8; len + 1];
    let mut at = 0;
    while at < bytes.len() {
        match file.read_at(&mut bytes[at..], at as u64) {
            Ok(0) => break,
            Ok(n) => at += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(StreamFail::Source(e)),
        }
    }
    if at != len {
        return Err(StreamFail::Changed);
    }
    bytes.truncate(len);
    Ok(bytes)
}

impl Store {
    /// [`Store::put_file`] of a file above [`STREAM_MIN`].
    pub(super) fn put_streamed(
        &self,
        source: Source<'_>,
        len: u64,
    ) -> Result<PutOutcome, StreamFail> {
        let mut buf = vec![0u8; STREAM_CHUNK];
        let mut hasher = IdHasher::new();
        let read = source.pass(&mut buf, len, |chunk| {
            hasher.update(chunk);
            Ok(true)
        })?;
        if read != Some(len) {
            return Err(StreamFail::Changed);
        }
        let id = hasher.id();
        if let Some(found) = self.existing(id, len) {
            return Ok(found);
        }
        let path = self.object_path(&id);
        let stored_bytes = self.write_streamed(&id, &path, source, len, &mut buf)?;
        self.remember(id, stored_bytes);
        Ok(PutOutcome {
            id,
            written: true,
            stored_bytes,
        })
    }

    /// Writes a loose object from `source`, `len` bytes that hash to `id`:
    /// header, then the content compressed as one zstd frame while it is
    /// read; if the frame is not shorter than the content (known at the
    /// latest when it ends, sooner once it has grown that long) the payload
    /// is rewritten raw from a new pass. The pass whose bytes end up in the
    /// file must hash to `id`, or it is `Changed` and nothing is renamed
    /// into place. Temp file and rename as in [`Store::write_loose`].
    /// Returns the object file's size.
    pub(super) fn write_streamed(
        &self,
        id: &ObjectId,
        path: &Path,
        source: Source<'_>,
        len: u64,
        buf: &mut Vec<u8>,
    ) -> Result<u64, StreamFail> {
        if buf.len() < STREAM_CHUNK && matches!(source, Source::File(_)) {
            buf.resize(STREAM_CHUNK, 0);
        }
        let dir = path.parent().unwrap_or(&self.objects);
        let (file, temp) = self.create_temp(dir).map_err(StreamFail::Store)?;
        let store_err =
            |e: io::Error| StreamFail::Store(StoreError::io("writing object", &temp, e));
        let result = (|| {
            let mut out = WriteAt { file: &file, at: 0 };
            out.write_all(&codec::header(Codec::Zstd, len))
                .map_err(store_err)?;
            let mut frame = codec::FrameWriter::new(out, len).map_err(store_err)?;
            let mut hasher = IdHasher::new();
            let read = source.pass(buf, len, |chunk| {
                hasher.update(chunk);
                frame.write_all(chunk).map_err(store_err)?;
                // Already as long as the content: raw it is.
                Ok(frame.written() < len)
            })?;
            let compressed = match read {
                Some(n) if n != len => return Err(StreamFail::Changed),
                Some(_) if hasher.id() != *id => return Err(StreamFail::Changed),
                Some(_) => Some(frame.finish().map_err(store_err)?).filter(|&z| z < len),
                None => {
                    // Its compression context is megabytes: not kept for
                    // the raw pass.
                    drop(frame);
                    None
                }
            };
            let payload = match compressed {
                Some(z) => z,
                None => {
                    // The header says raw; the payload is the content.
                    file.set_len(0).map_err(store_err)?;
                    let mut out = WriteAt { file: &file, at: 0 };
                    out.write_all(&codec::header(Codec::Raw, len))
                        .map_err(store_err)?;
                    let mut hasher = IdHasher::new();
                    let read = source.pass(buf, len, |chunk| {
                        hasher.update(chunk);
                        out.write_all(chunk).map_err(store_err)?;
                        Ok(true)
                    })?;
                    if read != Some(len) || hasher.id() != *id {
                        return Err(StreamFail::Changed);
                    }
                    len
                }
            };
            // As in write_loose: one syncfs in `sync` where there is one.
            if self.fsync && !BATCH_SYNC {
                file.sync_all().map_err(store_err)?;
            }
            Ok(HEADER_LEN as u64 + payload)
        })();
        drop(file);
        let stored = match result {
            Ok(n) => n,
            Err(e) => {
                let _ = fs::remove_file(&temp);
                return Err(e);
            }
        };
        rename_into_place(&temp, path).map_err(|e| {
            StreamFail::Store(StoreError::io("renaming object into place", path, e))
        })?;
        if self.fsync {
            self.dirty_dirs[usize::from(id.as_bytes()[0])].store(true, Ordering::Release);
        }
        Ok(stored)
    }
}
