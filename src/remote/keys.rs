//! The names of everything rewind puts on a remote, under its URL's prefix
//! (docs/remote.md "What is uploaded"): the one place they are spelled.
//!
//! ```text
//! packs/<32 hex>.pack                   records, as a local pack holds them
//! packs/<32 hex>.idx                    its index, uploaded after the pack
//! packs/<32 hex>.gc                     gc found the pack unreferenced (deleted by a later gc)
//! sessions/<id>/chunks/<32 hex>.jsonl   whole lines of a session file
//! sessions/<id>/manifests/<writer>.json one store's copy of the session, written last
//! ```
//!
//! Nothing but a manifest is ever written twice: a pack has a random
//! 128-bit name of its own (so a pack pushed again never lands on a key a
//! gc is deleting), and a chunk is named by the xxh3-128 of its bytes (a
//! chunk uploaded again writes the same bytes).

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

/// gc's mark on a pack it found unreferenced: a later gc deletes the
/// pack if it still is, and a push does not count on its objects.
pub fn pack_mark(name: &str) -> Path {
    Path::from(format!("{PACKS}/{name}.gc"))
}

pub fn sessions_dir() -> Path {
    Path::from(SESSIONS)
}

pub fn chunk(session: &str, hash: &str) -> Path {
    Path::from(format!("{SESSIONS}/{session}/{CHUNKS}/{hash}.jsonl"))
}

/// Everything of one session: its chunks and manifests.
pub fn session_dir(session: &str) -> Path {
    Path::from(format!("{SESSIONS}/{session}"))
}

pub fn manifests_dir(session: &str) -> Path {
    Path::from(format!("{SESSIONS}/{session}/{MANIFESTS}"))
}

pub fn manifest(session: &str, writer: &str) -> Path {
    Path::from(format!("{SESSIONS}/{session}/{MANIFESTS}/{writer}.json"))
}

/// The session id and writer a manifest's key names, when it is one
/// rewind writes (both of the id grammar).
pub fn parse_manifest_key(key: &Path) -> Option<(String, String)> {
    let parts: Vec<_> = key.parts().collect();
    let [s, session, m, file] = &parts[..] else {
        return None;
    };
    let writer = file.as_ref().strip_suffix(".json")?;
    (s.as_ref() == SESSIONS
        && m.as_ref() == MANIFESTS
        && is_safe_component(session.as_ref())
        && is_safe_component(writer))
    .then(|| (session.as_ref().to_owned(), writer.to_owned()))
}

/// The session id a chunk's key names, when it is one rewind writes.
pub fn parse_chunk_key(key: &Path) -> Option<String> {
    let parts: Vec<_> = key.parts().collect();
    let [s, session, c, file] = &parts[..] else {
        return None;
    };
    let hash = file.as_ref().strip_suffix(".jsonl")?;
    (s.as_ref() == SESSIONS
        && c.as_ref() == CHUNKS
        && is_safe_component(session.as_ref())
        && is_hash(hash))
    .then(|| session.as_ref().to_owned())
}

/// What a key under `packs/` is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PackKey {
    Pack(String),
    Index(String),
    Mark(String),
}

/// A listed key under `packs/`, when it is one of rewind's.
pub fn parse_pack_key(key: &Path) -> Option<PackKey> {
    let file = key.filename()?;
    let (name, ext) = file.split_once('.')?;
    if !is_hash(name) {
        return None;
    }
    let name = name.to_owned();
    match ext {
        "pack" => Some(PackKey::Pack(name)),
        "idx" => Some(PackKey::Index(name)),
        "gc" => Some(PackKey::Mark(name)),
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
