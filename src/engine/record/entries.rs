//! Entries hosts add to the session: their conversation (`append_entry`),
//! labels, and the staged set; plus the tree view of the session.

use serde_json::{json, Map, Value};

use crate::engine::api::{
    AppendEntryParams, AppendEntryResult, EntryIdResult, GetTreeResult, HostEntryType, LabelParams,
    StageFilesParams, StageFilesResult, TreeEntryInfo,
};
use crate::engine::{Engine, EngineError, Result};
use crate::session::records::{Label, Record};
use crate::session::{
    valid_host_id, NewEntry, CUSTOM_APPROVAL, CUSTOM_NAVIGATION, CUSTOM_STEP_SNAPSHOT,
    CUSTOM_UNREVERT_POINT, TYPE_CUSTOM, TYPE_MESSAGE,
};

/// `Engine::append_entry` (the door in engine/mod.rs says what it does).
pub(crate) fn append_entry(engine: &mut Engine, p: AppendEntryParams) -> Result<AppendEntryResult> {
    if let Some(id) = &p.entry_id {
        if !valid_host_id(id.as_str()) {
            return Err(EngineError::InvalidParams(format!(
                "entryId {id:?} must be a non-empty string without whitespace, at most 64 characters"
            )));
        }
        if let Some(existing) = engine.log.index().get(id) {
            // Re-sending an id is idempotent, unless it would move the
            // entry elsewhere in the tree.
            if let Some(parent) = &p.parent_id {
                if existing.parent_id.as_ref() != Some(parent) {
                    return Err(EngineError::InvalidParams(format!(
                        "entry {id} exists with parentId {}, not {parent:?}",
                        existing
                            .parent_id
                            .as_ref()
                            .map(|p| format!("{p:?}"))
                            .unwrap_or_else(|| "null".into())
                    )));
                }
            }
            return Ok(AppendEntryResult {
                entry_id: id.clone(),
                existed: true,
            });
        }
    }
    let parent = engine.parent_or_leaf(p.parent_id)?;
    let mut fields = Map::new();
    let (entry_type, custom_type) = match p.entry_type.unwrap_or_default() {
        HostEntryType::Message => {
            // pi's message entries carry {role, content}.
            let mut message = Map::new();
            message.insert("role".into(), json!(p.role.as_deref().unwrap_or("user")));
            if let Some(text) = &p.text {
                message.insert("content".into(), json!(text));
            }
            fields.insert("message".into(), Value::Object(message));
            (TYPE_MESSAGE.to_string(), None)
        }
        HostEntryType::Custom => {
            let Some(ct) = p.custom_type else {
                return Err(EngineError::InvalidParams(
                    "entryType \"custom\" needs a customType".into(),
                ));
            };
            let reserved = [
                CUSTOM_STEP_SNAPSHOT,
                CUSTOM_UNREVERT_POINT,
                CUSTOM_APPROVAL,
                CUSTOM_NAVIGATION,
            ];
            if reserved.contains(&ct.as_str()) {
                return Err(EngineError::InvalidParams(format!(
                    "customType {ct:?} is reserved for the sidecar's own entries"
                )));
            }
            if let Some(role) = &p.role {
                fields.insert("role".into(), json!(role));
            }
            if let Some(text) = &p.text {
                fields.insert("text".into(), json!(text));
            }
            (TYPE_CUSTOM.to_string(), Some(ct))
        }
    };
    if let Some(data) = p.data {
        fields.insert("data".into(), data);
    }
    let entry = engine.log.append(NewEntry {
        entry_type,
        custom_type,
        id: p.entry_id,
        parent_id: parent,
        fields,
    })?;
    Ok(AppendEntryResult {
        entry_id: entry.id,
        existed: false,
    })
}

/// `Engine::label` (the door in engine/mod.rs says what it does).
pub(crate) fn label(engine: &mut Engine, p: LabelParams) -> Result<EntryIdResult> {
    if !engine.log.index().contains(&p.target_id) {
        return Err(EngineError::UnknownEntry(p.target_id));
    }
    let record = Label {
        target_id: Some(p.target_id),
        label: p.label,
        note: p.note,
        extra: Default::default(),
    };
    let leaf = engine.leaf_id();
    let entry = engine.log.append(record.to_new_entry(None, leaf)?)?;
    Ok(EntryIdResult { entry_id: entry.id })
}

/// `Engine::stage_files` (the door in engine/mod.rs says what it does).
pub(crate) fn stage_files(engine: &mut Engine, p: StageFilesParams) -> Result<StageFilesResult> {
    let mut parsed = Vec::with_capacity(p.paths.len());
    for raw in &p.paths {
        let rp = crate::engine::parse_path(engine.working_copy.root(), raw)?;
        let raw = raw.as_str();
        if let Some(link) = engine.working_copy.blocking_parent(rp.as_str()) {
            return Err(EngineError::InvalidParams(format!(
                "{raw:?} is below {link:?}, which is not a real directory (a symlink or a \
                 file); stage the path it points to instead"
            )));
        }
        if crate::store::names_git_dir(rp.as_str()) {
            return Err(EngineError::InvalidParams(format!(
                "{raw:?} is inside a .git directory, which is never captured"
            )));
        }
        parsed.push(rp);
    }
    // All or nothing: validate every path before staging any.
    engine.working_copy.stage(parsed);
    Ok(StageFilesResult {
        staged: engine
            .working_copy
            .staged()
            .iter()
            .map(|p| crate::engine::result_path(p))
            .collect(),
    })
}

/// `Engine::get_tree` (the door in engine/mod.rs says what it does).
pub(crate) fn get_tree(engine: &Engine) -> Result<GetTreeResult> {
    let index = engine.log.index();
    let entries = index
        .entries()
        .iter()
        .map(|e| TreeEntryInfo {
            id: e.id.clone(),
            parent_id: e.parent_id.clone(),
            entry_type: e.entry_type.clone(),
            custom_type: e.custom_type.clone(),
            label: crate::engine::label_for(index, e, engine.working_copy.root()),
            timestamp: e.timestamp.clone(),
        })
        .collect();
    Ok(GetTreeResult {
        entries,
        leaf_id: engine.leaf_id(),
    })
}
