//! Content addresses: xxh3-128 of an object's uncompressed bytes.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A string that is not 32 lowercase hex characters, given as an object id.
/// Its own type, so that the id knows nothing of the store's errors (which
/// name ids); `StoreError::BadId` carries it on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid object id {0:?}")]
pub struct BadObjectId(pub String);

/// The address of an object: xxh3-128 of its uncompressed content, stored as the big-endian
/// bytes of the `u128` so that the hex form reads like the number xxh3 prints.
///
/// 128 bits, never fewer: a 32-bit hash already collides inside real test suites, and a
/// collision silently returns one file's content for another.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectId([u8; 16]);

const HEX: &[u8; 16] = b"0123456789abcdef";

impl ObjectId {
    /// Hashes `bytes` (the uncompressed content) into its id.
    pub fn of(bytes: &[u8]) -> ObjectId {
        ObjectId(xxhash_rust::xxh3::xxh3_128(bytes).to_be_bytes())
    }

    /// Wraps raw id bytes (e.g. read back from a binary cache).
    pub const fn from_bytes(bytes: [u8; 16]) -> ObjectId {
        ObjectId(bytes)
    }

    /// The raw id bytes, big-endian.
    pub const fn as_bytes(&self) -> &[u8; 16] {
        &self.0
    }

    /// 32 lowercase hex characters.
    pub fn to_hex(&self) -> String {
        let mut out = String::with_capacity(32);
        for b in self.0 {
            out.push(HEX[usize::from(b >> 4)] as char);
            out.push(HEX[usize::from(b & 0x0f)] as char);
        }
        out
    }

    /// Parses exactly 32 lowercase hex characters. Uppercase is rejected so that every id
    /// has exactly one spelling (ids are compared and stored as strings by clients).
    pub fn from_hex(s: &str) -> Result<ObjectId, BadObjectId> {
        let bytes = s.as_bytes();
        if bytes.len() != 32 {
            return Err(BadObjectId(s.to_string()));
        }
        let mut out = [0u8; 16];
        for (i, pair) in bytes.chunks_exact(2).enumerate() {
            match (nibble(pair[0]), nibble(pair[1])) {
                (Some(hi), Some(lo)) => out[i] = (hi << 4) | lo,
                _ => return Err(BadObjectId(s.to_string())),
            }
        }
        Ok(ObjectId(out))
    }
}

/// [`ObjectId::of`] computed piece by piece, for content streamed from a file
/// rather than held in memory: the same xxh3-128, so the same id.
pub struct IdHasher(xxhash_rust::xxh3::Xxh3Default);

impl IdHasher {
    pub fn new() -> IdHasher {
        IdHasher(xxhash_rust::xxh3::Xxh3Default::new())
    }

    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// The id of everything passed to [`IdHasher::update`] so far.
    pub fn id(&self) -> ObjectId {
        ObjectId(self.0.digest128().to_be_bytes())
    }
}

impl Default for IdHasher {
    fn default() -> Self {
        IdHasher::new()
    }
}

fn nibble(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    }
}

impl fmt::Display for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl fmt::Debug for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl FromStr for ObjectId {
    type Err = BadObjectId;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ObjectId::from_hex(s)
    }
}

impl Serialize for ObjectId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_hex())
    }
}

impl<'de> Deserialize<'de> for ObjectId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Borrowing would fail for JSON strings with escapes; an owned String always works.
        let s = String::deserialize(deserializer)?;
        ObjectId::from_hex(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trip() {
        let id = ObjectId::of(b"hello\n");
        let hex = id.to_hex();
        assert_eq!(hex.len(), 32);
        assert!(hex
            .bytes()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c)));
        assert_eq!(ObjectId::from_hex(&hex).unwrap(), id);
        assert_eq!(format!("{id}"), hex);
        assert_eq!(format!("{id:?}"), hex);
    }

    #[test]
    fn id_is_big_endian_xxh3_128() {
        let bytes = b"some content";
        let expected = format!("{:032x}", xxhash_rust::xxh3::xxh3_128(bytes));
        assert_eq!(ObjectId::of(bytes).to_hex(), expected);
    }

    #[test]
    fn streamed_hash_is_the_one_shot_id() {
        let content: Vec<u8> = (0..1_000_003u32).map(|i| (i * 7 % 251) as u8).collect();
        for piece in [1, 63, 4096, 1 << 20] {
            let mut h = IdHasher::new();
            for c in content.chunks(piece) {
                h.update(c);
            }
            assert_eq!(h.id(), ObjectId::of(&content), "pieces of {piece}");
        }
        assert_eq!(IdHasher::new().id(), ObjectId::of(b""));
    }

    #[test]
    fn from_hex_rejects_bad_input() {
        let good = ObjectId::of(b"x").to_hex();
        for bad in [
            String::new(),
            good[..31].to_string(),
            format!("{good}0"),
            good.to_uppercase(),
            format!("g{}", &good[1..]),
            format!(" {}", &good[1..]),
            "é".repeat(16),
        ] {
            assert!(
                matches!(ObjectId::from_hex(&bad), Err(BadObjectId(s)) if s == bad),
                "accepted {bad:?}"
            );
        }
    }

    #[test]
    fn serde_as_hex_string() {
        let id = ObjectId::of(b"serde");
        let json = serde_json::to_string(&id).unwrap();
        assert_eq!(json, format!("\"{}\"", id.to_hex()));
        let back: ObjectId = serde_json::from_str(&json).unwrap();
        assert_eq!(back, id);
        assert!(serde_json::from_str::<ObjectId>("\"abc\"").is_err());
        assert!(serde_json::from_str::<ObjectId>("17").is_err());
    }
}
