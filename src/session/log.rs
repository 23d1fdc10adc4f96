//! The session file on disk: create, open (with lock and torn-tail repair), append.

use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::entry::{Entry, Header, NewEntry, SESSION_VERSION, TYPE_SESSION};
use super::error::SessionError;
use super::ids::{now_iso, valid_host_id, EntryId};
use super::index::SessionIndex;
use crate::durability::sync_dir;

/// An open, locked session file and the index of what it holds.
///
/// Invariant: the file holds exactly `len` bytes of whole lines, and `index` holds exactly
/// the entries of those lines. Appends only ever add a whole line at the end.
#[derive(Debug)]
pub struct SessionLog {
    path: PathBuf,
    /// Opened read + append, holding the exclusive lock until dropped.
    file: File,
    header: Header,
    index: SessionIndex,
    fsync: bool,
    len: u64,
    /// A failed append left bytes past `len` that could not be cut off; the next append
    /// retries the cut so no half line ever ends up in the middle of the file.
    tail_dirty: bool,
    /// Opened by [`SessionLog::open_read_only`]: no lock, no repair, no appends.
    read_only: bool,
}

/// A session file let go of (its lock released), with what was read of it:
/// reopening it reads only the lines appended since (by anyone) instead of
/// the whole file again — a baseline line alone names every file of the
/// project. The hook server keeps one per session it records into.
#[derive(Debug)]
pub struct ParkedLog {
    path: PathBuf,
    header: Header,
    index: SessionIndex,
    fsync: bool,
    len: u64,
    /// Device and inode: a file replaced since is read whole.
    identity: (u64, u64),
}

impl ParkedLog {
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// What `open` had to do to the file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OpenReport {
    pub torn_tail: Option<TornTail>,
}

/// The repair of an unterminated last line (a crash mid-append).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TornTail {
    /// The line parsed: it was whole but for its `\n`, which was appended.
    Completed,
    /// The line did not parse: these bytes after the last `\n` were cut off.
    Truncated { bytes: u64 },
}

/// What reading the file decided about its last line, applied only once all of it parsed.
pub(super) enum Tail {
    Clean,
    Complete,
    Truncate { keep: u64 },
}

impl SessionLog {
    /// Creates a new session file (and its parent directories) holding just a header, and
    /// locks it. Fails if the file already exists.
    pub fn create(path: &Path, cwd: &str, fsync: bool) -> Result<SessionLog, SessionError> {
        Self::create_with_header(path, Header::new(cwd), fsync)
    }

    /// [`SessionLog::create`] with a header the caller made (e.g. to name
    /// the file after the session id).
    pub fn create_with_header(
        path: &Path,
        header: Header,
        fsync: bool,
    ) -> Result<SessionLog, SessionError> {
        let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
        if let Some(dir) = parent {
            fs::create_dir_all(dir)
                .map_err(|e| SessionError::io("create session directory", dir, e))?;
        }
        // The file is made under a temporary name, locked and given its header, and only
        // then linked to its real name: a gc listing sessions/ never finds it unlocked and
        // empty (it would take it for an abandoned session and delete it under us).
        // The temporary name does not end in .jsonl, so nothing that lists sessions sees it.
        let mut tmp_name = std::ffi::OsString::from(".");
        tmp_name.push(path.file_name().unwrap_or_default());
        tmp_name.push(".creating");
        let tmp = path.with_file_name(tmp_name);
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .create_new(true)
            .open(&tmp)
            .map_err(|e| SessionError::io("create session file", &tmp, e))?;
        let mut line = header.to_line();
        line.push('\n');
        let made = lock(&file, &tmp).and_then(|()| {
            (&file)
                .write_all(line.as_bytes())
                .and_then(|()| if fsync { file.sync_all() } else { Ok(()) })
                .map_err(|e| SessionError::io("write session header to", &tmp, e))?;
            // Fails when the name is taken, as create_new would.
            fs::hard_link(&tmp, path).map_err(|e| SessionError::io("create session file", path, e))
        });
        let _ = fs::remove_file(&tmp);
        made?;
        if fsync {
            if let Some(dir) = parent {
                sync_dir(dir).map_err(|e| SessionError::io("create session file", path, e))?;
            }
        }
        Ok(SessionLog::held(
            path.to_path_buf(),
            file,
            header,
            SessionIndex::new(),
            fsync,
            line.len() as u64,
        ))
    }

