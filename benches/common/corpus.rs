//! The corpus vocabulary and content helpers both benchmarks generate
//! repository-shaped trees with (`benches/snapshot.rs`, `benches/shadow_git.rs`).
#![allow(dead_code)]

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::time::SystemTime;

use anyhow::{Context, Result};
use rand::rngs::StdRng;
use rand::Rng;

pub const TOP_DIRS: &[&str] = &[
    "src", "lib", "tests", "docs", "assets", "packages", "tools", "scripts", "examples",
];

pub const DIR_WORDS: &[&str] = &[
    "core",
    "util",
    "api",
    "server",
    "client",
    "models",
    "views",
    "components",
    "hooks",
    "internal",
    "pkg",
    "cmd",
    "handlers",
    "middleware",
    "db",
    "migrations",
    "schema",
    "fixtures",
    "i18n",
    "styles",
    "icons",
    "images",
    "fonts",
    "parser",
    "lexer",
    "codegen",
    "runtime",
    "plugins",
    "config",
    "services",
    "store",
    "routes",
    "types",
    "helpers",
    "legacy",
    "experimental",
    "v1",
    "v2",
    "widgets",
    "auth",
    "cache",
    "net",
    "io",
];

pub const FILE_WORDS: &[&str] = &[
    "index",
    "main",
    "mod",
    "utils",
    "helpers",
    "types",
    "config",
    "client",
    "server",
    "handler",
    "router",
    "model",
    "view",
    "controller",
    "service",
    "store",
    "parser",
    "lexer",
    "token",
    "ast",
    "eval",
    "format",
    "render",
    "layout",
    "button",
    "table",
    "list",
    "item",
    "user",
    "session",
    "auth",
    "cache",
    "queue",
    "worker",
    "job",
    "task",
    "event",
    "stream",
    "buffer",
    "error",
    "result",
    "option",
    "test",
    "spec",
    "bench",
];

pub const TEXT_EXT: &[&str] = &[
    "rs", "ts", "tsx", "js", "py", "go", "c", "h", "md", "json", "toml", "yaml", "css", "html",
];
pub const BIN_EXT: &[&str] = &["png", "jpg", "woff2", "ico", "wasm", "bin", "pdf", "gz"];

pub const CODE_WORDS: &[&str] = &[
    "fn",
    "let",
    "mut",
    "const",
    "return",
    "if",
    "else",
    "for",
    "while",
    "match",
    "impl",
    "struct",
    "enum",
    "pub",
    "use",
    "self",
    "Self",
    "async",
    "await",
    "import",
    "from",
    "export",
    "function",
    "class",
    "def",
    "value",
    "result",
    "error",
    "config",
    "options",
    "buffer",
    "index",
    "count",
    "length",
    "path",
    "name",
    "data",
    "items",
    "node",
    "tree",
    "parent",
    "child",
    "state",
    "context",
    "request",
    "response",
    "handler",
    "callback",
    "string",
    "number",
    "boolean",
    "Vec",
    "HashMap",
    "Option",
    "Some",
    "None",
    "Ok",
    "Err",
    "true",
    "false",
    "null",
    "undefined",
    "new",
    "push",
    "insert",
    "get",
    "set",
    "len",
    "iter",
    "map",
    "filter",
    "collect",
    "unwrap",
    "expect",
    "clone",
    "into",
    "as_ref",
    "to_string",
    "format",
    "println",
    "assert_eq",
    "debug",
    "info",
    "warn",
    "trace",
    "0",
    "1",
    "2",
    "42",
    "1024",
    "\"hello\"",
    "\"/api/v1\"",
    "'utf-8'",
    "x",
    "y",
    "i",
    "j",
    "k",
];
pub const SEPARATORS: &[&str] = &[
    " ", " ", " ", "(", ", ", ".", " = ", "::", ") ", "[", "] ", ": ",
];

/// Pseudo-source text to cut file contents from (compresses like code).
pub fn text_pool(rng: &mut StdRng, len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len + 256);
    while out.len() < len {
        let indent = rng.gen_range(0..5) * 4;
        out.extend(std::iter::repeat_n(b' ', indent));
        for _ in 0..rng.gen_range(2..12) {
            out.extend_from_slice(CODE_WORDS[rng.gen_range(0..CODE_WORDS.len())].as_bytes());
            out.extend_from_slice(SEPARATORS[rng.gen_range(0..SEPARATORS.len())].as_bytes());
        }
        out.extend_from_slice([";\n", "\n", " {\n", "}\n", ",\n"][rng.gen_range(0..5)].as_bytes());
    }
    out
}

pub fn log_uniform(rng: &mut StdRng, lo: f64, hi: f64) -> f64 {
    (lo.ln() + rng.gen::<f64>() * (hi.ln() - lo.ln())).exp()
}

/// Write a file and date it `mtime` (in the past), so that no snapshot sees
/// it inside the racy-timestamp window and git's index sees it clean.
pub fn write_file(path: &Path, content: &[u8], mtime: SystemTime) -> Result<()> {
    let mut f = File::create(path).with_context(|| format!("creating {}", path.display()))?;
    f.write_all(content)?;
    f.set_modified(mtime)?;
    Ok(())
}

pub fn text_content(rel: &str, size: usize, pool: &[u8], rng: &mut StdRng) -> Vec<u8> {
    let mut out = Vec::with_capacity(size.max(rel.len() + 5));
    out.extend_from_slice(b"// ");
    out.extend_from_slice(rel.as_bytes());
    out.push(b'\n');
    let mut pos = rng.gen_range(0..pool.len());
    while out.len() < size {
        let take = (size - out.len()).min(pool.len() - pos);
        out.extend_from_slice(&pool[pos..pos + take]);
        pos = 0;
    }
    out
}
