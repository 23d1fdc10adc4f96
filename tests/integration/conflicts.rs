//! The conflict matrix of a restore, for each onConflict mode, through the
//! real binary: clean files, files edited / deleted / created outside the
//! sidecar since the last snapshot, uncaptured files in the way, unwritable
//! directories, and path attacks (`..`, absolute paths, symlinked parents,
//! a captured directory swapped for a symlink to the outside).

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::common::{disk_state, session_lines, skip_or_fail, Fixture, Node, Sidecar};

const MODES: [&str; 3] = ["skip", "overwrite", "abort"];

fn id(v: &Value) -> String {
    v.as_str()
        .unwrap_or_else(|| panic!("not an id: {v}"))
        .to_string()
}

/// What happened to the case file between the turn and the restore.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Case {
    /// Untouched since the last snapshot.
    Clean,
    /// Edited outside the sidecar.
    EditedOutside,
    /// Deleted outside the sidecar.
    DeletedOutside,
    /// The turn deleted it; created again outside, captured by a scan.
    CreatedCaptured,
    /// The turn deleted it and made it ignored; created again outside.
    CreatedIgnored,
    /// The turn deleted it; created again outside, over the size cap.
    CreatedTooLarge,
}

const CASES: [Case; 6] = [
    Case::Clean,
    Case::EditedOutside,
    Case::DeletedOutside,
    Case::CreatedCaptured,
    Case::CreatedIgnored,
    Case::CreatedTooLarge,
];

impl Case {
    fn file(self) -> &'static str {
        match self {
            Case::CreatedIgnored => "f.tmp",
            Case::CreatedTooLarge => "f.bin",
            _ => "f.txt",
        }
    }
    fn dirty(self) -> bool {
        matches!(
            self,
            Case::EditedOutside | Case::DeletedOutside | Case::CreatedCaptured
        )
    }
    fn untracked(self) -> bool {
        matches!(self, Case::CreatedIgnored | Case::CreatedTooLarge)
    }
    /// The case file's content right before the restore (None: absent).
    fn outside(self) -> Option<Vec<u8>> {
        match self {
            Case::Clean => Some(b"turn".to_vec()),
            Case::DeletedOutside => None,
            Case::CreatedTooLarge => Some(vec![b'L'; 200]),
            _ => Some(b"outside".to_vec()),
        }
    }
}

struct Setup {
    fx: Fixture,
    s: Sidecar,
    session: PathBuf,
    base: String,
}

/// baseline: the case file ("base") and other.txt ("o0"); a turn changes
/// both (other.txt cleanly); then the case's outside change.
fn setup(case: Case) -> Setup {
    let fx = Fixture::new();
    let f = case.file();
    fx.write(f, "base");
    fx.write("other.txt", "o0");
    // ignoredMaxSize 0: the ignored case stands for an ignored file rewind
    // does not capture (over ignoredMaxSize by default).
    let (mut s, init) = fx.start(json!({"options": {"maxFileSize": 64, "ignoredMaxSize": 0}}));
    let session = PathBuf::from(id(&init["sessionFile"]));
    let base = id(&init["baseline"]["entryId"]);
    fx.write("other.txt", "o1");
    match case {
        Case::Clean | Case::EditedOutside | Case::DeletedOutside => fx.write(f, "turn"),
        Case::CreatedCaptured | Case::CreatedTooLarge => fx.remove(f),
        Case::CreatedIgnored => {
            fx.remove(f);
            fx.write(".gitignore", "*.tmp\n");
        }
    }
    let r = s.ok("snapshot", json!({}));
    assert!(r["entryId"].is_string(), "{r}");
    match case.outside() {
        Some(bytes) => fx.write(f, bytes),
        None => fx.remove(f),
    }
    Setup {
        fx,
        s,
        session,
        base,
    }
}

fn conflict(path: &str, reason: &str) -> Value {
    json!({"path": path, "reason": reason})
}

