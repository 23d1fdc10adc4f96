//! A real Azure Blob Storage server for the tests of the remote store's
//! `az://` URLs: Azurite (<https://github.com/Azure/Azurite>), Microsoft's
//! emulator, on 127.0.0.1, started by the test that needs it and stopped
//! when its [`Azurite`] is dropped.
//!
//! It is pinned with Microsoft's blob SDK (which makes the container:
//! object_store has no call for that) in `tests/remote-servers/`
//! (package-lock.json); `.ci/run` installs both with `npm ci`. Without them
//! a test skips (or fails under `CI=true`: [`common::skip_or_fail`]).
//!
//! Azurite 3.37.0, as these tests found it:
//! - Blobs are served path-style, the account as the first segment
//!   (`http://127.0.0.1:PORT/devstoreaccount1/CONTAINER/BLOB`), under the
//!   well-known account and key of the Azure emulators, [`ACCOUNT`] and [`KEY`].
//! - It refuses a request whose `x-ms-version` is newer than it knows
//!   (2026-06-06): object_store 0.14 sends 2023-11-03, and the SDK is
//!   pinned to 12.33.0, the last that sends no newer one; so the check stays
//!   on (no `--skipApiVersionCheck`).
//! - Its package asks for Node >= 22; it runs on the Node 20 these
//!   machines have (npm warns, EBADENGINE).

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use object_store::azure::{MicrosoftAzure, MicrosoftAzureBuilder};
use object_store::path::Path as ObjectPath;
use object_store::{
    Error, ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload, UpdateVersion,
};

use crate::common;

/// The version pinned in tests/remote-servers/package.json.
pub const VERSION: &str = "3.37.0";
/// The account every Azure emulator serves (object_store's default under
/// `AZURE_STORAGE_USE_EMULATOR`).
pub const ACCOUNT: &str = "devstoreaccount1";
/// Its well-known key (published by Microsoft; object_store's default too).
pub const KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
const CONTAINER: &str = "rewind-test";
/// How long the server may take to answer on its port (Node starting up
/// and loading some 460 packages: about a second when idle).
const BOOT_TIMEOUT: Duration = Duration::from_secs(60);

/// One Azurite blob server on 127.0.0.1 with one empty container. Dropping
/// it kills the server, waits for it and removes its directory.
pub struct Azurite {
    child: Child,
    port: u16,
    /// The server's data (`--location`) and log; removed after the server
    /// has exited (fields drop after [`Drop::drop`]).
    dir: tempfile::TempDir,
}

/// `tests/remote-servers`: the pinned emulators' package.
fn servers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/remote-servers")
}

impl Azurite {
    /// `azurite-blob` as `npm ci` in tests/remote-servers installs it.
    pub fn binary() -> PathBuf {
        servers_dir().join("node_modules/.bin/azurite-blob")
    }

    /// Start a server and make the container; `None` when Azurite is not
    /// installed (after [`common::skip_or_fail`], which panics under CI).
    /// Panics, with the server's log, when it does not come up.
    pub fn start() -> Option<Azurite> {
        let bin = Azurite::binary();
        let sdk = servers_dir().join("node_modules/@azure/storage-blob");
        if !bin.is_file() || !sdk.is_dir() {
            common::skip_or_fail("azurite is not installed: cd tests/remote-servers && npm ci");
            return None;
        }
        // The port is found free and then given to azurite, so another
        // process may take it in between: azurite then exits (EADDRINUSE),
        // and another port is tried.
        let azurite = crate::garage::start_on_free_ports("azurite", || Azurite::spawn(&bin));
        azurite.create_container();
        Some(azurite)
    }

