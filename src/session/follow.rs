//! A session file followed by a reader that does not write it (the
//! background pusher, docs/remote.md "Continuous push"): its header and
//! index kept between looks, each look reading only the whole lines
//! appended since. The file is append-only (docs/architecture.md rule 3),
//! but a gc or a repair may replace or shorten it: a file that is not the
//! one read (device and inode), is shorter, or no longer holds the bytes
//! read last where they were, is read whole again.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};

use super::entry::Header;
use super::error::SessionError;
use super::index::SessionIndex;
use super::log::{parse, parse_entries};

/// How many bytes before the end of what was read are compared on every
/// look: enough to tell a rewritten file of the same or greater length from
/// the one read, short enough to cost nothing.
const FINGERPRINT: u64 = 64;

/// What following a file has cost so far, for tests and logs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FollowStats {
    /// Bytes read from the file (whole reads, appended lines, fingerprints, ranges).
    pub bytes_read: u64,
    /// Lines handed to the parser (the header included).
    pub lines_parsed: u64,
    /// Times the file was read from its start.
    pub whole_reads: u64,
}

/// One session file as last read: only its whole lines count (a line still
/// being written is read once its newline is there).
#[derive(Debug)]
pub struct FollowedLog {
    path: PathBuf,
    /// The file read: appended bytes are read through this handle, so they
    /// are the same file's whatever the name points at since.
    file: File,
    identity: (u64, u64),
    header: Header,
    index: SessionIndex,
    /// Bytes of whole lines read.
    len: u64,
    /// Line breaks in them (the header's included).
    lines: u64,
    /// The last whole line read, newline included (empty when there is none).
    last_line: Vec<u8>,
    /// The last [`FINGERPRINT`] bytes read, which the file must still hold
    /// where they were for a look to read on from there.
    tail: Vec<u8>,
    /// The bytes the last look read and where they start: a push sends
    /// them as its chunk without reading them again.
    recent: (u64, Vec<u8>),
    /// Counts whole reads: what was derived from the file before one (a
    /// check of its bytes) holds no more.
    generation: u64,
    /// A look failed part way (a malformed line): the index may hold part
    /// of it, so the next look reads the file whole.
    stale: bool,
    stats: FollowStats,
}

impl FollowedLog {
    /// Reads `path` whole.
    pub fn open(path: &Path) -> Result<FollowedLog, SessionError> {
        let mut stats = FollowStats::default();
        let (file, identity, bytes) = read_whole(path, &mut stats)?;
        let mut log = FollowedLog {
            path: path.to_path_buf(),
            file,
            identity,
            // Replaced by `take_whole` below, before anything reads it.
            header: Header::new(""),
            index: SessionIndex::new(),
            len: 0,
            lines: 0,
            last_line: Vec::new(),
            tail: Vec::new(),
            recent: (0, Vec::new()),
            generation: 0,
            stale: false,
            stats,
        };
        log.take_whole(bytes)?;
        Ok(log)
    }

    /// Brings the index up to date with the file: only the lines appended
    /// since the last look are read, unless the file is not the one read
    /// (then all of it is).
    pub fn refresh(&mut self) -> Result<(), SessionError> {
        let path = self.path.clone();
        let io = |e| SessionError::io("read session file", &path, e);
        let now = std::fs::metadata(&path).map_err(io)?;
        let same = !self.stale
            && self.len > 0
            && (now.dev(), now.ino()) == self.identity
            && now.len() >= self.len
            && self.ends_as_read()?;
        if !same {
            let (file, identity, bytes) = read_whole(&self.path, &mut self.stats)?;
            self.file = file;
            self.identity = identity;
            return self.take_whole(bytes);
        }
        self.recent = (self.len, Vec::new());
        if now.len() == self.len {
            return Ok(());
        }
        let mut bytes = vec![0u8; (now.len() - self.len) as usize];
        let got = read_at(&self.file, &mut bytes, self.len).map_err(io)?;
        bytes.truncate(got);
        self.stats.bytes_read += got as u64;
        let whole = whole_lines(&bytes);
        bytes.truncate(whole);
        if bytes.is_empty() {
            return Ok(());
        }
        let line_no = usize::try_from(self.lines).unwrap_or(usize::MAX);
        self.stale = true;
        parse_entries(&self.path, &bytes, &mut self.index, line_no)?;
        self.stale = false;
        self.took(self.len, bytes);
        Ok(())
    }

