//! The records' tests: each kind's byte-for-byte round trip, fields from a newer
//! writer kept, older records still read, and the trees a record names.

use super::*;
use serde_json::json;

/// Lines as this build (and the builds before the records were typed) write them, one
/// per kind; docs/format.md shows most of them.
const LINES: [&str; 7] = [
    r#"{"type":"custom","customType":"step-snapshot","id":"86ce5c08","parentId":"msg-1","timestamp":"2026-11-21T19:24:13.204Z","data":{"baselineTreeHash":"810ab7351f88ca6bb6c7a2dbc2743db2","diff":{"added":[],"deleted":["README.md"],"modified":[]},"kind":"tool","snapshotTreeHash":"d0876e98e4181ca86651c39262296a8e","stats":{"bytesHashed":0,"durationMs":3,"filesHashed":0,"filesScanned":0,"untracked":[]},"tool":{"input":{"command":"rm README.md"},"name":"bash"},"turnIndex":2}}"#,
    r#"{"type":"custom","customType":"step-snapshot","id":"86ce5c09","parentId":null,"timestamp":"2026-11-21T19:24:13.204Z","data":{"baselineTreeHash":"51fd0135fcfcf45e6225cd976f0b2cb5","diff":{"added":["a","b c"],"deleted":[],"modified":[]},"git":{"branch":null,"head":"abc"},"kind":"baseline","label":"start","snapshotTreeHash":"d0876e98e4181ca86651c39262296a8e","stagedPaths":["gen/x"],"stats":{"bytesHashed":12,"durationMs":3,"filesHashed":2,"filesScanned":2,"untracked":[{"path":"big.bin","reason":"tooLarge"}]},"turnIndex":0}}"#,
    r#"{"type":"label","id":"5de148ec","parentId":"86ce5c08","timestamp":"2026-11-21T19:24:13.214Z","label":"util added","note":"before the readme went","targetId":"c1ebd1b4"}"#,
    r#"{"type":"custom","customType":"unrevert-point","id":"2f2b51fa","parentId":"16387ab0","timestamp":"2026-11-21T19:28:39.732Z","data":{"diff":{"added":["README.md"],"deleted":[],"modified":[]},"kind":"restore","preRollbackTreeHash":"e8db8f14fed75277748d60077e4800f5","restoredFiles":["README.md"],"rolledBackToLeaf":null,"targetTreeHash":"8f0c8f5c9196a48899c96128cc7395dd","turnIndex":3,"undoneEntryId":"1f2b51fa","workingTreeHash":"329736c5493a587adea89eb8880efafd"}}"#,
    r#"{"type":"custom","customType":"approval","id":"17a47629","parentId":"a0ee909f","timestamp":"2026-11-21T19:28:39.833Z","data":{"approvedTreeHash":"8f0c8f5c9196a48899c96128cc7395dd","message":"v1 is good","snapshotsApproved":5,"workingTreeHash":"8f0c8f5c9196a48899c96128cc7395dd"}}"#,
    r#"{"type":"custom","customType":"navigation","id":"f2fbcb73","parentId":"2f29886e","timestamp":"2026-11-21T19:28:39.884Z","data":{"oldLeafId":"4fb83df4","skipFiles":true,"targetId":"2f29886e"}}"#,
    r#"{"type":"branch_summary","id":"8318033c","parentId":"035f5472","timestamp":"2026-11-21T19:28:39.793Z","details":{"oldLeafId":"83d7ac8b"},"fromId":"035f5472","summary":"Left a branch of 5 checkpoint(s) ending at 83d7ac8b; files changed: README.md, src/main.rs, src/util.rs"}"#,
];

fn entry(line: &str) -> Entry {
    Entry::from_value(serde_json::from_str(line).unwrap()).unwrap()
}

