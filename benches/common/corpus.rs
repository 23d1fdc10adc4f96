//! The corpus vocabulary and content helpers both benchmarks generate
//! repository-shaped trees with (`benches/snapshot.rs`, `benches/shadow_git.rs`).
#![allow(dead_code)]

use std::collections::HashSet;
use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result};
use rand::rngs::StdRng;
use rand::{Rng, RngCore, SeedableRng};

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

/// A tracked file of a generated corpus.
#[derive(Clone)]
pub struct GenFile {
    pub rel: String,
    pub size: u64,
    pub binary: bool,
}

/// What [`write_tree`] wrote.
pub struct Written {
    /// Tracked (not ignored) files.
    pub files: Vec<GenFile>,
    pub dirs: usize,
    pub ignored: usize,
    pub ignored_bytes: u64,
}

/// Write a deterministic repository-shaped tree of `n` tracked files and
/// about `bytes` bytes under `root` (which must be new and empty): a random
/// directory tree up to 6 deep, long-tailed sizes, some binary files, and
/// ignored `node_modules/`, `out/` and `*.log` files. Every file is dated an
/// hour back. `bench` names the benchmark in the generated README.
pub fn write_tree(root: &Path, n: usize, bytes: u64, seed: u64, bench: &str) -> Result<Written> {
    let mut rng = StdRng::seed_from_u64(seed);
    let past = SystemTime::now() - Duration::from_secs(3600);
    let pool = text_pool(&mut rng, 8 << 20);

    // Directories: a random recursive tree, depth <= 6 below the root.
    let n_dirs = (n / 14).max(TOP_DIRS.len() + 1);
    let mut dirs: Vec<(String, usize)> = TOP_DIRS.iter().map(|d| (d.to_string(), 1)).collect();
    let mut seen: HashSet<String> = dirs.iter().map(|d| d.0.clone()).collect();
    while dirs.len() < n_dirs {
        let (parent, depth) = dirs[rng.gen_range(0..dirs.len())].clone();
        if depth >= 6 {
            continue;
        }
        let word = DIR_WORDS[rng.gen_range(0..DIR_WORDS.len())];
        let mut name = format!("{parent}/{word}");
        if !seen.insert(name.clone()) {
            name = format!("{parent}/{word}{}", dirs.len());
            seen.insert(name.clone());
        }
        dirs.push((name, depth + 1));
    }
    for (d, _) in &dirs {
        std::fs::create_dir_all(root.join(d))?;
    }

    // Sizes: most files 1-20 KB, a tail to 100 KB, a few tiny ones, and a
    // few files of several MB holding a tenth of the bytes.
    let n_big = (n / 4000).max(1);
    let fixed: Vec<(String, Vec<u8>)> = vec![
        (
            ".gitignore".into(),
            format!(
                "# generated by the rewind {bench} benchmark\nnode_modules/\n/out/\n*.log\n.env\n"
            )
            .into_bytes(),
        ),
        (
            "README.md".into(),
            format!("# Benchmark corpus\n\nGenerated; see benches/{bench}.rs.\n").into_bytes(),
        ),
    ];
    let n_body = n - n_big - fixed.len();
    let mut body: Vec<f64> = (0..n_body)
        .map(|_| {
            let r: f64 = rng.gen();
            if r < 0.02 {
                rng.gen_range(50.0..1000.0)
            } else if r < 0.93 {
                log_uniform(&mut rng, 1024.0, 20480.0)
            } else {
                log_uniform(&mut rng, 20480.0, 102_400.0)
            }
        })
        .collect();
    let body_target = bytes as f64 * 0.9;
    let scale = body_target / body.iter().sum::<f64>();
    body.iter_mut().for_each(|s| *s = (*s * scale).max(16.0));
    let weights: Vec<f64> = (0..n_big).map(|_| rng.gen_range(1.0..3.0)).collect();
    let wsum: f64 = weights.iter().sum();
    let big: Vec<f64> = weights
        .iter()
        .map(|w| bytes as f64 * 0.1 * w / wsum)
        .collect();

    let mut files: Vec<GenFile> = Vec::with_capacity(n);
    for (rel, content) in &fixed {
        write_file(&root.join(rel), content, past)?;
        files.push(GenFile {
            rel: rel.clone(),
            size: content.len() as u64,
            binary: false,
        });
    }
    let mut buf: Vec<u8> = Vec::new();
    let sizes = body
        .iter()
        .map(|s| (*s, false))
        .chain(big.iter().map(|s| (*s, true)));
    for (i, (size, is_big)) in sizes.enumerate() {
        let size = size as usize;
        let (dir, _) = &dirs[rng.gen_range(0..dirs.len())];
        let in_assets = dir.starts_with("assets");
        let binary = if is_big {
            i % 2 == 0
        } else {
            rng.gen_bool(if in_assets { 0.7 } else { 0.04 })
        };
        let stem = FILE_WORDS[rng.gen_range(0..FILE_WORDS.len())];
        let ext = if binary {
            BIN_EXT[rng.gen_range(0..BIN_EXT.len())]
        } else {
            TEXT_EXT[rng.gen_range(0..TEXT_EXT.len())]
        };
        let rel = format!("{dir}/{stem}_{i}.{ext}");
        let content = if binary {
            buf.resize(size, 0);
            rng.fill_bytes(&mut buf);
            std::mem::take(&mut buf)
        } else {
            text_content(&rel, size, &pool, &mut rng)
        };
        write_file(&root.join(&rel), &content, past)?;
        files.push(GenFile {
            rel,
            size: content.len() as u64,
            binary,
        });
        buf = content;
    }

    // Ignored: a dependency directory (node_modules/, ~n/7 files), build
    // output (out/) and logs. None of it may be captured.
    let mut ignored = 0usize;
    let mut ignored_bytes = 0u64;
    let n_pkgs = (n / 140).max(2);
    let per_pkg = (n / 7) / n_pkgs;
    for p in 0..n_pkgs {
        let pkg = format!("node_modules/{}-{p}", FILE_WORDS[p % FILE_WORDS.len()]);
        std::fs::create_dir_all(root.join(&pkg).join("lib"))?;
        std::fs::create_dir_all(root.join(&pkg).join("dist"))?;
        for f in 0..per_pkg {
            let rel = match f {
                0 => format!("{pkg}/package.json"),
                1 => format!("{pkg}/index.js"),
                f if f % 2 == 0 => format!("{pkg}/lib/m{f}.js"),
                f => format!("{pkg}/dist/m{f}.min.js"),
            };
            let size = log_uniform(&mut rng, 500.0, 8000.0) as usize;
            let content = text_content(&rel, size, &pool, &mut rng);
            write_file(&root.join(&rel), &content, past)?;
            ignored += 1;
            ignored_bytes += content.len() as u64;
        }
    }
    std::fs::create_dir_all(root.join("out"))?;
    for f in 0..(n / 100).max(1) {
        let rel = format!("out/chunk{f}.js");
        let content = text_content(&rel, 4000, &pool, &mut rng);
        write_file(&root.join(&rel), &content, past)?;
        ignored += 1;
        ignored_bytes += content.len() as u64;
    }
    for (d, _) in dirs.iter().step_by(97) {
        let rel = format!("{d}/debug.log");
        write_file(&root.join(&rel), b"ignored log line\n", past)?;
        ignored += 1;
        ignored_bytes += 17;
    }
    Ok(Written {
        files,
        dirs: dirs.len(),
        ignored,
        ignored_bytes,
    })
}
