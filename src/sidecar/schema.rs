//! The protocol's JSON Schema, generated from the Rust types in
//! `protocol` (schemars). `schema/rewind-protocol.json` is this output; a
//! test fails when the committed file drifts, and the clients are generated
//! from that file.

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, SchemaGenerator};
use serde_json::{json, Map, Value};

use crate::sidecar::protocol::*;

/// A method as the schema lists it.
struct MethodSpec {
    name: &'static str,
    summary: &'static str,
    params: Option<Value>,
    params_required: bool,
    result: Value,
    mutating: bool,
}

fn sub<T: JsonSchema>(g: &mut SchemaGenerator) -> Value {
    g.subschema_for::<T>().to_value()
}

/// Two generators: params are described as the server *reads* them (an
/// `Option` may be left out), results and notifications as it *writes*
/// them (a field is required unless it is skipped when empty, so an
/// always-sent `null` is required and nullable). Their `$defs` merge into
/// one map; a type used both ways must describe the same shape.
struct Generators {
    params: SchemaGenerator,
    results: SchemaGenerator,
}

/// The whole schema document.
pub fn protocol_schema() -> Value {
    let mut gens = Generators {
        params: SchemaSettings::draft2020_12()
            .for_deserialize()
            .into_generator(),
        results: SchemaSettings::draft2020_12()
            .for_serialize()
            .into_generator(),
    };
    let methods = vec![
        MethodSpec {
            name: "initialize",
            summary: "Open or resume a session; take the baseline snapshot.",
            params: Some(sub::<InitializeParams>(&mut gens.params)),
            params_required: false,
            result: sub::<InitializeResult>(&mut gens.results),
            mutating: true,
        },
        MethodSpec {
            name: "snapshot",
            summary: "Checkpoint the working directory now (turn end, before a tool, manual).",
            params: Some(sub::<SnapshotParams>(&mut gens.params)),
            params_required: false,
            result: sub::<SnapshotResult>(&mut gens.results),
            mutating: true,
        },
        MethodSpec {
            name: "append_entry",
            summary: "Record a host conversation entry, with the host's own id.",
            params: Some(sub::<AppendEntryParams>(&mut gens.params)),
            params_required: false,
            result: sub::<AppendEntryResult>(&mut gens.results),
            mutating: true,
        },
        MethodSpec {
            name: "label",
            summary: "Name or annotate any entry; a null label clears it.",
            params: Some(sub::<LabelParams>(&mut gens.params)),
            params_required: true,
            result: sub::<EntryIdResult>(&mut gens.results),
            mutating: true,
        },
        MethodSpec {
            name: "stage_files",
            summary: "Force-include paths in every later snapshot while they exist, even if ignored.",
            params: Some(sub::<StageFilesParams>(&mut gens.params)),
            params_required: true,
            result: sub::<StageFilesResult>(&mut gens.results),
            mutating: true,
        },
        MethodSpec {
            name: "get_tree",
            summary: "All entries of the session and the leaf.",
            params: None,
            params_required: false,
            result: sub::<GetTreeResult>(&mut gens.results),
            mutating: false,
        },
        MethodSpec {
            name: "list_checkpoints",
            summary: "Tree-recording entries with kinds, labels and counts; query searches labels and notes.",
            params: Some(sub::<ListCheckpointsParams>(&mut gens.params)),
            params_required: false,
            result: sub::<ListCheckpointsResult>(&mut gens.results),
            mutating: false,
        },
        MethodSpec {
            name: "get_modified_files",
            summary: "Files changed between two points, with the entry that first changed each.",
            params: Some(sub::<RangeParams>(&mut gens.params)),
            params_required: false,
            result: sub::<ModifiedFilesResult>(&mut gens.results),
            mutating: false,
        },
        MethodSpec {
            name: "get_file_diff",
            summary: "Old and new content, hashes and unified diff of one file between two points.",
            params: Some(sub::<FileDiffParams>(&mut gens.params)),
            params_required: true,
            result: sub::<Option<FileDiff>>(&mut gens.results),
            mutating: false,
        },
        MethodSpec {
            name: "get_file_history",
            summary: "Every checkpoint that changed one file, oldest first.",
            params: Some(sub::<FileHistoryParams>(&mut gens.params)),
            params_required: true,
            result: sub::<FileHistoryResult>(&mut gens.results),
            mutating: false,
        },
        MethodSpec {
            name: "get_file_blame",
            summary: "For each line of a file (at an entry or @working), the checkpoint that introduced it.",
            params: Some(sub::<FileBlameParams>(&mut gens.params)),
            params_required: true,
            result: sub::<FileBlameResult>(&mut gens.results),
            mutating: false,
        },
        MethodSpec {
            name: "get_status",
            summary: "Working-directory changes since the last approval (or the baseline).",
            params: None,
            params_required: false,
            result: sub::<StatusResult>(&mut gens.results),
            mutating: false,
        },
        MethodSpec {
            name: "stats",
            summary: "Store size, object count, sessions and snapshots.",
            params: None,
            params_required: false,
            result: sub::<StatsResult>(&mut gens.results),
            mutating: false,
        },
        MethodSpec {
            name: "restore_files",
            summary: "Restore all or selected files to a checkpoint; preview returns the plan only.",
            params: Some(sub::<RestoreFilesParams>(&mut gens.params)),
            params_required: false,
            result: sub::<RestoreResult>(&mut gens.results),
            mutating: true,
        },
        MethodSpec {
            name: "navigate_tree",
            summary: "Move the leaf to an entry and (unless skipFiles) restore its files.",
            params: Some(sub::<NavigateTreeParams>(&mut gens.params)),
            params_required: true,
            result: sub::<NavigateTreeResult>(&mut gens.results),
            mutating: true,
        },
        MethodSpec {
            name: "revert",
            summary: "Take one checkpoint's changes (or a range's) out of the working directory, keeping later ones: a three-way merge per file; preview returns the plan only; undoable.",
            params: Some(sub::<RevertParams>(&mut gens.params)),
            params_required: true,
            result: sub::<RevertResult>(&mut gens.results),
            mutating: true,
        },
        MethodSpec {
            name: "undo",
            summary: "Revert the last restore/navigate/reset/revert/undo (an undo is itself undoable).",
            params: Some(sub::<UndoParams>(&mut gens.params)),
            params_required: false,
            result: sub::<RestoreResult>(&mut gens.results),
            mutating: true,
        },
        MethodSpec {
            name: "approve",
            summary: "Lock in the current state as approved.",
            params: Some(sub::<ApproveParams>(&mut gens.params)),
            params_required: false,
            result: sub::<ApproveResult>(&mut gens.results),
            mutating: true,
        },
        MethodSpec {
            name: "reset",
            summary: "Restore the last approved state (or the baseline); undoable.",
            params: Some(sub::<ResetParams>(&mut gens.params)),
            params_required: false,
            result: sub::<ResetResult>(&mut gens.results),
            mutating: true,
        },
        MethodSpec {
            name: "gc",
            summary: "Prune old sessions (keep-rules) and collect unreferenced objects; dryRun reports only.",
            params: Some(sub::<GcParams>(&mut gens.params)),
            params_required: false,
            result: sub::<GcResult>(&mut gens.results),
            mutating: true,
        },
        MethodSpec {
            name: "verify",
            summary: "Read and hash every session's trees and blobs, every object stat caches vouch for and every stored object; report problems, repair nothing.",
            params: None,
            params_required: false,
            result: sub::<VerifyResult>(&mut gens.results),
            mutating: false,
        },
        MethodSpec {
            name: "shutdown",
            summary: "Flush, release locks, exit after replying.",
            params: None,
            params_required: false,
            result: sub::<EmptyResult>(&mut gens.results),
            mutating: false,
        },
    ];
    let mut method_map = Map::new();
    for m in methods {
        method_map.insert(
            m.name.to_string(),
            json!({
                "summary": m.summary,
                "params": m.params,
                "paramsRequired": m.params_required,
                "result": m.result,
                "mutating": m.mutating,
            }),
        );
    }
    let notifications = json!({
        "files_changed": {
            "summary": "Sent once per operation that changed the working directory, before its response.",
            "params": sub::<FilesChanged>(&mut gens.results),
        },
        "progress": {
            "summary": "At most every 100 ms while a restore, navigation, undo or reset writes files.",
            "params": sub::<Progress>(&mut gens.results),
        },
    });
    let mut defs = gens.params.take_definitions(true);
    for (name, schema) in gens.results.take_definitions(true) {
        // A type both read and written must have one shape, or `$ref`s
        // would be ambiguous; the schema tests run this, so a protocol
        // change that breaks it cannot land.
        if let Some(existing) = defs.get(&name) {
            assert!(
                *existing == schema,
                "protocol type {name} is read and written with different shapes; split it"
            );
        }
        defs.insert(name, schema);
    }
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://rewind.dev/schema/rewind-protocol.json",
        "title": "rewind sidecar protocol",
        "protocolVersion": PROTOCOL_VERSION,
        "methods": Value::Object(method_map),
        "notifications": notifications,
        "errors": {
            "-32700": "parse error",
            "-32600": "invalid request",
            "-32601": "unknown method",
            "-32602": "invalid params (including bad paths)",
            "1001": "unknown entry id or tree hash",
            "1002": "restore aborted: conflicts; data.conflicts lists them",
            "1003": "store corruption detected (hash mismatch); data.object names it",
            "1004": "session locked by another process",
            "1005": "I/O error; data.path names the file",
            "1006": "a hunk selection no longer matches the file's diff; data.path and data.index name it"
        },
        "$defs": Value::Object(defs),
    })
}

/// The schema as committed: pretty-printed with a trailing newline.
pub fn protocol_schema_text() -> String {
    let mut s = serde_json::to_string_pretty(&protocol_schema()).unwrap_or_default();
    s.push('\n');
    s
}
