//! Links the `rewind` executable as a fixed-address (non-PIE) image on
//! Linux with glibc.
//!
//! Every hook event is a new `rewind` process, so its start-up is paid three
//! times per shell command an agent runs. A position-independent `rewind`
//! carries about 30,000 relative relocations (panic locations, tracing
//! call sites, vtables): the loader rewrites them at every start, copying
//! some 120 pages of read-only data. Linked at a fixed address there are
//! none, and a process takes 0.4 ms less CPU (`rewind --version`: 1.59 →
//! 1.20 ms, 314 → 189 page faults; a warm hook event through the server:
//! 4.0 → 3.4 ms; docs/benchmarks.md, session 14).
//!
//! What it gives up: the executable's own code and data sit at the same
//! address in every process. Its libraries, heap, stack and mappings are
//! still randomized. rewind serves only its own user (a socket only the
//! user can open, a UI bound to 127.0.0.1), which makes that trade worth
//! it here. Only the binaries are linked this way; the library, tests and
//! benches keep the platform's default.

fn main() {
    println!("cargo:rerun-if-changed=src/build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
