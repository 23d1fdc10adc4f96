//! The MCP server entry rewind registers, as every agent's file names it:
//! its name and how an entry is told to be ours. `mcp.rs` writes it for
//! Claude Code, Gemini CLI, Qwen Code and Codex, `opencode.rs` for OpenCode
//! and Kilo; both recognise it here.

use std::path::Path;

/// The server's name in every agent's configuration.
pub const NAME: &str = "rewind";

/// Whether a server entry (command, arguments) is the one we write.
pub fn is_rewind_mcp(command: &str, args: &[&str]) -> bool {
    let name = Path::new(command).file_name().and_then(|n| n.to_str());
    matches!(name, Some("rewind" | "rewind.exe")) && args == ["mcp"]
}