    /// The bytes `from..to` of what was read (`to` at most [`Self::len`]),
    /// from the last look's when it read them, else from the file read.
    pub fn read_range(&mut self, from: u64, to: u64) -> Result<Vec<u8>, SessionError> {
        let to = to.min(self.len);
        if from >= to {
            return Ok(Vec::new());
        }
        let (start, recent) = &self.recent;
        if from >= *start {
            let at = (from - start) as usize;
            if let Some(piece) = recent.get(at..at + (to - from) as usize) {
                return Ok(piece.to_vec());
            }
        }
        let mut piece = vec![0u8; (to - from) as usize];
        let got = read_at(&self.file, &mut piece, from)
            .map_err(|e| SessionError::io("read session file", &self.path, e))?;
        self.stats.bytes_read += got as u64;
        piece.truncate(got);
        Ok(piece)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn header(&self) -> &Header {
        &self.header
    }

    pub fn index(&self) -> &SessionIndex {
        &self.index
    }

    /// Bytes of whole lines read.
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Line breaks in what was read (blank lines and the header's included).
    pub fn lines(&self) -> u64 {
        self.lines
    }

    /// The last whole line read, its newline included.
    pub fn last_line(&self) -> &[u8] {
        &self.last_line
    }

    /// Changes whenever the file was read whole again.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    pub fn stats(&self) -> FollowStats {
        self.stats
    }

    /// Whether the file still holds, just before where the last look
    /// ended, the bytes it read there.
    fn ends_as_read(&mut self) -> Result<bool, SessionError> {
        let n = self.tail.len() as u64;
        let Some(from) = self.len.checked_sub(n) else {
            return Ok(false);
        };
        let mut now = vec![0u8; self.tail.len()];
        let got = read_at(&self.file, &mut now, from)
            .map_err(|e| SessionError::io("read session file", &self.path, e))?;
        self.stats.bytes_read += got as u64;
        Ok(got as u64 == n && now == self.tail)
    }

    fn take_whole(&mut self, bytes: Vec<u8>) -> Result<(), SessionError> {
        self.generation += 1;
        self.stats.whole_reads += 1;
        self.len = 0;
        self.lines = 0;
        self.last_line.clear();
        self.tail.clear();
        self.stale = true;
        let whole = whole_lines(&bytes);
        // A header with no newline yet is read as open reads it (no
        // entries), and counts for nothing: the next look reads whole.
        let (header, index, _) = parse(
            &self.path,
            if whole == 0 { &bytes } else { &bytes[..whole] },
        )?;
        self.header = header;
        self.index = index;
        self.stale = false;
        let mut bytes = bytes;
        bytes.truncate(whole);
        self.took(0, bytes);
        Ok(())
    }

    /// `bytes`, whole lines read at `from`, are now part of what was read.
    fn took(&mut self, from: u64, bytes: Vec<u8>) {
        let breaks = bytes.iter().filter(|&&b| b == b'\n').count() as u64;
        self.stats.lines_parsed += breaks;
        self.lines += breaks;
        self.len = from + bytes.len() as u64;
        if let Some(body) = bytes.strip_suffix(b"\n") {
            let start = body.iter().rposition(|&b| b == b'\n').map_or(0, |n| n + 1);
            self.last_line = bytes[start..].to_vec();
        }
        self.tail.extend_from_slice(&bytes);
        let cut = self.tail.len().saturating_sub(FINGERPRINT as usize);
        self.tail.drain(..cut);
        self.recent = (from, bytes);
    }
}

/// A file read whole: its handle, its device and inode, its bytes.
type WholeRead = (File, (u64, u64), Vec<u8>);

fn read_whole(path: &Path, stats: &mut FollowStats) -> Result<WholeRead, SessionError> {
    let io = |e| SessionError::io("read session file", path, e);
    let mut file = File::open(path).map_err(io)?;
    let m = file.metadata().map_err(io)?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).map_err(io)?;
    stats.bytes_read += bytes.len() as u64;
    Ok((file, (m.dev(), m.ino()), bytes))
}

/// The length of `bytes`' whole lines.
fn whole_lines(bytes: &[u8]) -> usize {
    bytes.iter().rposition(|&b| b == b'\n').map_or(0, |n| n + 1)
}

/// Fills `buf` from `offset` as far as the file goes; the bytes read.
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match file.read_at(&mut buf[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

#[cfg(test)]
mod tests;
