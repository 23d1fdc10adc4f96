//! The page, embedded in the binary: no build step, no separate install,
//! nothing loaded from outside (the Content-Security-Policy in `guard`
//! forbids it anyway). `vendor/highlight.min.js` is highlight.js's
//! prebuilt browser bundle, copied unchanged from the npm package
//! `@highlightjs/cdn-assets` at the version tests/ui-browser/package.json
//! pins (its test checks the copy byte for byte); its license is beside it.

/// The page; `__REWIND_TOKEN__` and `__REWIND_READ_ONLY__` are filled in
/// when it is served.
pub const INDEX: &str = include_str!("assets/index.html");

const FILES: &[(&str, &str, &[u8])] = &[
    (
        "app.js",
        "text/javascript; charset=utf-8",
        include_bytes!("assets/app.js"),
    ),
    (
        "app.css",
        "text/css; charset=utf-8",
        include_bytes!("assets/app.css"),
    ),
    (
        "favicon.svg",
        "image/svg+xml",
        include_bytes!("assets/favicon.svg"),
    ),
    (
        "vendor/highlight.min.js",
        "text/javascript; charset=utf-8",
        include_bytes!("assets/vendor/highlight.min.js"),
    ),
    (
        "vendor/highlight.js.LICENSE",
        "text/plain; charset=utf-8",
        include_bytes!("assets/vendor/highlight.js.LICENSE"),
    ),
];

/// An asset by its path under /assets/: its content type and bytes.
pub fn get(path: &str) -> Option<(&'static str, &'static [u8])> {
    FILES
        .iter()
        .find(|(name, _, _)| *name == path)
        .map(|(_, t, b)| (*t, *b))
}
