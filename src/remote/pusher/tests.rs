//! The background pusher reads only what a session file gained since its
//! last wake (issue 40): counted in lines parsed and bytes read, not timed.

use super::*;
use crate::remote::tests::{checkpoint, side, tree};
use crate::session::{Header, SessionLog};

fn session(store: &Store, entries: usize) -> (PathBuf, SessionLog) {
    let header = Header::new("/project");
    let path = store
        .layout()
        .new_session_file(&header.timestamp, &header.id);
    let mut log = SessionLog::create_with_header(&path, header, false).unwrap();
    let t = tree(store, &[("f.txt", b"f\n")]);
    for _ in 0..entries {
        checkpoint(&mut log, t);
    }
    (path, log)
}

fn stats(followed: &Followed, path: &Path) -> crate::session::FollowStats {
    followed.sources[path].1.stats()
}

fn remote_entries(remote: &Remote) -> usize {
    let copies = crate::remote::list_sessions(remote).unwrap();
    assert_eq!(copies.len(), 1);
    copies[0].entries
}

#[test]
fn a_wake_after_one_new_entry_parses_one_line() {
    let remote_dir = tempfile::tempdir().unwrap();
    let a = side(&format!("file://{}", remote_dir.path().display()));
    let (path, mut log) = session(&a.store, 300);
    let mut pushed = HashMap::new();
    let mut followed = Followed::default();

    round(&a.store, &a.remote, &mut pushed, &mut followed).unwrap();
    let first = stats(&followed, &path);
    let size = std::fs::metadata(&path).unwrap().len();
    assert_eq!(first.whole_reads, 1);
    assert_eq!(first.lines_parsed, 301, "the header and 300 entries");
    assert_eq!(first.bytes_read, size, "the file once, nothing more");
    assert_eq!(remote_entries(&a.remote), 300);

    // A wake with nothing new reads nothing (the size says so).
    round(&a.store, &a.remote, &mut pushed, &mut followed).unwrap();
    assert_eq!(stats(&followed, &path), first);

    let t = tree(&a.store, &[("g.txt", b"g\n")]);
    checkpoint(&mut log, t);
    let line = std::fs::metadata(&path).unwrap().len() - size;
    round(&a.store, &a.remote, &mut pushed, &mut followed).unwrap();
    let second = stats(&followed, &path);
    assert_eq!(second.whole_reads, 1, "not read whole again");
    assert_eq!(
        second.lines_parsed - first.lines_parsed,
        1,
        "one line parsed"
    );
    // The new line, and the few bytes before it that show the file is the
    // one read; the chunk pushed is those bytes, not read again.
    assert!(
        second.bytes_read - first.bytes_read <= line + 64,
        "{} bytes read for a line of {line}",
        second.bytes_read - first.bytes_read
    );
    assert_eq!(remote_entries(&a.remote), 301);
    let pulled = crate::remote::tests::side(&format!("file://{}", remote_dir.path().display()));
    let id = crate::session::SessionId::parse(&log.header().id).unwrap();
    let r = crate::remote::pull_session(&pulled.store, &pulled.remote, &id).unwrap();
    assert_eq!(
        std::fs::read(&r.session_file).unwrap(),
        std::fs::read(&path).unwrap(),
        "the remote holds the file as it is"
    );
}

#[test]
fn a_session_file_rewritten_shorter_between_wakes_is_read_and_pushed_whole() {
    let remote_dir = tempfile::tempdir().unwrap();
    let a = side(&format!("file://{}", remote_dir.path().display()));
    let (path, log) = session(&a.store, 20);
    let mut pushed = HashMap::new();
    let mut followed = Followed::default();
    round(&a.store, &a.remote, &mut pushed, &mut followed).unwrap();
    assert_eq!(remote_entries(&a.remote), 20);

    // A repair or a gc left fewer lines under the same name: what was read
    // and checked of it no longer counts.
    drop(log);
    let bytes = std::fs::read(&path).unwrap();
    let keep = bytes
        .iter()
        .enumerate()
        .filter(|(_, &b)| b == b'\n')
        .nth(10)
        .map(|(i, _)| i + 1)
        .unwrap();
    std::fs::write(&path, &bytes[..keep]).unwrap();
    round(&a.store, &a.remote, &mut pushed, &mut followed).unwrap();
    assert_eq!(stats(&followed, &path).whole_reads, 2);
    assert_eq!(remote_entries(&a.remote), 10);
}

#[test]
fn the_pusher_follows_a_bounded_number_of_files_and_lets_go_of_removed_ones() {
    let remote_dir = tempfile::tempdir().unwrap();
    let a = side(&format!("file://{}", remote_dir.path().display()));
    let mut paths = Vec::new();
    for _ in 0..FOLLOWED + 2 {
        let (path, _log) = session(&a.store, 1);
        paths.push(path);
    }
    let mut pushed = HashMap::new();
    let mut followed = Followed::default();
    round(&a.store, &a.remote, &mut pushed, &mut followed).unwrap();
    assert_eq!(followed.sources.len(), FOLLOWED);
    std::fs::remove_file(&paths[0]).unwrap();
    std::fs::remove_file(&paths[1]).unwrap();
    round(&a.store, &a.remote, &mut pushed, &mut followed).unwrap();
    assert!(followed.sources.keys().all(|p| p.exists()));
}