    /// Opens an existing session file: locks it first, reads and indexes every line, then
    /// repairs a torn last line. Nothing is written unless the whole file parsed.
    pub fn open(path: &Path, fsync: bool) -> Result<(SessionLog, OpenReport), SessionError> {
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .open(path)
            .map_err(|e| SessionError::io("open session file", path, e))?;
        // Lock before reading so no other sidecar can append between our read and our
        // first write.
        lock(&file, path)?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)
            .map_err(|e| SessionError::io("read session file", path, e))?;
        let (header, index, tail) = parse(path, &bytes)?;
        let len = bytes.len() as u64;
        let mut log = SessionLog::held(path.to_path_buf(), file, header, index, fsync, len);
        let torn_tail = log.repair_tail(0, tail)?;
        Ok((log, OpenReport { torn_tail }))
    }

    /// The locked session file, `len` bytes long, and what was read of it.
    fn held(
        path: PathBuf,
        file: File,
        header: Header,
        index: SessionIndex,
        fsync: bool,
        len: u64,
    ) -> SessionLog {
        SessionLog {
            path,
            file,
            header,
            index,
            fsync,
            len,
            tail_dirty: false,
            read_only: false,
        }
    }

    /// Repair what a read from offset `from` found at the end (`tail`'s
    /// offsets are relative to `from`): complete a whole last line, cut a
    /// torn one; synced with fsync. `len` is the file's length after.
    fn repair_tail(&mut self, from: u64, tail: Tail) -> Result<Option<TornTail>, SessionError> {
        let path = &self.path;
        let torn = match tail {
            Tail::Clean => return Ok(None),
            Tail::Complete => {
                self.file
                    .write_all(b"\n")
                    .map_err(|e| SessionError::io("complete torn last line of", path, e))?;
                self.len += 1;
                TornTail::Completed
            }
            Tail::Truncate { keep } => {
                let keep = from + keep;
                self.file
                    .set_len(keep)
                    .map_err(|e| SessionError::io("truncate torn last line of", path, e))?;
                let bytes = self.len - keep;
                self.len = keep;
                TornTail::Truncated { bytes }
            }
        };
        if self.fsync {
            self.file
                .sync_data()
                .map_err(|e| SessionError::io("sync session file", path, e))?;
        }
        Ok(Some(torn))
    }

    /// Let go of the file (and its lock), keeping what was read of it.
    /// `None` for a log that cannot be reopened by its tail (read-only, or
    /// with a failed append's bytes still to cut).
    pub fn park(self) -> Option<ParkedLog> {
        use std::os::unix::fs::MetadataExt;
        if self.read_only || self.tail_dirty {
            return None;
        }
        let m = self.file.metadata().ok()?;
        Some(ParkedLog {
            path: self.path,
            header: self.header,
            index: self.index,
            fsync: self.fsync,
            len: self.len,
            identity: (m.dev(), m.ino()),
        })
    }

    /// Open a parked session file again: lock it, then read only what was
    /// appended since it was parked. A file replaced, shortened or not
    /// ending where it was left is read whole, as [`SessionLog::open`] does.
    pub fn reopen(parked: ParkedLog) -> Result<(SessionLog, OpenReport), SessionError> {
        use std::io::{Seek, SeekFrom};
        use std::os::unix::fs::MetadataExt;
        let path = parked.path.clone();
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .open(&path)
            .map_err(|e| SessionError::io("open session file", &path, e))?;
        lock(&file, &path)?;
        let m = file
            .metadata()
            .map_err(|e| SessionError::io("read session file", &path, e))?;
        let ends_where_left =
            parked.len > 0 && m.len() >= parked.len && (m.dev(), m.ino()) == parked.identity && {
                let mut last = [0u8; 1];
                file.seek(SeekFrom::Start(parked.len - 1))
                    .and_then(|_| file.read_exact(&mut last))
                    .is_ok_and(|()| last == *b"\n")
            };
        if !ends_where_left {
            drop(file);
            return SessionLog::open(&path, parked.fsync);
        }
        file.seek(SeekFrom::Start(parked.len))
            .map_err(|e| SessionError::io("read session file", &path, e))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)
            .map_err(|e| SessionError::io("read session file", &path, e))?;
        let mut index = parked.index;
        let tail = parse_entries(&path, &bytes, &mut index, usize::MAX)?;
        let len = parked.len + bytes.len() as u64;
        let mut log = SessionLog::held(path, file, parked.header, index, parked.fsync, len);
        let torn_tail = log.repair_tail(parked.len, tail)?;
        Ok((log, OpenReport { torn_tail }))
    }

    /// Reads a session file without locking or repairing it, for people
    /// looking at a session a sidecar may be writing (`rewind log`). A torn
    /// last line is read as open would repair it, without writing. Appends
    /// fail with [`SessionError::ReadOnly`].
    pub fn open_read_only(path: &Path) -> Result<SessionLog, SessionError> {
        let mut file =
            File::open(path).map_err(|e| SessionError::io("open session file", path, e))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)
            .map_err(|e| SessionError::io("read session file", path, e))?;
        let (header, index, _tail) = parse(path, &bytes)?;
        Ok(SessionLog {
            path: path.to_path_buf(),
            file,
            header,
            index,
            fsync: false,
            len: bytes.len() as u64,
            tail_dirty: false,
            read_only: true,
        })
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

    /// Appends one entry as one line and makes it the leaf. Fills in the id (generated
    /// unless the host gave one), `parentId` (None is written as null) and the timestamp.
    /// The entry is indexed only after its line is written (and synced, with fsync), so a
    /// failed append leaves the index as it was.
    pub fn append(&mut self, mut e: NewEntry) -> Result<Entry, SessionError> {
        if self.read_only {
            return Err(SessionError::ReadOnly {
                path: self.path.clone(),
            });
        }
        let id = match e.id.take() {
            Some(id) => {
                if !valid_host_id(id.as_str()) {
                    return Err(SessionError::BadId { id });
                }
                if self.index.contains(&id) {
                    return Err(SessionError::DuplicateId { id });
                }
                id
            }
            None => EntryId::generate(|c| self.index.contains(c)),
        };
        if let Some(p) = &e.parent_id {
            if !self.index.contains(p) {
                return Err(SessionError::UnknownParent { id: p.clone() });
            }
        }
        let raw = e.into_raw(&id, &now_iso());
        // Going through from_value gives exactly the Entry a reopen would read back.
        let entry = Entry::from_value(Value::Object(raw))?;
        let mut line = entry.to_line();
        line.push('\n');
        self.write_line(line.as_bytes())?;
        self.index.insert(entry.clone())?;
        Ok(entry)
    }

    /// Appends an entry another copy of this session wrote (a pull from a
    /// remote, docs/remote.md): its id, parent and timestamp as they are.
    /// Its id must be new here and its parent, if any, already present, as
    /// for [`SessionLog::append`]; it becomes the leaf.
    pub fn append_existing(&mut self, entry: &Entry) -> Result<(), SessionError> {
        if self.read_only {
            return Err(SessionError::ReadOnly {
                path: self.path.clone(),
            });
        }
        if self.index.contains(&entry.id) {
            return Err(SessionError::DuplicateId {
                id: entry.id.clone(),
            });
        }
        if let Some(p) = &entry.parent_id {
            if !self.index.contains(p) {
                return Err(SessionError::UnknownParent { id: p.clone() });
            }
        }
        let mut line = entry.to_line();
        line.push('\n');
        self.write_line(line.as_bytes())?;
        self.index.insert(entry.clone())?;
        Ok(())
    }

    fn write_line(&mut self, line: &[u8]) -> Result<(), SessionError> {
        if self.tail_dirty {
            self.file
                .set_len(self.len)
                .map_err(|e| SessionError::io("cut failed append from", &self.path, e))?;
            self.tail_dirty = false;
        }
        // One write_all of the whole line: with O_APPEND it lands at the end, and a crash
        // leaves at worst one unterminated last line, which open repairs.
        let fsync = self.fsync;
        let file = &mut self.file;
        let res = file
            .write_all(line)
            .and_then(|()| if fsync { file.sync_data() } else { Ok(()) });
        match res {
            Ok(()) => {
                self.len += line.len() as u64;
                Ok(())
            }
            Err(e) => {
                // Cut back whatever part of the line got out, so the file keeps matching
                // the index. A whole line whose sync failed is cut too: the caller was told
                // the append failed, so a reopen must not find the entry.
                if self.file.set_len(self.len).is_err() {
                    self.tail_dirty = true;
                }
                Err(SessionError::io("append to session file", &self.path, e))
            }
        }
    }
}