fn run_case(case: Case, mode: &str) {
    let ctx = format!("{case:?} / {mode}");
    let Setup {
        fx,
        mut s,
        session,
        base,
    } = setup(case);
    let f = case.file();
    let disk_before = disk_state(&fx.root());
    let bytes_before = std::fs::read(&session).unwrap();

    let expected_conflicts: Vec<Value> = if case.untracked() {
        vec![conflict(f, "untracked")]
    } else if case.dirty() && mode != "overwrite" {
        vec![conflict(f, "dirty")]
    } else {
        vec![]
    };

    let resp = s.call(
        "restore_files",
        json!({"targetEntryId": base, "onConflict": mode}),
    );
    if mode == "abort" && !expected_conflicts.is_empty() {
        let e = &resp["error"];
        assert_eq!(e["code"], 1002, "{ctx}: {resp}");
        assert_eq!(
            e["data"]["conflicts"],
            Value::Array(expected_conflicts),
            "{ctx}"
        );
        assert_eq!(
            std::fs::read(&session).unwrap(),
            bytes_before,
            "{ctx}: abort appended"
        );
        assert_eq!(
            disk_state(&fx.root()),
            disk_before,
            "{ctx}: abort touched files"
        );
        return;
    }
    let r = resp
        .get("result")
        .unwrap_or_else(|| panic!("{ctx}: {resp}"));
    let dirty: Vec<&str> = if case.dirty() { vec![f] } else { vec![] };
    assert_eq!(r["dirty"], json!(dirty), "{ctx}: {r}");
    assert_eq!(
        r["conflicts"],
        Value::Array(expected_conflicts.clone()),
        "{ctx}: {r}"
    );
    let skipped: Vec<&str> = expected_conflicts
        .iter()
        .map(|c| c["path"].as_str().unwrap())
        .collect();
    assert_eq!(r["skipped"], json!(skipped), "{ctx}: {r}");

    let f_written = !case.untracked() && (mode == "overwrite" || !case.dirty());
    let mut restored = vec!["other.txt"];
    if f_written {
        restored.push(f);
        restored.sort();
    }
    assert_eq!(r["restored"], json!(restored), "{ctx}: {r}");
    // The ignored case's turn added .gitignore, which the baseline lacks.
    let deleted: Vec<&str> = if case == Case::CreatedIgnored {
        vec![".gitignore"]
    } else {
        vec![]
    };
    assert_eq!(r["deleted"], json!(deleted), "{ctx}: {r}");
    assert_eq!(fx.read("other.txt").as_deref(), Some(&b"o0"[..]), "{ctx}");
    let want = if f_written {
        Some(b"base".to_vec())
    } else {
        case.outside()
    };
    assert_eq!(fx.read(f), want, "{ctx}: content of {f}");

    // The pre-restore snapshot keeps the outside change.
    let lines = session_lines(&session);
    let pre: Vec<&Value> = lines
        .iter()
        .filter(|l| l["data"]["kind"] == "pre-restore")
        .collect();
    if case.dirty() {
        assert_eq!(pre.len(), 1, "{ctx}: one pre-restore snapshot");
        let d = s.ok(
            "get_file_diff",
            json!({"filePath": f, "toEntryId": pre[0]["id"]}),
        );
        match case.outside() {
            Some(_) => assert_eq!(d["newContent"], "outside", "{ctx}: {d}"),
            None => assert!(d["newContent"].is_null(), "{ctx}: {d}"),
        }
    } else if case == Case::CreatedTooLarge {
        // The file too large to capture is recorded present, not captured
        // (docs/architecture.md rule 14): the disk differs from the
        // checkpoint by that much, and the pre-restore snapshot says so.
        assert_eq!(pre.len(), 1, "{ctx}: one pre-restore snapshot");
        assert_eq!(pre[0]["data"]["diff"]["notCaptured"], json!([f]), "{ctx}");
        assert_eq!(pre[0]["data"]["diff"]["added"], json!([]), "{ctx}");
    } else {
        assert!(pre.is_empty(), "{ctx}: nothing unrecorded, no snapshot");
    }
    // The recorded state is what the restore left on disk: a restart
    // finds nothing to record. (Not in the ignored case: the restore
    // deleted the .gitignore, so the outside file is captured now.)
    if mode == "skip" && case != Case::CreatedIgnored {
        assert!(s.finish().success());
        let (s2, init) = fx.start(json!({"sessionFile": session, "options": {"maxFileSize": 64}}));
        assert!(init.get("recovered").is_none(), "{ctx}: {init}");
        s = s2;
    }
    // ... so undo brings it back where it was overwritten.
    if case.dirty() && mode == "overwrite" {
        s.ok("undo", json!({}));
        assert_eq!(fx.read(f), case.outside(), "{ctx}: after undo");
        assert_eq!(fx.read("other.txt").as_deref(), Some(&b"o1"[..]));
    }
}

