//! A cache file's body behind its checksum (docs/format.md "Stat cache",
//! "Saved flat tree"): an xxh3-64 of the body, little-endian, then the body.
//! The stat cache and the saved flat tree are read whole or not at all.

use std::io::{Read, Write};

/// Writes the checksum of `body`, then `body`.
pub(crate) fn write(w: &mut impl Write, body: &[u8]) -> std::io::Result<()> {
    w.write_all(&xxhash_rust::xxh3::xxh3_64(body).to_le_bytes())?;
    w.write_all(body)
}

/// The rest of `r`, when it is a checksum and the body it matches; `None`
/// for a torn or damaged one.
pub(crate) fn read(r: &mut impl Read) -> std::io::Result<Option<Vec<u8>>> {
    let mut sum = [0u8; 8];
    r.read_exact(&mut sum)?;
    let mut body = Vec::new();
    r.read_to_end(&mut body)?;
    Ok((xxhash_rust::xxh3::xxh3_64(&body) == u64::from_le_bytes(sum)).then_some(body))
}