/// Reads `line` as `R` and writes it again as an append would.
fn rewrite<R: Record>(line: &str) -> String {
    let e = entry(line);
    let r = R::read(&e)
        .expect("the line's kind")
        .expect("the line reads");
    let new = r.to_new_entry(None, e.parent_id.clone()).unwrap();
    Entry::from_value(Value::Object(new.into_raw(&e.id, &e.timestamp)))
        .unwrap()
        .to_line()
}

fn rewrite_any(line: &str) -> String {
    let e = entry(line);
    match AnyRecord::read(&e).expect("one of rewind's kinds").unwrap() {
        AnyRecord::StepSnapshot(_) => rewrite::<StepSnapshot>(line),
        AnyRecord::UnrevertPoint(_) => rewrite::<UnrevertPoint>(line),
        AnyRecord::Approval(_) => rewrite::<Approval>(line),
        AnyRecord::Navigation(_) => rewrite::<Navigation>(line),
        AnyRecord::Label(_) => rewrite::<Label>(line),
        AnyRecord::BranchSummary(_) => rewrite::<BranchSummary>(line),
    }
}

#[test]
fn every_kind_reads_and_writes_back_byte_for_byte() {
    for line in LINES {
        assert_eq!(rewrite_any(line), line);
    }
}

#[test]
fn fields_from_a_newer_writer_are_kept() {
    let lines = [
        r#"{"type":"custom","customType":"step-snapshot","id":"a","parentId":null,"timestamp":"t","data":{"baselineTreeHash":"0000000000000000000000000000000b","diff":{"added":[],"deleted":[],"modified":[]},"future":{"x":[1,2.5,null,true]},"git":{"branch":"main","dirty":true,"head":"h"},"kind":"turn","snapshotTreeHash":"0000000000000000000000000000000c","stats":{"bytesHashed":0,"durationMs":0,"filesHashed":0,"filesScanned":0,"filesSkipped":4,"untracked":[]},"tool":{"name":"bash","version":2},"turnIndex":1}}"#,
        r#"{"type":"label","id":"l","parentId":"a","timestamp":"t","color":"red","label":null,"targetId":"a"}"#,
        r#"{"type":"custom","customType":"navigation","id":"n","parentId":"a","timestamp":"t","data":{"oldLeafId":"o","reason":"ui","targetId":"a"}}"#,
        r#"{"type":"branch_summary","id":"b","parentId":"a","timestamp":"t","details":{"more":1,"oldLeafId":"o"},"fromId":"a","summary":"s"}"#,
    ];
    for line in lines {
        assert_eq!(rewrite_any(line), line);
    }
    let s: StepSnapshot = entry(lines[0]).record().unwrap();
    assert_eq!(s.extra["future"], json!({"x":[1,2.5,null,true]}));
    assert_eq!(s.stats.extra["filesSkipped"], json!(4));
    // The leading keys are the entry's, not the record's.
    let l: Label = entry(lines[1]).record().unwrap();
    assert_eq!(Value::Object(l.extra), json!({"color": "red"}));
}