#[test]
fn conflict_matrix_skip() {
    for case in CASES {
        run_case(case, "skip");
    }
}

#[test]
fn conflict_matrix_overwrite() {
    for case in CASES {
        run_case(case, "overwrite");
    }
}

#[test]
fn conflict_matrix_abort() {
    for case in CASES {
        run_case(case, "abort");
    }
}

#[test]
fn navigating_back_to_the_old_leaf_brings_back_an_overwritten_outside_edit() {
    let Setup {
        fx,
        mut s,
        session: _,
        base,
    } = setup(Case::EditedOutside);
    let nav = s.ok(
        "navigate_tree",
        json!({"targetId": base, "onConflict": "overwrite"}),
    );
    assert_eq!(nav["restore"]["dirty"], json!(["f.txt"]), "{nav}");
    assert_eq!(fx.read("f.txt").as_deref(), Some(&b"base"[..]));
    s.ok("navigate_tree", json!({"targetId": nav["oldLeafId"]}));
    assert_eq!(fx.read("f.txt").as_deref(), Some(&b"outside"[..]));
    assert_eq!(fx.read("other.txt").as_deref(), Some(&b"o1"[..]));
}

#[test]
fn abort_stops_navigate_undo_and_reset_too() {
    let Setup {
        fx,
        mut s,
        session,
        base,
    } = setup(Case::EditedOutside);
    let disk = disk_state(&fx.root());
    let bytes = std::fs::read(&session).unwrap();
    for (method, params) in [
        (
            "navigate_tree",
            json!({"targetId": base, "onConflict": "abort", "label": "x", "summarize": true}),
        ),
        ("reset", json!({"onConflict": "abort"})),
    ] {
        let e = s.err(method, params);
        assert_eq!(e["code"], 1002, "{method}: {e}");
        assert_eq!(
            e["data"]["conflicts"],
            json!([conflict("f.txt", "dirty")]),
            "{method}"
        );
        assert_eq!(disk_state(&fx.root()), disk, "{method} touched files");
        assert_eq!(std::fs::read(&session).unwrap(), bytes, "{method} appended");
    }
    // An undo whose restore would overwrite a later outside edit.
    let r = s.ok(
        "restore_files",
        json!({"targetEntryId": base, "onConflict": "overwrite"}),
    );
    assert!(r["unrevertEntryId"].is_string());
    fx.write("other.txt", "edited after the restore");
    let disk = disk_state(&fx.root());
    let bytes = std::fs::read(&session).unwrap();
    let e = s.err("undo", json!({"onConflict": "abort"}));
    assert_eq!(e["code"], 1002, "{e}");
    assert_eq!(
        e["data"]["conflicts"],
        json!([conflict("other.txt", "dirty")])
    );
    assert_eq!(disk_state(&fx.root()), disk);
    assert_eq!(std::fs::read(&session).unwrap(), bytes);
}

// ------------------------------------------------------------------ unwritable

/// How a directory is made read-only for the test: mode 555, or (for root,
/// whom modes do not stop) the immutable attribute. Undone on drop.
struct ReadOnly {
    dir: PathBuf,
    immutable: bool,
}

impl Drop for ReadOnly {
    fn drop(&mut self) {
        if self.immutable {
            let _ = std::process::Command::new("chattr")
                .arg("-i")
                .arg(&self.dir)
                .status();
        }
        let _ = std::fs::set_permissions(&self.dir, std::fs::Permissions::from_mode(0o755));
    }
}

