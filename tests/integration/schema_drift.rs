//! schema/ is generated from the Rust protocol types; this fails when the
//! committed file drifts from what the code generates. To update:
//! `cargo run -- schema > schema/rewind-protocol.json`.

use std::path::Path;

#[test]
fn committed_schema_matches_the_code() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/rewind-protocol.json");
    let committed = std::fs::read_to_string(&path).expect("schema/rewind-protocol.json exists");
    let generated = rewind::sidecar::schema::protocol_schema_text();
    assert!(
        committed == generated,
        "schema/rewind-protocol.json is stale: run `cargo run -- schema > schema/rewind-protocol.json`"
    );
}

#[test]
fn cli_prints_the_same_schema() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rewind"))
        .arg("schema")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        rewind::sidecar::schema::protocol_schema_text()
    );
}

#[test]
fn schema_lists_every_registered_method() {
    let schema = rewind::sidecar::schema::protocol_schema();
    let listed: Vec<&str> = schema["methods"]
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    let (notifier, _outbox) = rewind::sidecar::rpc::notifier_channel();
    let server = rewind::sidecar::handlers::Sidecar::new(
        Default::default(),
        notifier,
        rewind::sidecar::rpc::Shutdown::new(),
    );
    let module = rewind::sidecar::handlers::module(server).unwrap();
    let mut registered: Vec<&str> = module.method_names().collect();
    registered.sort();
    let mut listed_sorted = listed.clone();
    listed_sorted.sort();
    assert_eq!(registered, listed_sorted);
    // Every referenced definition exists.
    let text = serde_json::to_string(&schema).unwrap();
    for r in text.split("\"$ref\":\"#/$defs/").skip(1) {
        let name = &r[..r.find('"').unwrap()];
        assert!(schema["$defs"].get(name).is_some(), "dangling $ref {name}");
    }
}
