//! One remote's object storage, on the `object_store` crate, as blocking
//! calls: rewind's front ends are synchronous, and a push or pull is a
//! short sequence of requests. Credentials come from each cloud's standard
//! environment (`AWS_*`, `GOOGLE_*`, `AZURE_*`), read by the crate's
//! builders; rewind never writes them anywhere (docs/remote.md "Trust").

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures_util::TryStreamExt;
use object_store::aws::AmazonS3Builder;
use object_store::azure::MicrosoftAzureBuilder;
use object_store::gcp::GoogleCloudStorageBuilder;
use object_store::local::LocalFileSystem;
use object_store::path::Path;
use object_store::prefix::PrefixStore;
use object_store::{
    BackoffConfig, ObjectStore, ObjectStoreExt, ObjectStoreScheme, PutPayload, RetryConfig,
};
use url::Url;

use super::error::RemoteError;
use super::limits;

/// How long one request may be retried (with backoff) before the push or
/// pull fails: long enough for a blip, short enough that an unreachable
/// server is one clear line within seconds, not minutes.
const RETRY_TIMEOUT: Duration = Duration::from_secs(15);
const MAX_RETRIES: usize = 3;

/// A listed object: its key (relative to the remote's prefix) and size.
#[derive(Clone, Debug)]
pub struct Listed {
    pub key: Path,
    pub size: u64,
    /// When it was written, by the server's clock.
    pub modified: std::time::SystemTime,
}

/// What a remote was asked, for the request and byte counts a push or
/// pull reports (docs/benchmarks.md measures them).
#[derive(Debug, Default)]
pub struct Traffic {
    pub requests: AtomicU64,
    pub bytes_up: AtomicU64,
    pub bytes_down: AtomicU64,
}

impl Traffic {
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }
    pub fn bytes_up(&self) -> u64 {
        self.bytes_up.load(Ordering::Relaxed)
    }
    pub fn bytes_down(&self) -> u64 {
        self.bytes_down.load(Ordering::Relaxed)
    }
}

pub struct Backend {
    url: String,
    store: Arc<dyn ObjectStore>,
    /// A `file://` remote's directory: no key is followed through a
    /// symbolic link in it (the crate would follow one anywhere, and a
    /// planted link would take a gc's deletes or a push's writes outside).
    local_root: Option<std::path::PathBuf>,
    runtime: tokio::runtime::Runtime,
    pub traffic: Traffic,
}