fn blocks_writes(lock: &ReadOnly) -> bool {
    let wrote = std::fs::write(lock.dir.join("probe"), "x").is_ok();
    let _ = std::fs::remove_file(lock.dir.join("probe"));
    !wrote
}

fn lock_dir(dir: &Path, immutable: bool) -> Option<ReadOnly> {
    let lock = ReadOnly {
        dir: dir.to_path_buf(),
        immutable,
    };
    if immutable {
        let ok = std::process::Command::new("chattr")
            .arg("+i")
            .arg(dir)
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            return None;
        }
    } else {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o555)).unwrap();
    }
    Some(lock)
}

/// Make `dir` read-only in a way that stops this process: mode 555 when
/// it bites (not root), else `chattr +i` when available. Probed on a
/// scratch directory of the same filesystem first.
fn make_read_only(dir: &Path) -> Option<ReadOnly> {
    let scratch = tempfile::tempdir_in(dir.parent().unwrap()).unwrap();
    for immutable in [false, true] {
        let works = lock_dir(scratch.path(), immutable).is_some_and(|l| blocks_writes(&l));
        if works {
            return lock_dir(dir, immutable);
        }
    }
    None
}

#[test]
fn an_unwritable_directory_is_a_conflict_and_the_rest_goes_on() {
    let fx = Fixture::new();
    fx.write("ro/a.txt", "base");
    fx.write("ro/gone.txt", "base");
    fx.write("other.txt", "o0");
    let (mut s, init) = fx.start(json!({}));
    let base = id(&init["baseline"]["entryId"]);
    fx.write("ro/a.txt", "turn");
    fx.remove("ro/gone.txt");
    fx.write("ro/added.txt", "turn");
    fx.write("other.txt", "o1");
    s.ok("snapshot", json!({}));
    let lock = make_read_only(&fx.root().join("ro"));
    if lock.is_none() {
        skip_or_fail("neither mode 555 nor chattr +i stops this process: unwritable not checked");
    }

    let r = s.ok("restore_files", json!({"targetEntryId": base}));
    let locked = lock.is_some();
    eprintln!(
        "read-only directory: {}",
        if locked { "locked" } else { "not locked" }
    );
    drop(lock);
    assert_eq!(fx.read("other.txt").as_deref(), Some(&b"o0"[..]), "{r}");
    assert!(strs(&r["restored"]).contains(&"other.txt".to_string()));
    if locked {
        assert_eq!(
            r["conflicts"],
            json!([
                conflict("ro/a.txt", "unwritable"),
                conflict("ro/added.txt", "unwritable"),
                conflict("ro/gone.txt", "unwritable"),
            ]),
            "{r}"
        );
        assert_eq!(
            r["skipped"],
            json!(["ro/a.txt", "ro/added.txt", "ro/gone.txt"])
        );
        assert_eq!(r["restored"], json!(["other.txt"]), "{r}");
        assert_eq!(fx.read("ro/a.txt").as_deref(), Some(&b"turn"[..]));
        assert_eq!(fx.read("ro/added.txt").as_deref(), Some(&b"turn"[..]));
        assert!(
            disk_state(&fx.root())
                .keys()
                .all(|p| !p.contains(".rewind-tmp")),
            "a temp file was left behind"
        );
        // The recorded state says what is on disk: a second restore, now
        // that the directory is writable, finds nothing dirty.
        let r = s.ok("restore_files", json!({"targetEntryId": base}));
        assert_eq!(r["dirty"], json!([]), "{r}");
        assert_eq!(r["conflicts"], json!([]), "{r}");
    } else {
        assert_eq!(r["conflicts"], json!([]), "{r}");
    }
    assert_eq!(fx.read("ro/a.txt").as_deref(), Some(&b"base"[..]));
    assert_eq!(fx.read("ro/gone.txt").as_deref(), Some(&b"base"[..]));
    assert_eq!(fx.read("ro/added.txt"), None);
}

