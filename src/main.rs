//! The `rewind` binary: `rewind serve` is the sidecar; the other
//! subcommands are for people at a terminal, agents' hooks, MCP clients and
//! the browser. All of them live in `app/`.

mod app;

fn main() -> std::process::ExitCode {
    app::main()
}
