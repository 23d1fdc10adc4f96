use std::fs::{self, OpenOptions};
use std::io::Write;

use serde_json::json;

use super::*;
use crate::session::{NewEntry, SessionLog};

fn note(log: &mut SessionLog, n: usize) -> usize {
    let leaf = log.index().leaf().map(|e| e.id.clone());
    log.append(NewEntry::custom("note", leaf, json!({ "n": n })))
        .unwrap();
    log.index().len()
}

fn session(dir: &tempfile::TempDir, entries: usize) -> (PathBuf, SessionLog) {
    let path = dir.path().join("s.jsonl");
    let mut log = SessionLog::create(&path, "/p", false).unwrap();
    for n in 0..entries {
        note(&mut log, n);
    }
    (path, log)
}

#[test]
fn a_look_reads_only_the_lines_appended_since() {
    let dir = tempfile::tempdir().unwrap();
    let (path, mut log) = session(&dir, 300);
    let mut f = FollowedLog::open(&path).unwrap();
    assert_eq!(f.index().len(), 300);
    assert_eq!(f.lines(), 301);
    let first = f.stats();
    assert_eq!(first.lines_parsed, 301);
    assert_eq!(first.bytes_read, fs::metadata(&path).unwrap().len());

    // Nothing new: only the fingerprint is read.
    f.refresh().unwrap();
    let idle = f.stats();
    assert_eq!(idle.lines_parsed, first.lines_parsed);
    assert!(idle.bytes_read - first.bytes_read <= FINGERPRINT);

    let before = fs::metadata(&path).unwrap().len();
    note(&mut log, 300);
    let line = fs::metadata(&path).unwrap().len() - before;
    f.refresh().unwrap();
    let s = f.stats();
    assert_eq!(
        s.lines_parsed - idle.lines_parsed,
        1,
        "one new line, one parsed"
    );
    assert!(s.bytes_read - idle.bytes_read <= line + FINGERPRINT);
    assert_eq!(s.whole_reads, 1);
    assert_eq!(f.index().len(), 301);
    assert_eq!(f.len(), before + line);
    // The new line is served from what the look read.
    assert_eq!(
        f.read_range(before, before + line).unwrap().len() as u64,
        line
    );
    assert_eq!(f.stats().bytes_read, s.bytes_read);
    assert_eq!(f.last_line().last(), Some(&b'\n'));
}

#[test]
fn a_line_still_being_written_waits_for_its_newline() {
    let dir = tempfile::tempdir().unwrap();
    let (path, log) = session(&dir, 2);
    drop(log);
    let mut f = FollowedLog::open(&path).unwrap();
    let len = f.len();
    let mut file = OpenOptions::new().append(true).open(&path).unwrap();
    file.write_all(br#"{"type":"custom","customType":"note","id":"ab"#)
        .unwrap();
    f.refresh().unwrap();
    assert_eq!((f.len(), f.index().len()), (len, 2));
    let parent = f.index().leaf().unwrap().id.clone();
    writeln!(
        file,
        "cd0001\",\"parentId\":\"{parent}\",\"timestamp\":\"2026-11-21T19:12:00.123Z\",\"data\":{{}}}}"
    )
    .unwrap();
    f.refresh().unwrap();
    assert_eq!(f.index().len(), 3);
    assert_eq!(f.len(), fs::metadata(&path).unwrap().len());
    assert_eq!(f.stats().whole_reads, 1);
}

#[test]
fn a_replaced_shortened_or_rewritten_file_is_read_whole() {
    let dir = tempfile::tempdir().unwrap();
    let (path, log) = session(&dir, 5);
    let mut f = FollowedLog::open(&path).unwrap();
    let bytes = fs::read(&path).unwrap();

    // Shorter (a gc or repair cut it): read whole.
    fs::write(&path, &bytes[..bytes.len() - 1]).unwrap();
    let cut = bytes[..bytes.len() - 1]
        .iter()
        .rposition(|&b| b == b'\n')
        .unwrap();
    f.refresh().unwrap();
    assert_eq!(f.stats().whole_reads, 2);
    assert_eq!(f.len(), cut as u64 + 1);
    assert_eq!(f.index().len(), 4);

    // Replaced under its name (another inode), longer than before.
    drop(log);
    let other = dir.path().join("other.jsonl");
    fs::write(&other, &bytes).unwrap();
    fs::rename(&other, &path).unwrap();
    f.refresh().unwrap();
    assert_eq!(f.stats().whole_reads, 3);
    assert_eq!(f.index().len(), 5);

    // Rewritten in place, same inode, not shorter, other bytes where the
    // last look ended: read whole.
    let (mut log, _) = SessionLog::open(&path, false).unwrap();
    let text = String::from_utf8(bytes.clone()).unwrap();
    let rewritten = text.replace("\"n\":4", "\"n\":9");
    drop(log);
    fs::write(&path, rewritten.as_bytes()).unwrap();
    f.refresh().unwrap();
    assert_eq!(f.stats().whole_reads, 4);
    assert_eq!(
        f.index().leaf().unwrap().data().unwrap()["n"],
        json!(9),
        "the rewritten line is the one read"
    );
    (log, _) = SessionLog::open(&path, false).unwrap();
    note(&mut log, 10);
    f.refresh().unwrap();
    assert_eq!(
        f.stats().whole_reads,
        4,
        "appends are read as appends again"
    );
    assert_eq!(f.index().len(), 6);
}

#[test]
fn a_malformed_line_fails_the_look_and_the_next_reads_whole() {
    let dir = tempfile::tempdir().unwrap();
    let (path, log) = session(&dir, 2);
    drop(log);
    let mut f = FollowedLog::open(&path).unwrap();
    let mut file = OpenOptions::new().append(true).open(&path).unwrap();
    file.write_all(b"not json\n").unwrap();
    assert!(f.refresh().is_err());
    assert!(f.refresh().is_err());
    assert_eq!(f.stats().whole_reads, 2);
}