fn strs(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(id)
        .collect()
}

// ---------------------------------------------------------------- path attacks

#[test]
fn bad_paths_in_files_are_rejected_and_nothing_is_touched() {
    let fx = Fixture::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("victim.txt"), "outside").unwrap();
    fx.write("a.txt", "a0");
    std::os::unix::fs::symlink(outside.path(), fx.root().join("out")).unwrap();
    let (mut s, init) = fx.start(json!({}));
    let session = PathBuf::from(id(&init["sessionFile"]));
    let base = id(&init["baseline"]["entryId"]);
    fx.write("a.txt", "a1");
    s.ok("snapshot", json!({}));
    fx.write("a.txt", "a2 dirty");
    let disk = disk_state(&fx.root());
    let out_disk = disk_state(outside.path());
    let bytes = std::fs::read(&session).unwrap();

    let abs_inside = fx.root().join("a.txt").display().to_string();
    let abs_outside = outside.path().join("victim.txt").display().to_string();
    for bad in [
        "..",
        "../x",
        "a/../../x",
        "a.txt/../..",
        "/etc/passwd",
        abs_inside.as_str(),
        abs_outside.as_str(),
        "out/victim.txt",
        "out/sub/new.txt",
    ] {
        for mode in MODES {
            let e = s.err(
                "restore_files",
                json!({"targetEntryId": base, "files": ["a.txt", bad], "onConflict": mode}),
            );
            assert_eq!(e["code"], -32602, "{bad:?}: {e}");
        }
    }
    assert_eq!(disk_state(&fx.root()), disk);
    assert_eq!(disk_state(outside.path()), out_disk);
    assert_eq!(std::fs::read(&session).unwrap(), bytes);
    // The captured link itself may be named (its target is data).
    let r = s.ok(
        "restore_files",
        json!({"targetEntryId": base, "files": ["out"], "preview": true}),
    );
    assert_eq!(r["restored"], json!([]), "{r}");
}

/// A project whose captured directory `d` is replaced, between the last
/// snapshot and the restore, by a symlink to a directory outside holding a
/// file of the same name.
fn swapped_dir() -> (Fixture, Sidecar, String, tempfile::TempDir, PathBuf) {
    let fx = Fixture::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("f.txt"), "outside-owned").unwrap();
    std::fs::write(outside.path().join("z.txt"), "outside z").unwrap();
    fx.write("d/f.txt", "base");
    fx.write("d/g.txt", "g");
    let (mut s, init) = fx.start(json!({}));
    let session = PathBuf::from(id(&init["sessionFile"]));
    let base = id(&init["baseline"]["entryId"]);
    fx.write("d/f.txt", "turn");
    s.ok("snapshot", json!({}));
    std::fs::remove_dir_all(fx.root().join("d")).unwrap();
    std::os::unix::fs::symlink(outside.path(), fx.root().join("d")).unwrap();
    (fx, s, base, outside, session)
}

fn outside_untouched(outside: &Path) {
    let want: BTreeMap<String, Node> = [
        ("f.txt".to_string(), Node::file("outside-owned")),
        ("z.txt".to_string(), Node::file("outside z")),
    ]
    .into_iter()
    .collect();
    assert_eq!(
        disk_state(outside),
        want,
        "the restore wrote through the symlink"
    );
}