fn lock(file: &File, path: &Path) -> Result<(), SessionError> {
    // An flock-style lock on this open file description: another process, or another
    // SessionLog of this process (a separate open), is refused; closing the file (dropping
    // the SessionLog, or the process dying) releases it.
    //
    // A lock just released can still look held for an instant: a process
    // forked between our open and the holder's close keeps a copy of the
    // descriptor until it execs. So a refusal is retried briefly before it
    // is reported.
    let taken =
        crate::lock_wait::within(
            LOCK_RETRY,
            std::time::Duration::from_millis(20),
            || match file.try_lock() {
                Ok(()) => Ok(Some(())),
                Err(TryLockError::WouldBlock) => Ok(None),
                Err(TryLockError::Error(e)) => Err(SessionError::io("lock session file", path, e)),
            },
        )?;
    taken.ok_or_else(|| SessionError::Locked {
        path: path.to_path_buf(),
    })
}

/// How long a refusal is retried (five tries, 20 ms apart).
const LOCK_RETRY: std::time::Duration = std::time::Duration::from_millis(80);

/// Reads the whole file: the header, every entry, and what to do about an unterminated
/// last line. Lines split on `\n` only, one trailing `\r` stripped (pi's JSONL framing);
/// blank lines after the header are skipped.
/// Reads a copy of a session held in memory (one fetched from a remote,
/// docs/remote.md), named `path` in errors: its header and index, as
/// [`SessionLog::open_read_only`] reads a file. Only whole lines count; a
/// torn last line is left out.
pub fn parse_copy(path: &Path, bytes: &[u8]) -> Result<(Header, SessionIndex), SessionError> {
    let (header, index, _) = parse(path, bytes)?;
    Ok((header, index))
}

