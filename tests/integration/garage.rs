//! A real S3 server for the tests of the remote store (issue 24): one Garage
//! node (<https://garagehq.deuxfleurs.fr>) on 127.0.0.1, started by the test
//! that needs it and stopped when its [`Garage`] is dropped.
//!
//! The binary is built once by `.ci/garage install` into a cache outside the
//! checkout; `REWIND_GARAGE_BIN` names another one. Without it a test skips
//! (or fails under `CI=true`: [`common::skip_or_fail`]).
//!
//! Garage 2.5.0, as these tests found it (see the tests at the end):
//! - S3 is served path-style (`http://127.0.0.1:PORT/BUCKET/KEY`): garage
//!   routes virtual-hosted requests only under a configured `root_domain`,
//!   and an endpoint on 127.0.0.1 has no host names for buckets anyway.
//! - The region is the configured `s3_region`, [`REGION`]; a request signed
//!   for another region is refused.
//! - A PUT ignores `If-None-Match: *` and `If-Match`: a conditional put
//!   overwrites whatever is there. A GET honours `If-Match`.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use futures_util::TryStreamExt;
use object_store::aws::{AmazonS3, AmazonS3Builder};
use object_store::path::Path as ObjectPath;
use object_store::{
    Error, GetOptions, ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload, UpdateVersion,
};

use crate::common;

/// The version `.ci/garage install` builds.
pub const VERSION: &str = "2.5.0";
/// The `s3_region` of the node's config: clients sign their requests for it.
pub const REGION: &str = "garage";
const BUCKET: &str = "rewind-test";
const KEY_NAME: &str = "rewind-test";
/// How long a node may take to answer on its RPC port, and then to report
/// itself healthy to `garage status`.
const BOOT_TIMEOUT: Duration = Duration::from_secs(60);

/// A single Garage node serving S3 on 127.0.0.1, with one bucket and one key
/// allowed to read, write and own it. Dropping it kills the server, waits for
/// it and removes its directory.
pub struct Garage {
    child: Child,
    bin: PathBuf,
    config: PathBuf,
    s3_port: u16,
    access_key_id: String,
    secret_access_key: String,
    /// Config, metadata, data and the server's log; removed after the server
    /// has exited (fields drop after [`Drop::drop`]).
    dir: tempfile::TempDir,
}

impl Garage {
    /// The garage binary: `REWIND_GARAGE_BIN`, else where `.ci/garage
    /// install` puts it (`${REWIND_CI_CACHE:-$HOME/.cache/rewind-ci}/garage-2.5.0/bin/garage`).
    pub fn binary() -> PathBuf {
        if let Some(bin) = std::env::var_os("REWIND_GARAGE_BIN") {
            return PathBuf::from(bin);
        }
        let cache = match std::env::var_os("REWIND_CI_CACHE") {
            Some(dir) => PathBuf::from(dir),
            None => {
                PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/rewind-ci")
            }
        };
        cache.join(format!("garage-{VERSION}/bin/garage"))
    }

    /// Start a node and set it up (layout, bucket, key); `None` when garage
    /// is not installed (after [`common::skip_or_fail`], which panics under CI).
    /// Panics, with the server's log, when the node does not come up.
    pub fn start() -> Option<Garage> {
        let bin = Garage::binary();
        if !bin.is_file() {
            common::skip_or_fail("garage is not installed: .ci/garage install");
            return None;
        }
        // The ports are found free and then given to garage, so another
        // process may take one in between: garage then exits (RPC port) or
        // runs without that server (S3, admin), and another set of ports is
        // tried.
        Some(start_on_free_ports("garage", || Garage::spawn(&bin)))
    }