#[test]
fn a_directory_swapped_for_an_outside_symlink_is_replaced_by_a_real_one_under_overwrite() {
    let (fx, mut s, base, outside, session) = swapped_dir();
    let r = s.ok(
        "restore_files",
        json!({"targetEntryId": base, "onConflict": "overwrite"}),
    );
    outside_untouched(outside.path());
    let root = fx.root();
    let meta = std::fs::symlink_metadata(root.join("d")).unwrap();
    assert!(meta.is_dir(), "d is a real directory again: {r}");
    // The symlink was captured by the snapshot before mutate.
    let pre = session_lines(&session)
        .into_iter()
        .find(|l| l["data"]["kind"] == "pre-restore")
        .expect("a pre-restore snapshot");
    let d = s.ok(
        "get_file_diff",
        json!({"filePath": "d", "toEntryId": pre["id"]}),
    );
    assert!(d["newContent"].is_string(), "the link was captured: {d}");
    assert_eq!(r["conflicts"], json!([]), "{r}");
    assert_eq!(r["deleted"], json!(["d"]), "{r}");
    assert_eq!(r["restored"], json!(["d/f.txt", "d/g.txt"]), "{r}");
    assert_eq!(
        disk_state(&root),
        [
            ("d/f.txt".to_string(), Node::file("base")),
            ("d/g.txt".to_string(), Node::file("g")),
        ]
        .into_iter()
        .collect::<BTreeMap<_, _>>()
    );
}

#[test]
fn a_directory_swapped_for_an_outside_symlink_is_never_written_through() {
    for mode in MODES {
        let (fx, mut s, base, outside, session) = swapped_dir();
        let bytes = std::fs::read(&session).unwrap();
        let resp = s.call(
            "restore_files",
            json!({"targetEntryId": base, "onConflict": mode}),
        );
        outside_untouched(outside.path());
        let root = fx.root();
        let meta = std::fs::symlink_metadata(root.join("d")).unwrap();
        match mode {
            "abort" => {
                assert_eq!(resp["error"]["code"], 1002, "{resp}");
                assert!(meta.file_type().is_symlink());
                assert_eq!(std::fs::read(&session).unwrap(), bytes);
            }
            "skip" => {
                // The link is dirty (new since the last snapshot): kept, and
                // nothing can be written below it.
                let r = &resp["result"];
                assert!(meta.file_type().is_symlink(), "{resp}");
                let skipped = strs(&r["skipped"]);
                for p in ["d", "d/f.txt", "d/g.txt"] {
                    assert!(skipped.contains(&p.to_string()), "{p} skipped: {r}");
                }
                assert_eq!(r["restored"], json!([]), "{r}");
            }
            _ => {
                // Whatever else happens, nothing goes through the link; if
                // the link is gone, what replaced it is a real directory.
                assert!(resp.get("result").is_some(), "{resp}");
                assert!(meta.is_dir() || meta.file_type().is_symlink(), "{resp}");
                if meta.is_dir() {
                    assert_eq!(fx.read("d/g.txt").as_deref(), Some(&b"g"[..]));
                }
            }
        }
        // Undo (where there is something to undo) does not write through
        // anything either.
        if mode != "abort" {
            let _ = s.call("undo", json!({"onConflict": "overwrite"}));
            outside_untouched(outside.path());
        }
    }
}

#[test]
fn a_file_below_a_kept_symlink_is_not_written_through_it() {
    // `files` names only the file, not the captured symlink standing where
    // its parent directory was: the link stays, and nothing is written
    // through it into the directory it points to.
    let fx = Fixture::new();
    let root = fx.root();
    fx.write("lnk/x.txt", "base");
    fx.write("real/x.txt", "real's own");
    let (mut s, init) = fx.start(json!({}));
    std::fs::remove_dir_all(root.join("lnk")).unwrap();
    std::os::unix::fs::symlink("real", root.join("lnk")).unwrap();
    s.ok("snapshot", json!({}));
    let disk = disk_state(&root);
    for mode in MODES {
        let resp = s.call(
            "restore_files",
            json!({"targetEntryId": init["baseline"]["entryId"], "files": ["lnk/x.txt"], "onConflict": mode}),
        );
        assert_eq!(
            fx.read("real/x.txt").as_deref(),
            Some(&b"real's own"[..]),
            "{mode}: {resp}"
        );
        assert_eq!(disk_state(&root), disk, "{mode}: {resp}");
        if mode == "abort" {
            assert_eq!(resp["error"]["code"], 1002, "{resp}");
        } else {
            let r = &resp["result"];
            assert_eq!(r["skipped"], json!(["lnk/x.txt"]), "{mode}: {r}");
            assert_eq!(r["restored"], json!([]), "{mode}: {r}");
        }
    }
}