pub(super) fn parse(
    path: &Path,
    bytes: &[u8],
) -> Result<(Header, SessionIndex, Tail), SessionError> {
    if bytes.is_empty() {
        return Err(SessionError::NotASession {
            path: path.to_path_buf(),
        });
    }
    // Line 1 must be the header. A file whose first line is not one is refused untouched,
    // even if unterminated: it may not be a session file at all.
    let (first, rest, terminated) = match bytes.iter().position(|&b| b == b'\n') {
        Some(n) => (&bytes[..n], n + 1, true),
        None => (bytes, bytes.len(), false),
    };
    let header = parse_header(path, first.strip_suffix(b"\r").unwrap_or(first))?;
    let mut index = SessionIndex::new();
    if !terminated {
        return Ok((header, index, Tail::Complete));
    }
    let tail = match parse_entries(path, &bytes[rest..], &mut index, 1)? {
        Tail::Truncate { keep } => Tail::Truncate {
            keep: rest as u64 + keep,
        },
        other => other,
    };
    Ok((header, index, tail))
}

/// Reads the entry lines of `bytes` (all after the header) into `index`;
/// `line_no` is the number of the line before them (for messages; MAX when
/// unknown). Returns what to do about an unterminated last line, its offset
/// relative to `bytes`.
pub(super) fn parse_entries(
    path: &Path,
    bytes: &[u8],
    index: &mut SessionIndex,
    mut line_no: usize,
) -> Result<Tail, SessionError> {
    let malformed = |line: usize, reason: String| SessionError::Malformed {
        path: path.to_path_buf(),
        line,
        reason,
    };
    let mut tail = Tail::Clean;
    let mut pos = 0usize;
    while pos < bytes.len() {
        let start = pos;
        let (mut line, terminated) = match bytes[pos..].iter().position(|&b| b == b'\n') {
            Some(n) => {
                pos += n + 1;
                (&bytes[start..start + n], true)
            }
            None => {
                pos = bytes.len();
                (&bytes[start..], false)
            }
        };
        line_no = line_no.saturating_add(1);
        if let Some(stripped) = line.strip_suffix(b"\r") {
            line = stripped;
        }
        if line.iter().all(u8::is_ascii_whitespace) && terminated {
            continue;
        }
        let value: Value = match serde_json::from_slice(line) {
            Ok(v) => v,
            Err(_) if !terminated => {
                // A crash mid-append: a proper prefix of a JSON line never parses.
                tail = Tail::Truncate { keep: start as u64 };
                break;
            }
            Err(e) => return Err(malformed(line_no, format!("not valid JSON: {e}"))),
        };
        let entry = Entry::from_value(value).map_err(|e| match e {
            SessionError::Malformed { reason, .. } => malformed(line_no, reason),
            other => malformed(line_no, other.to_string()),
        })?;
        index
            .insert(entry)
            .map_err(|e| malformed(line_no, e.to_string()))?;
        if !terminated {
            tail = Tail::Complete;
        }
    }
    Ok(tail)
}

fn parse_header(path: &Path, line: &[u8]) -> Result<Header, SessionError> {
    let not_a_session = || SessionError::NotASession {
        path: path.to_path_buf(),
    };
    let Ok(Value::Object(m)) = serde_json::from_slice::<Value>(line) else {
        return Err(not_a_session());
    };
    if m.get("type").and_then(Value::as_str) != Some(TYPE_SESSION) {
        return Err(not_a_session());
    }
    let malformed = |reason: &str| SessionError::Malformed {
        path: path.to_path_buf(),
        line: 1,
        reason: reason.to_owned(),
    };
    // pi's first format had no version field; pi reads a missing version as 1.
    let version = match m.get("version") {
        None => 1,
        Some(v) => v
            .as_u64()
            .ok_or_else(|| malformed("header \"version\" is not a non-negative integer"))?,
    };
    if version != u64::from(SESSION_VERSION) {
        return Err(SessionError::UnsupportedVersion {
            path: path.to_path_buf(),
            version,
        });
    }
    let field = |key: &str| -> Result<String, SessionError> {
        m.get(key)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| malformed(&format!("header \"{key}\" is missing or not a string")))
    };
    Ok(Header {
        version: SESSION_VERSION,
        id: field("id")?,
        timestamp: field("timestamp")?,
        cwd: field("cwd")?,
    })
}

#[cfg(test)]
mod tests;