    /// Write a config on free ports, start `garage server`, wait until it
    /// accepts connections on its RPC port and set it up. `Err(log)` if it
    /// exited or one of its servers could not listen.
    fn spawn(bin: &Path) -> Result<Garage, String> {
        let dir = tempfile::Builder::new()
            .prefix("rewind-garage-")
            .tempdir()
            .unwrap();
        let [rpc_port, s3_port, admin_port] = free_ports();
        let rpc_secret: String = rand::random::<[u8; 32]>()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let path = dir.path().display();
        let config = format!(
            r#"metadata_dir = "{path}/meta"
data_dir = "{path}/data"
db_engine = "sqlite"
replication_factor = 1

rpc_bind_addr = "127.0.0.1:{rpc_port}"
rpc_public_addr = "127.0.0.1:{rpc_port}"
rpc_secret = "{rpc_secret}"

[s3_api]
s3_region = "{REGION}"
api_bind_addr = "127.0.0.1:{s3_port}"

[admin]
api_bind_addr = "127.0.0.1:{admin_port}"
"#
        );
        let config_path = dir.path().join("config.toml");
        std::fs::write(&config_path, config).unwrap();
        let log = std::fs::File::create(dir.path().join("server.log")).unwrap();
        let child = server(bin, &config_path, log);
        let mut garage = Garage {
            child,
            bin: bin.to_path_buf(),
            config: config_path,
            s3_port,
            access_key_id: String::new(),
            secret_access_key: String::new(),
            dir,
        };
        let rpc = SocketAddr::from(([127, 0, 0, 1], rpc_port));
        let deadline = Instant::now() + BOOT_TIMEOUT;
        loop {
            if let Some(status) = garage.child.try_wait().unwrap() {
                return Err(format!("{status}\n{}", garage.log()));
            }
            if TcpStream::connect_timeout(&rpc, Duration::from_millis(200)).is_ok() {
                break;
            }
            if Instant::now() > deadline {
                panic!(
                    "garage did not listen on {rpc} in {BOOT_TIMEOUT:?}:\n{}",
                    garage.log()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        garage.set_up()?;
        // A server that cannot bind its port is logged and garage goes on
        // without it ("S3 API server exited with error: IO error: Address
        // already in use"), at once on start: the set-up took long enough
        // (some 300 ms) for that to be in the log now.
        let log = garage.log();
        if log.contains("server exited with error") {
            return Err(log);
        }
        Ok(garage)
    }

    /// One node holding everything: its role in the layout, the bucket, the
    /// key and the key's rights on the bucket.
    fn set_up(&mut self) -> Result<(), String> {
        let node = self.node_id()?;
        self.cli(&["layout", "assign", "-z", "dc1", "-c", "1G", &node]);
        self.cli(&["layout", "apply", "--version", "1"]);
        self.cli(&["bucket", "create", BUCKET]);
        // `key create` prints a table (then the key's buckets, none yet):
        //   ==== ACCESS KEY INFORMATION ====
        //   Key ID:              GK183cdd8b0ef19c4d4c055b08
        //   Key name:            rewind-test
        //   Secret key:          8adc98072c45189eb9eb907eaf2abc19afcae019bbaa5df0ddb6557b30e5aeee
        //   Created:             2026-11-26 14:00:28.884 +00:00
        //   ...
        let key = self.cli(&["key", "create", KEY_NAME]);
        let field = |name: &str| {
            key.lines()
                .find_map(|line| line.strip_prefix(name))
                .map(|value| value.trim().to_string())
                .unwrap_or_else(|| panic!("no {name:?} in `garage key create`:\n{key}"))
        };
        self.access_key_id = field("Key ID:");
        self.secret_access_key = field("Secret key:");
        self.cli(&[
            "bucket",
            "allow",
            "--read",
            "--write",
            "--owner",
            BUCKET,
            "--key",
            &self.access_key_id,
        ]);
        Ok(())
    }

    /// This node's id (its first 16 hex digits, which `layout assign` takes
    /// for the whole), from the table `garage status` prints:
    ///
    /// ```text
    /// ==== HEALTHY NODES ====
    /// ID                Hostname  Address          Tags  Zone  Capacity          DataAvail  ResyncQueue  Version
    /// ded6e9eaa9d66ed3  vm        127.0.0.1:39101              NO ROLE ASSIGNED             0            cargo:2.5.0
    /// ```
    ///
    /// Retried until the node reports itself (the RPC port may be open a
    /// little before the node answers).
    /// `Err(log)` if garage exited.
    fn node_id(&mut self) -> Result<String, String> {
        let deadline = Instant::now() + BOOT_TIMEOUT;
        loop {
            let out = self.run(&["status"]);
            let stdout = String::from_utf8_lossy(&out.stdout);
            let id = stdout
                .lines()
                .skip_while(|line| !line.starts_with("==== HEALTHY NODES"))
                .skip(2)
                .find_map(|line| line.split_whitespace().next())
                .filter(|id| id.len() >= 16 && id.chars().all(|c| c.is_ascii_hexdigit()));
            if let (true, Some(id)) = (out.status.success(), id) {
                return Ok(id.to_string());
            }
            if let Some(status) = self.child.try_wait().unwrap() {
                return Err(format!("garage exited ({status}):\n{}", self.log()));
            }
            if Instant::now() > deadline {
                panic!(
                    "`garage status` found no node in {BOOT_TIMEOUT:?}: {}\n{stdout}\n{}\nserver log:\n{}",
                    out.status,
                    String::from_utf8_lossy(&out.stderr),
                    self.log()
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Run `garage -c CONFIG <args>`; its stdout. Panics, saying what it
    /// printed, if it fails.
    fn cli(&self, args: &[&str]) -> String {
        let out = self.run(args);
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "`garage {}`: {}\n{stdout}\n{}\nserver log:\n{}",
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr),
            self.log()
        );
        stdout
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new(&self.bin)
            .arg("-c")
            .arg(&self.config)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    /// The server's log so far (its last lines, some 8 KiB), for a failure
    /// message.
    fn log(&self) -> String {
        let log = std::fs::read(self.dir.path().join("server.log")).unwrap_or_default();
        let start = match log.len().checked_sub(8192) {
            Some(cut) => log[cut..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(cut, |line| cut + line + 1),
            None => 0,
        };
        String::from_utf8_lossy(&log[start..]).into_owned()
    }

    /// Kill the server (SIGKILL), as a crash or a pulled plug would.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Start it again on the same ports with the same data (after
    /// [`Garage::kill`]), and wait until it serves S3.
    pub fn restart(&mut self) {
        let log = std::fs::OpenOptions::new()
            .append(true)
            .open(self.dir.path().join("server.log"))
            .unwrap();
        self.child = server(&self.bin, &self.config, log);
        let s3 = SocketAddr::from(([127, 0, 0, 1], self.s3_port));
        let deadline = Instant::now() + BOOT_TIMEOUT;
        while TcpStream::connect_timeout(&s3, Duration::from_millis(200)).is_err() {
            assert!(
                Instant::now() < deadline,
                "garage did not come back:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        // The node answers S3 once it knows its layout again.
        let deadline = Instant::now() + BOOT_TIMEOUT;
        while self.node_id().is_err() {
            assert!(
                Instant::now() < deadline,
                "garage did not come back:\n{}",
                self.log()
            );
        }
    }

    /// `http://127.0.0.1:PORT`: the S3 endpoint (path-style requests).
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.s3_port)
    }

    /// The region requests are signed for (garage's `s3_region`).
    pub fn region(&self) -> &str {
        REGION
    }

    /// A bucket that the key may read, write and own; empty at start.
    pub fn bucket(&self) -> &str {
        BUCKET
    }

    pub fn access_key_id(&self) -> &str {
        &self.access_key_id
    }

    pub fn secret_access_key(&self) -> &str {
        &self.secret_access_key
    }
}

impl Drop for Garage {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `garage -c CONFIG server`, its output into `log`.
fn server(bin: &Path, config: &Path, log: std::fs::File) -> Child {
    Command::new(bin)
        .arg("-c")
        .arg(config)
        .arg("server")
        .env("RUST_LOG", "garage=info")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", bin.display()))
}

/// Three distinct ports free on 127.0.0.1 (all held until all are found).
fn free_ports() -> [u16; 3] {
    let listeners: Vec<TcpListener> = (0..3)
        .map(|_| TcpListener::bind("127.0.0.1:0").unwrap())
        .collect();
    let port = |i: usize| listeners[i].local_addr().unwrap().port();
    [port(0), port(1), port(2)]
}

// ---- the server, checked with a real S3 client ----

pub fn client(garage: &Garage) -> AmazonS3 {
    client_in(garage, garage.region())
}

fn client_in(garage: &Garage, region: &str) -> AmazonS3 {
    // reqwest is built without a TLS provider of its own (Cargo.toml): the
    // process installs ring's, as rewind's remote backend does.
    let _ = rustls::crypto::ring::default_provider().install_default();
    AmazonS3Builder::new()
        .with_endpoint(garage.endpoint())
        .with_region(region)
        .with_bucket_name(garage.bucket())
        .with_access_key_id(garage.access_key_id())
        .with_secret_access_key(garage.secret_access_key())
        .with_allow_http(true)
        // Garage routes path-style requests only (no root_domain).
        .with_virtual_hosted_style_request(false)
        .build()
        .unwrap()
}

/// Starts a test server (`spawn`, on ports it finds free; Garage here,
/// Azurite in azurite.rs) up to 3 times:
/// a port found free may be taken by another process before the server
/// binds it, and the server then exits. `spawn`'s `Err` is the server's log;
/// after the third failure this panics with it.
pub fn start_on_free_ports<T>(name: &str, mut spawn: impl FnMut() -> Result<T, String>) -> T {
    let mut attempt = 1;
    loop {
        match spawn() {
            Ok(server) => return server,
            Err(log) if attempt < 3 => {
                eprintln!("{name} did not start (attempt {attempt}), again on other ports:\n{log}");
                attempt += 1;
            }
            Err(log) => panic!("{name} did not start, 3 times:\n{log}"),
        }
    }
}

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// What every object store the remote runs on must do, checked with
/// object_store's own client against the real server: a PUT (its result
/// returned), a GET, a ranged GET, a LIST with and without a prefix, and a
/// missing object.
pub async fn puts_gets_and_lists(store: &dyn ObjectStore) -> object_store::PutResult {
    let path = ObjectPath::from("packs/ab/abcdef.pack");
    let body = b"a pack of bytes\0\xff".to_vec();
    let first = store
        .put(&path, PutPayload::from(body.clone()))
        .await
        .unwrap();
    store
        .put(
            &ObjectPath::from("sessions/s1/manifest"),
            PutPayload::from("{}"),
        )
        .await
        .unwrap();

    let got = store.get(&path).await.unwrap().bytes().await.unwrap();
    assert_eq!(got.as_ref(), body.as_slice());
    let ranges = store.get_ranges(&path, &[0..2, 7..15]).await.unwrap();
    assert_eq!(ranges[0].as_ref(), b"a ");
    assert_eq!(ranges[1].as_ref(), b"of bytes");

    let mut listed: Vec<(String, u64)> = store
        .list(Some(&ObjectPath::from("packs")))
        .map_ok(|meta| (meta.location.to_string(), meta.size))
        .try_collect()
        .await
        .unwrap();
    listed.sort();
    assert_eq!(
        listed,
        vec![("packs/ab/abcdef.pack".to_string(), body.len() as u64)]
    );
    let all: Vec<_> = store.list(None).try_collect().await.unwrap();
    assert_eq!(all.len(), 2);

    let missing = store
        .get(&ObjectPath::from("packs/none"))
        .await
        .unwrap_err();
    assert!(matches!(missing, Error::NotFound { .. }), "{missing:?}");
    first
}

/// A PUT, a GET and a LIST with a real S3 client against a real node; a
/// missing object, and a client signing for the wrong region.
#[test]
fn object_store_put_get_list() {
    let started = Instant::now();
    let Some(garage) = Garage::start() else {
        return;
    };
    eprintln!(
        "garage: node started and set up in {} ms ({})",
        started.elapsed().as_millis(),
        garage.endpoint()
    );
    let s3 = client(&garage);
    runtime().block_on(async {
        puts_gets_and_lists(&s3).await;
        let path = ObjectPath::from("packs/ab/abcdef.pack");

        // Signed for another region: 400 AuthorizationHeaderMalformed,
        // "unexpected scope: '<date>/us-east-1/s3/aws4_request', expected:
        // '<date>/garage/s3/aws4_request'".
        let wrong = client_in(&garage, "us-east-1")
            .get(&path)
            .await
            .unwrap_err();
        let wrong = wrong.to_string();
        assert!(
            wrong.contains("400 Bad Request") && wrong.contains("AuthorizationHeaderMalformed"),
            "{wrong}"
        );
    });
}

/// Garage 2.5.0 ignores the preconditions of a PUT: `PutMode::Create`
/// (`If-None-Match: *`) over an existing object and `PutMode::Update`
/// (`If-Match`) with a stale e-tag both succeed and overwrite. The remote
/// store cannot rely on conditional writes here (put-if-absent, compare
/// and swap): on garage its locks and gc need another way. A GET with a
/// stale `If-Match` is refused (412), so a reader can tell that an
/// object changed under it. When a later garage starts honouring them,
/// this test fails: rename it, and say so in docs/remote.md (issue 24).
#[test]
fn conditional_puts_are_ignored_and_overwrite() {
    let Some(garage) = Garage::start() else {
        return;
    };
    let s3 = client(&garage);
    runtime().block_on(async {
        let path = ObjectPath::from("locks/gc");
        let first = s3.put(&path, PutPayload::from("first")).await.unwrap();

        // Put-if-absent over an existing object: accepted, overwrites.
        let create = PutOptions::from(PutMode::Create);
        let second = s3
            .put_opts(&path, PutPayload::from("second"), create)
            .await
            .expect("a PUT with If-None-Match: * over an existing object (2.5.0 ignores it)");
        let got = s3.get(&path).await.unwrap().bytes().await.unwrap();
        assert_eq!(got.as_ref(), b"second");
        assert_ne!(first.e_tag, second.e_tag);

        // Compare-and-swap with the stale e-tag of "first": accepted, overwrites.
        let stale = UpdateVersion {
            e_tag: first.e_tag.clone(),
            version: None,
        };
        s3.put_opts(
            &path,
            PutPayload::from("third"),
            PutOptions::from(PutMode::Update(stale)),
        )
        .await
        .expect("a PUT with a stale If-Match (2.5.0 ignores it)");
        let got = s3.get(&path).await.unwrap().bytes().await.unwrap();
        assert_eq!(got.as_ref(), b"third");

        // Update of an object that does not exist: accepted, creates it.
        let absent = UpdateVersion {
            e_tag: first.e_tag.clone(),
            version: None,
        };
        s3.put_opts(
            &ObjectPath::from("locks/absent"),
            PutPayload::from("made"),
            PutOptions::from(PutMode::Update(absent)),
        )
        .await
        .expect("a PUT with If-Match on an absent object (2.5.0 ignores it)");

        // A GET does check If-Match.
        let stale_get = GetOptions {
            if_match: first.e_tag.clone(),
            ..GetOptions::default()
        };
        let refused = s3.get_opts(&path, stale_get).await.unwrap_err();
        assert!(matches!(refused, Error::Precondition { .. }), "{refused:?}");
    });
}
