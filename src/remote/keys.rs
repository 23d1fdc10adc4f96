//! The names of everything rewind puts on a remote, under its URL's prefix
//! (docs/remote.md "What is uploaded"): the one place they are spelled.
//!
//! ```text
//! packs/<32 hex>.pack                   records, as a local pack holds them
//! packs/<32 hex>.idx                    its index, uploaded after the pack
//! sessions/<id>/chunks/<32 hex>.jsonl   whole lines of a session file
//! sessions/<id>/manifests/<writer>.json one store's copy of the session, written last
//! ```
//!
//! Packs and chunks are named by the xxh3-128 of their bytes, so they are
//! immutable: uploading one again writes the same bytes.

use object_store::path::Path;

const PACKS: &str = "packs";
const SESSIONS: &str = "sessions";
const CHUNKS: &str = "chunks";
const MANIFESTS: &str = "manifests";

pub fn packs_dir() -> Path {
    Path::from(PACKS)
}

pub fn pack(name: &str) -> Path {
    Path::from(format!("{PACKS}/{name}.pack"))
}

pub fn pack_index(name: &str) -> Path {
    Path::from(format!("{PACKS}/{name}.idx"))
}

pub fn sessions_dir() -> Path {
    Path::from(SESSIONS)
}

pub fn chunk(session: &str, hash: &str) -> Path {
    Path::from(format!("{SESSIONS}/{session}/{CHUNKS}/{hash}.jsonl"))
}

pub fn manifests_dir(session: &str) -> Path {
    Path::from(format!("{SESSIONS}/{session}/{MANIFESTS}"))
}

pub fn manifest(session: &str, writer: &str) -> Path {
    Path::from(format!("{SESSIONS}/{session}/{MANIFESTS}/{writer}.json"))
}

/// A listed key under `packs/` as (name, is its index), when it is one.
pub fn parse_pack_key(key: &Path) -> Option<(String, bool)> {
    let file = key.filename()?;
    let (name, ext) = file.split_once('.')?;
    if !is_hash(name) {
        return None;
    }
    match ext {
        "pack" => Some((name.to_owned(), false)),
        "idx" => Some((name.to_owned(), true)),
        _ => None,
    }
}

/// 32 lowercase hex characters: an xxh3-128 as rewind spells it.
pub fn is_hash(s: &str) -> bool {
    s.len() == 32
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// A session id or writer id as it may appear in a key: the characters an
/// entry id may have, minus '/' and anything a URL would escape.
pub fn is_safe_component(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}