    /// Start `azurite-blob` on a free port and wait until it accepts
    /// connections. `Err(log)` if it exited first.
    fn spawn(bin: &Path) -> Result<Azurite, String> {
        let dir = tempfile::Builder::new()
            .prefix("rewind-azurite-")
            .tempdir()
            .unwrap();
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let data = dir.path().join("data");
        std::fs::create_dir(&data).unwrap();
        let log = std::fs::File::create(dir.path().join("server.log")).unwrap();
        let child = Command::new(bin)
            .args(["--blobHost", "127.0.0.1", "--blobPort"])
            .arg(port.to_string())
            .arg("--location")
            .arg(&data)
            // It would send usage data to Microsoft: no network here, and
            // no reason to.
            .arg("--disableTelemetry")
            // The access log is one line per request: kept (in server.log,
            // shown when a test fails) for what the client sent.
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", bin.display()));
        let mut azurite = Azurite { child, port, dir };
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let deadline = Instant::now() + BOOT_TIMEOUT;
        loop {
            if let Some(status) = azurite.child.try_wait().unwrap() {
                return Err(format!("{status}\n{}", azurite.log()));
            }
            if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
                return Ok(azurite);
            }
            if Instant::now() > deadline {
                panic!(
                    "azurite did not listen on {addr} in {BOOT_TIMEOUT:?}:\n{}",
                    azurite.log()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The container, with the pinned SDK (tests/remote-servers/create-container.mjs).
    fn create_container(&self) {
        let out = Command::new("node")
            .arg(servers_dir().join("create-container.mjs"))
            .args([&self.account_url(), ACCOUNT, KEY, CONTAINER])
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("cannot run node: {e}"));
        assert!(
            out.status.success(),
            "creating the container: {}\n{}\n{}\nserver log:\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            self.log()
        );
    }

    /// The server's log so far (its last 8 KiB or so), for a failure message.
    pub fn log(&self) -> String {
        let log = std::fs::read(self.dir.path().join("server.log")).unwrap_or_default();
        let start = log.len().saturating_sub(8192);
        String::from_utf8_lossy(&log[start..]).into_owned()
    }

    /// `http://127.0.0.1:PORT`: the blob service, as object_store's
    /// `AZURITE_BLOB_STORAGE_URL` wants it (it adds the account itself).
    pub fn blob_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// `http://127.0.0.1:PORT/devstoreaccount1`: the account's endpoint, as
    /// a client that is not in emulator mode names it.
    pub fn account_url(&self) -> String {
        format!("{}/{ACCOUNT}", self.blob_url())
    }

    /// A container the account may read and write; empty at start.
    pub fn container(&self) -> &str {
        CONTAINER
    }

    /// What a user sets for rewind to use this server (docs/remote.md):
    /// object_store's emulator mode, with its default account and key.
    pub fn env(&self) -> Vec<(String, String)> {
        vec![
            ("AZURE_STORAGE_USE_EMULATOR".into(), "true".into()),
            ("AZURITE_BLOB_STORAGE_URL".into(), self.blob_url()),
        ]
    }
}

impl Drop for Azurite {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A client of the container outside rewind, to look at and alter what a
/// push left. Not through emulator mode: that reads the server's address
/// from the process's environment (`AZURITE_BLOB_STORAGE_URL`), which tests
/// running side by side cannot each set; an explicit endpoint with the
/// account in its path signs and addresses requests the same way.
pub fn client(azurite: &Azurite) -> MicrosoftAzure {
    // reqwest is built without a TLS provider of its own (Cargo.toml): the
    // process installs ring's, as rewind's remote backend does.
    let _ = rustls::crypto::ring::default_provider().install_default();
    MicrosoftAzureBuilder::new()
        .with_endpoint(azurite.account_url())
        .with_account(ACCOUNT)
        .with_access_key(KEY)
        .with_container_name(azurite.container())
        .with_allow_http(true)
        .build()
        .unwrap()
}

// ---- the server, checked with object_store's Azure client ----

/// A PUT, a GET, a ranged GET and a LIST through object_store against a
/// real Azurite; a missing blob; and the preconditions of a PUT, which
/// Azurite (unlike Garage 2.5.0, garage.rs) honours.
#[test]
fn object_store_put_get_list_and_conditional_puts() {
    let started = Instant::now();
    let Some(azurite) = Azurite::start() else {
        return;
    };
    eprintln!(
        "azurite {VERSION}: started with a container in {} ms ({})",
        started.elapsed().as_millis(),
        azurite.blob_url()
    );
    let az = client(&azurite);
    crate::garage::runtime().block_on(async {
        let first = crate::garage::puts_gets_and_lists(&az).await;
        let path = ObjectPath::from("packs/ab/abcdef.pack");

        // Put-if-absent over an existing blob: refused, the blob kept.
        let create = PutOptions::from(PutMode::Create);
        let refused = az
            .put_opts(&path, PutPayload::from("second"), create)
            .await
            .unwrap_err();
        assert!(
            matches!(refused, Error::AlreadyExists { .. }),
            "{refused:?}"
        );
        // Compare-and-swap: with the current e-tag it replaces, with a
        // stale one it is refused.
        let current = UpdateVersion {
            e_tag: first.e_tag.clone(),
            version: None,
        };
        az.put_opts(
            &path,
            PutPayload::from("third"),
            PutOptions::from(PutMode::Update(current)),
        )
        .await
        .unwrap();
        let stale = UpdateVersion {
            e_tag: first.e_tag.clone(),
            version: None,
        };
        let refused = az
            .put_opts(
                &path,
                PutPayload::from("fourth"),
                PutOptions::from(PutMode::Update(stale)),
            )
            .await
            .unwrap_err();
        assert!(matches!(refused, Error::Precondition { .. }), "{refused:?}");
        let got = az.get(&path).await.unwrap().bytes().await.unwrap();
        assert_eq!(got.as_ref(), b"third");
    });
}