#[test]
fn records_name_their_trees_and_nothing_else_does() {
    let trees = |line: &str| -> Vec<String> {
        let trees = entry(line).referenced_trees().unwrap();
        trees.iter().map(ObjectId::to_hex).collect()
    };
    assert_eq!(
        trees(LINES[0]),
        [
            "810ab7351f88ca6bb6c7a2dbc2743db2",
            "d0876e98e4181ca86651c39262296a8e"
        ]
    );
    assert!(trees(LINES[2]).is_empty());
    assert_eq!(
        trees(LINES[3]),
        [
            "e8db8f14fed75277748d60077e4800f5",
            "8f0c8f5c9196a48899c96128cc7395dd",
            "329736c5493a587adea89eb8880efafd"
        ]
    );
    assert_eq!(trees(LINES[4]).len(), 2);
    assert!(trees(LINES[5]).is_empty());
    assert!(trees(LINES[6]).is_empty());
    // A tree a newer writer references under a field this build does not know is kept;
    // a string there that is not a tree hash names no tree.
    assert_eq!(
        trees(
            r#"{"type":"custom","customType":"approval","id":"a","timestamp":"t","data":{"approvedTreeHash":"0000000000000000000000000000000a","newerTreeHash":"0000000000000000000000000000000b","otherTreeHash":"not one"}}"#
        ),
        [
            "0000000000000000000000000000000a",
            "0000000000000000000000000000000b"
        ]
    );
    // Entries that are not rewind's name no tree, whatever their keys.
    assert!(trees(
        r#"{"type":"message","id":"m","timestamp":"t","data":{"snapshotTreeHash":"x"}}"#
    )
    .is_empty());
    assert!(trees(r#"{"type":"custom","customType":"host","id":"h","timestamp":"t","data":{"workingTreeHash":"x"}}"#).is_empty());
}

#[test]
fn a_malformed_record_is_an_error_not_an_empty_one() {
    let e = entry(
        r#"{"type":"custom","customType":"step-snapshot","id":"a","timestamp":"t","data":{"snapshotTreeHash":"s","turnIndex":"three"}}"#,
    );
    assert!(e.referenced_trees().is_err());
    assert!(StepSnapshot::read(&e).unwrap().is_err());
    assert_eq!(e.record::<StepSnapshot>(), None);
    // It records no checkpoint (as one without a tree), and breaks nothing else.
    assert_eq!(e.recorded_tree(), None);
    assert!(e.is_rewind_record());
    // A tree hash that is not 32 lowercase hex digits names no tree: the record does
    // not read either (rather than passing the bad hash on to whoever uses it).
    for bad in ["zz", "S", "0123456789ABCDEF0123456789ABCDEF", ""] {
        let e = entry(&format!(
            r#"{{"type":"custom","customType":"step-snapshot","id":"a","timestamp":"t","data":{{"snapshotTreeHash":"{bad}"}}}}"#
        ));
        assert!(StepSnapshot::read(&e).unwrap().is_err(), "{bad:?}");
        assert!(e.referenced_trees().is_err(), "{bad:?}");
        assert_eq!(e.recorded_tree(), None);
    }
}

#[test]
fn older_and_partial_records_still_read() {
    // Only the tree: still a checkpoint.
    let e = entry(
        r#"{"type":"custom","customType":"step-snapshot","id":"a","timestamp":"t","data":{"snapshotTreeHash":"0000000000000000000000000000000c"}}"#,
    );
    assert_eq!(
        e.recorded_tree().map(|t| t.to_hex()).as_deref(),
        Some("0000000000000000000000000000000c")
    );
    assert_eq!(e.turn_index(), 0);
    // No data at all: a kind without a checkpoint.
    let e = entry(r#"{"type":"custom","customType":"unrevert-point","id":"u","timestamp":"t"}"#);
    assert_eq!(e.recorded_tree(), None);
    assert_eq!(e.referenced_trees().unwrap(), Vec::<ObjectId>::new());
}

fn hashes(v: Value) -> Vec<String> {
    let mut out = Vec::new();
    collect_tree_hashes(&v, false, &mut out);
    out.sort();
    out
}

#[test]
fn tree_hashes_are_found_at_any_depth() {
    let v = json!({
        "type": "custom",
        "data": {
            "snapshotTreeHash": "a",
            "baselineTreeHash": "b",
            "treeHash": "c",
            "other": "not me",
            "nested": {"targetTreeHash": "d", "deeper": [{"approvedTreeHash": "e"}]},
            "listTreeHash": ["f", "g", 3, null],
            "objTreeHash": {"x": "not me either", "preRollbackTreeHash": "h"},
            "label": "i",
            "TreeHashes": "no",
        },
        "workingTreeHash": "j",
    });
    assert_eq!(hashes(v), ["a", "b", "c", "d", "e", "f", "g", "h", "j"]);
    assert!(is_tree_hash_key("TreeHash"));
    assert!(!is_tree_hash_key("Hash"));
    assert!(!is_tree_hash_key("é"));
}