impl Backend {
    /// The object storage `url` names: `s3://bucket/prefix`,
    /// `gs://bucket/prefix`, `az://container/prefix` (and the https forms
    /// the crate knows), or `file:///directory`. Nothing is contacted yet.
    pub fn open(url: &str) -> Result<Backend, RemoteError> {
        let bad = |reason: String| RemoteError::BadUrl {
            url: url.to_owned(),
            reason,
        };
        // The URL parsed; what a cloud's builder refuses may be the URL's
        // rest or the settings it read beside it (a key that is not base64):
        // not called a bad URL, which would send the user to the wrong place.
        let settings = |reason: String| RemoteError::Settings {
            url: url.to_owned(),
            reason,
        };
        // TLS (https endpoints) goes through rustls with ring, the one
        // provider compiled in (Cargo.toml says why not aws-lc-rs); reqwest
        // needs it installed as the process's. Installing it again fails
        // harmlessly.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let parsed = Url::parse(url).map_err(|e| bad(e.to_string()))?;
        // `file://srv/x` names host "srv" and path "/x": a slash short.
        if parsed.scheme() == "file"
            && parsed
                .host_str()
                .is_some_and(|h| !h.is_empty() && h != "localhost")
        {
            return Err(bad(format!(
                "a file:// URL takes an absolute path after its two slashes: file:///{}{}",
                parsed.host_str().unwrap_or_default(),
                parsed.path()
            )));
        }
        let (scheme, prefix) = ObjectStoreScheme::parse(&parsed).map_err(|e| bad(one_line(&e)))?;
        let retry = RetryConfig {
            backoff: BackoffConfig::default(),
            max_retries: MAX_RETRIES,
            retry_timeout: RETRY_TIMEOUT,
        };
        let mut local_root = None;
        let store: Arc<dyn ObjectStore> = match scheme {
            ObjectStoreScheme::Local => {
                let dir = std::path::PathBuf::from(parsed.path());
                local_root = Some(dir.clone());
                // Never made here: a mistyped URL would become a new,
                // empty remote instead of an error.
                if !dir.is_dir() {
                    return Err(bad(format!(
                        "{} is not a directory (a file:// remote names one that exists: create it first)",
                        dir.display()
                    )));
                }
                Arc::new(
                    LocalFileSystem::new_with_prefix(&dir)
                        .map_err(|e| bad(one_line(&e)))?
                        .with_automatic_cleanup(true),
                )
            }
            ObjectStoreScheme::AmazonS3 => {
                let env = |name: &str| std::env::var(name).ok();
                prefixed(
                    super::aws_profile::apply(AmazonS3Builder::from_env(), &env)?
                        .with_url(url)
                        .with_retry(retry)
                        .build()
                        .map_err(|e| settings(one_line(&e)))?,
                    prefix,
                )
            }
            ObjectStoreScheme::GoogleCloudStorage => prefixed(
                GoogleCloudStorageBuilder::from_env()
                    .with_url(url)
                    .with_retry(retry)
                    .build()
                    .map_err(|e| settings(one_line(&e)))?,
                prefix,
            ),
            ObjectStoreScheme::MicrosoftAzure => prefixed(
                MicrosoftAzureBuilder::from_env()
                    .with_url(url)
                    .with_retry(retry)
                    .build()
                    .map_err(|e| settings(one_line(&e)))?,
                prefix,
            ),
            other => return Err(bad(format!("{other:?} is not a supported store"))),
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| RemoteError::Backend {
                url: url.to_owned(),
                message: format!("starting the I/O runtime: {e}"),
            })?;
        Ok(Backend {
            url: url.to_owned(),
            store,
            local_root,
            runtime,
            traffic: Traffic::default(),
        })
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    fn fail(&self, what: &str, key: &Path, e: object_store::Error) -> RemoteError {
        RemoteError::Backend {
            url: self.url.clone(),
            message: format!("{what} {key}: {}", describe(&e)),
        }
    }

    pub fn put(&self, key: &Path, bytes: Vec<u8>) -> Result<(), RemoteError> {
        self.check_local(key)?;
        let len = bytes.len() as u64;
        self.traffic.requests.fetch_add(1, Ordering::Relaxed);
        self.runtime
            .block_on(self.store.put(key, PutPayload::from(bytes)))
            .map_err(|e| self.fail("uploading", key, e))?;
        self.traffic.bytes_up.fetch_add(len, Ordering::Relaxed);
        Ok(())
    }

    pub fn delete(&self, key: &Path) -> Result<(), RemoteError> {
        self.check_local(key)?;
        self.traffic.requests.fetch_add(1, Ordering::Relaxed);
        match self.runtime.block_on(self.store.delete(key)) {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(self.fail("deleting", key, e)),
        }
    }

    /// Byte ranges of one object (coalesced into few requests by the crate).
    pub fn get_ranges(
        &self,
        key: &Path,
        ranges: &[std::ops::Range<u64>],
    ) -> Result<Vec<Vec<u8>>, RemoteError> {
        self.check_local(key)?;
        for r in ranges {
            if let Some(reason) =
                limits::over(r.end.saturating_sub(r.start), limits::MAX_RECORD_BYTES)
            {
                return Err(self.refused(key, format!("a record of {reason}")));
            }
        }
        self.traffic.requests.fetch_add(1, Ordering::Relaxed);
        let got = self
            .runtime
            .block_on(self.store.get_ranges(key, ranges))
            .map_err(|e| self.fail("downloading", key, e))?;
        let n: usize = got.iter().map(|b| b.len()).sum();
        self.traffic
            .bytes_down
            .fetch_add(n as u64, Ordering::Relaxed);
        Ok(got.into_iter().map(|b| b.to_vec()).collect())
    }

    /// The object's bytes, `None` when there is none under `key`; at most
    /// `max` of them (docs/remote.md "What a remote can and cannot do to
    /// you"): a larger object is refused by its listed size before its body
    /// is read, and a body that runs past `max` anyway is cut off there.
    pub fn get(&self, key: &Path, max: u64) -> Result<Option<Vec<u8>>, RemoteError> {
        let mut out = Vec::new();
        let found = self.stream(key, max, |piece| {
            out.extend_from_slice(piece);
            Ok(())
        })?;
        Ok(found.then_some(out))
    }

    /// The object's body, piece by piece as it arrives, to `each`: never
    /// held whole. `false` when there is no object under `key`. Bounded by
    /// `max` as [`Backend::get`] is; an error of `each` stops the download.
    pub fn stream(
        &self,
        key: &Path,
        max: u64,
        mut each: impl FnMut(&[u8]) -> Result<(), RemoteError>,
    ) -> Result<bool, RemoteError> {
        self.check_local(key)?;
        self.traffic.requests.fetch_add(1, Ordering::Relaxed);
        self.runtime.block_on(async {
            let got = match self.store.get(key).await {
                Ok(r) => r,
                Err(object_store::Error::NotFound { .. }) => return Ok(false),
                Err(e) => return Err(self.fail("downloading", key, e)),
            };
            if let Some(reason) = limits::over(got.meta.size, max) {
                return Err(self.refused(key, reason));
            }
            let mut body = got.into_stream();
            let mut read = 0u64;
            while let Some(piece) = body
                .try_next()
                .await
                .map_err(|e| self.fail("downloading", key, e))?
            {
                read = read.saturating_add(piece.len() as u64);
                self.traffic
                    .bytes_down
                    .fetch_add(piece.len() as u64, Ordering::Relaxed);
                if let Some(reason) = limits::over(read, max) {
                    return Err(self.refused(key, format!("it ran past its bound: {reason}")));
                }
                each(&piece)?;
            }
            Ok(true)
        })
    }

    fn refused(&self, key: &Path, reason: String) -> RemoteError {
        RemoteError::Refused {
            url: self.url.clone(),
            key: key.to_string(),
            reason,
        }
    }

    /// On a `file://` remote, refuses a key any of whose components (below
    /// the remote's directory) is a symbolic link: a link planted in the
    /// remote must not take a read, a write or a delete out of it.
    fn check_local(&self, key: &Path) -> Result<(), RemoteError> {
        let Some(root) = &self.local_root else {
            return Ok(());
        };
        let mut at = root.clone();
        for part in key.parts() {
            at.push(part.as_ref());
            match std::fs::symlink_metadata(&at) {
                Ok(m) if m.file_type().is_symlink() => {
                    return Err(self.refused(
                        key,
                        format!(
                            "{} is a symbolic link: a file:// remote is never followed out of its directory",
                            at.display()
                        ),
                    ))
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
        Ok(())
    }

    /// Every object under `prefix` (one request per thousand or so).
    pub fn list(&self, prefix: &Path) -> Result<Vec<Listed>, RemoteError> {
        self.traffic.requests.fetch_add(1, Ordering::Relaxed);
        if let Some(root) = &self.local_root {
            return self.list_local(root, prefix);
        }
        let listed: Vec<_> = self
            .runtime
            .block_on(self.store.list(Some(prefix)).try_collect())
            .map_err(|e| self.fail("listing", prefix, e))?;
        Ok(listed
            .into_iter()
            .map(|m: object_store::ObjectMeta| Listed {
                key: m.location,
                size: m.size,
                modified: m.last_modified.into(),
            })
            .collect())
    }

    /// A `file://` remote's listing, walked here rather than by the crate,
    /// which follows symbolic links and gives up a whole listing (or the
    /// rest of it) at a name it cannot take for a key: a link is never
    /// entered and a name of characters rewind never writes in a key is
    /// left out, so something planted in the directory changes nothing.
    fn list_local(
        &self,
        root: &std::path::Path,
        prefix: &Path,
    ) -> Result<Vec<Listed>, RemoteError> {
        self.check_local(prefix)?;
        let mut out = Vec::new();
        let mut stack = vec![prefix.as_ref().to_owned()];
        while let Some(rel) = stack.pop() {
            let dir = if rel.is_empty() {
                root.to_path_buf()
            } else {
                root.join(&rel)
            };
            let entries = match std::fs::read_dir(&dir) {
                Ok(e) => e,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(RemoteError::io("listing", &dir, e)),
            };
            for entry in entries {
                let entry = entry.map_err(|e| RemoteError::io("listing", &dir, e))?;
                let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                    continue;
                };
                let key = if rel.is_empty() {
                    name.clone()
                } else {
                    format!("{rel}/{name}")
                };
                if !is_key_name(&name) {
                    tracing::warn!(key = %crate::printable::printable(&key), "a name on the remote that rewind never writes is left out of a listing");
                    continue;
                }
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                if kind.is_symlink() {
                    tracing::warn!(%key, "a symbolic link in a file:// remote is never followed");
                } else if kind.is_dir() {
                    stack.push(key);
                } else if kind.is_file() {
                    let Ok(meta) = entry.metadata() else { continue };
                    out.push(Listed {
                        key: Path::from(key),
                        size: meta.len(),
                        modified: meta.modified().unwrap_or(std::time::UNIX_EPOCH),
                    });
                }
            }
        }
        Ok(out)
    }
}

/// A name rewind may write as part of a key: letters, digits, `-`, `_`
/// and `.`, not `.` or `..` (keys.rs spells every key so).
fn is_key_name(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

fn prefixed<T: ObjectStore>(store: T, prefix: Path) -> Arc<dyn ObjectStore> {
    if prefix.as_ref().is_empty() {
        Arc::new(store)
    } else {
        Arc::new(PrefixStore::new(store, prefix))
    }
}

/// An error of the crate as one line a person can act on: what kind of
/// failure first (permission, credentials), then the chain of causes, with
/// an S3 error document cut down to its code and message.
fn describe(e: &object_store::Error) -> String {
    let text = one_line(e);
    let text = match (
        between(&text, "<Code>", "</Code>"),
        between(&text, "<Message>", "</Message>"),
    ) {
        (Some(code), Some(message)) => match text.find("<?xml").or_else(|| text.find("<Error>")) {
            Some(at) => format!("{}{code}: {message}", &text[..at]),
            None => text.clone(),
        },
        _ => text.clone(),
    };
    let kind = match e {
        object_store::Error::PermissionDenied { .. } => PERMISSION,
        object_store::Error::Unauthenticated { .. } => AUTHENTICATION,
        _ if text.contains("403 Forbidden") || text.contains("AccessDenied") => PERMISSION,
        _ if text.contains("401 Unauthorized") || text.contains("ExpiredToken") => AUTHENTICATION,
        _ => "",
    };
    format!("{kind}{text}")
}

const PERMISSION: &str =
    "permission denied (wrong credentials, or ones that may not use this bucket): ";
const AUTHENTICATION: &str = "not authenticated (missing or expired credentials): ";

fn between<'a>(text: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let start = text.find(open)? + open.len();
    let len = text[start..].find(close)?;
    Some(&text[start..start + len])
}

/// `e` and its sources on one line.
pub(crate) fn one_line(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}
