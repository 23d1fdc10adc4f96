//! What people type as points of history: an entry id, a tree hash or
//! `@working` (`Point::parse`), for the CLI and the MCP tools.

use rewind::engine::api::{Point, RangeParams};

/// A range as people name its ends (entry id, tree hash or `@working`,
/// see `Point::parse`); `to` defaults to the working directory.
pub fn range(from: Option<String>, to: Option<String>) -> RangeParams {
    RangeParams {
        from: from.as_deref().map(Point::parse),
        to: Some(to.as_deref().map_or(Point::Working, Point::parse)),
    }
}
