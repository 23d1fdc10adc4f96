//! The AWS shared files — `~/.aws/credentials` and `~/.aws/config` — for
//! S3 remotes. `object_store` reads credentials only from the environment
//! (and instance or task roles); people who use the AWS CLI keep theirs in
//! these files, under the profile `AWS_PROFILE` names (`default` when
//! unset). What the environment sets wins, as with the AWS CLI; only static
//! keys, a session token, the region and `endpoint_url` are read (no
//! `credential_process`, SSO or role chaining: docs/remote.md says so).

use std::path::{Path, PathBuf};

use ini::Ini;
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};

use super::error::RemoteError;

/// What a profile gives, each field `None` when neither file has it.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Profile {
    pub access_key_id: Option<String>,
    pub secret_access_key: Option<String>,
    pub session_token: Option<String>,
    pub region: Option<String>,
    pub endpoint_url: Option<String>,
}

/// Fills in `builder` what the profile has and the environment (`env`)
/// does not.
pub fn apply(
    mut builder: AmazonS3Builder,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<AmazonS3Builder, RemoteError> {
    let Some(profile) = load(env)? else {
        return Ok(builder);
    };
    let set = |names: &[&str]| names.iter().any(|n| env(n).is_some_and(|v| !v.is_empty()));
    if !set(&["AWS_ACCESS_KEY_ID"]) {
        if let (Some(id), Some(secret)) = (profile.access_key_id, profile.secret_access_key) {
            builder = builder
                .with_config(AmazonS3ConfigKey::AccessKeyId, id)
                .with_config(AmazonS3ConfigKey::SecretAccessKey, secret);
            if let Some(token) = profile.session_token {
                builder = builder.with_config(AmazonS3ConfigKey::Token, token);
            }
        }
    }
    if !set(&["AWS_REGION", "AWS_DEFAULT_REGION"]) {
        if let Some(region) = profile.region {
            builder = builder.with_config(AmazonS3ConfigKey::Region, region);
        }
    }
    if !set(&["AWS_ENDPOINT", "AWS_ENDPOINT_URL"]) {
        if let Some(endpoint) = profile.endpoint_url {
            builder = builder.with_config(AmazonS3ConfigKey::Endpoint, endpoint);
        }
    }
    Ok(builder)
}

/// The profile from the two files, or `None` when neither file has it and
/// it was not asked for by name (a machine without the AWS CLI has no
/// files, and nothing is wrong). A profile named in `AWS_PROFILE` that
/// neither file has is an error, as it is for the AWS CLI.
pub fn load(env: &dyn Fn(&str) -> Option<String>) -> Result<Option<Profile>, RemoteError> {
    let named = env("AWS_PROFILE").filter(|p| !p.is_empty());
    let name = named.clone().unwrap_or_else(|| "default".to_owned());
    let home = env("HOME").map(PathBuf::from);
    let file = |var: &str, default: &str| {
        env(var)
            .filter(|p| !p.is_empty())
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(".aws").join(default)))
    };
    let credentials = match file("AWS_SHARED_CREDENTIALS_FILE", "credentials") {
        Some(path) => read(&path)?.map(|ini| (path, ini)),
        None => None,
    };
    let config = match file("AWS_CONFIG_FILE", "config") {
        Some(path) => read(&path)?.map(|ini| (path, ini)),
        None => None,
    };
    // The credentials file names sections plainly; the config file as
    // "profile NAME", except "default" (which may be written either way).
    let in_credentials = credentials
        .as_ref()
        .and_then(|(_, ini)| ini.section(Some(name.as_str())));
    let config_section = format!("profile {name}");
    let in_config = config.as_ref().and_then(|(_, ini)| {
        ini.section(Some(config_section.as_str())).or_else(|| {
            (name == "default")
                .then(|| ini.section(Some("default")))
                .flatten()
        })
    });
    if in_credentials.is_none() && in_config.is_none() {
        return match named {
            Some(name) => Err(RemoteError::AwsProfile {
                reason: format!(
                    "AWS_PROFILE names {name:?}, which neither {} nor {} has",
                    shown(
                        credentials.as_ref().map(|(p, _)| p.as_path()),
                        "~/.aws/credentials"
                    ),
                    shown(config.as_ref().map(|(p, _)| p.as_path()), "~/.aws/config"),
                ),
            }),
            None => Ok(None),
        };
    }
    // A key in the credentials file wins over the same key in the config file.
    let get = |key: &str| {
        in_credentials
            .and_then(|s| s.get(key))
            .or_else(|| in_config.and_then(|s| s.get(key)))
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    };
    Ok(Some(Profile {
        access_key_id: get("aws_access_key_id"),
        secret_access_key: get("aws_secret_access_key"),
        session_token: get("aws_session_token"),
        region: get("region"),
        endpoint_url: get("endpoint_url"),
    }))
}

fn shown(path: Option<&Path>, default: &str) -> String {
    path.map_or_else(|| default.to_owned(), |p| p.display().to_string())
}

/// The file parsed, `None` when it does not exist.
fn read(path: &Path) -> Result<Option<Ini>, RemoteError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(RemoteError::io("reading", path, e)),
    };
    Ini::load_from_str(&text)
        .map(Some)
        // The parser's message names a line, never a value: no secret
        // reaches a log through it.
        .map_err(|e| RemoteError::AwsProfile {
            reason: format!("{} does not parse: {e}", path.display()),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env_of(pairs: &[(&str, String)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        move |k| map.get(k).cloned()
    }

    fn home_with(credentials: &str, config: &str) -> tempfile::TempDir {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join(".aws")).unwrap();
        std::fs::write(home.path().join(".aws/credentials"), credentials).unwrap();
        std::fs::write(home.path().join(".aws/config"), config).unwrap();
        home
    }

    const CREDENTIALS: &str = "[default]\naws_access_key_id = AKIDEFAULT\naws_secret_access_key = s1\n\n[work]\naws_access_key_id=AKIWORK\naws_secret_access_key=s2\naws_session_token=t2\n";
    const CONFIG: &str = "[default]\nregion = eu-west-1\n\n[profile work]\nregion = us-east-2\nendpoint_url = http://127.0.0.1:3900\naws_access_key_id = NOT-THIS-ONE\n";

    #[test]
    fn the_default_profile_reads_both_files() {
        let home = home_with(CREDENTIALS, CONFIG);
        let env = env_of(&[("HOME", home.path().display().to_string())]);
        let p = load(&env).unwrap().unwrap();
        assert_eq!(p.access_key_id.as_deref(), Some("AKIDEFAULT"));
        assert_eq!(p.secret_access_key.as_deref(), Some("s1"));
        assert_eq!(p.region.as_deref(), Some("eu-west-1"));
        assert_eq!(p.session_token, None);
    }

    #[test]
    fn a_named_profile_takes_its_sections_and_the_credentials_file_wins() {
        let home = home_with(CREDENTIALS, CONFIG);
        let env = env_of(&[
            ("HOME", home.path().display().to_string()),
            ("AWS_PROFILE", "work".into()),
        ]);
        let p = load(&env).unwrap().unwrap();
        assert_eq!(p.access_key_id.as_deref(), Some("AKIWORK"));
        assert_eq!(p.session_token.as_deref(), Some("t2"));
        assert_eq!(p.region.as_deref(), Some("us-east-2"));
        assert_eq!(p.endpoint_url.as_deref(), Some("http://127.0.0.1:3900"));
    }

    #[test]
    fn a_named_profile_nobody_has_is_an_error_and_no_files_are_nothing() {
        let home = home_with(CREDENTIALS, CONFIG);
        let env = env_of(&[
            ("HOME", home.path().display().to_string()),
            ("AWS_PROFILE", "nope".into()),
        ]);
        let err = load(&env).unwrap_err().to_string();
        assert!(err.contains("\"nope\""), "{err}");
        let empty = tempfile::tempdir().unwrap();
        let env = env_of(&[("HOME", empty.path().display().to_string())]);
        assert_eq!(load(&env).unwrap(), None);
    }

    #[test]
    fn files_named_by_the_environment_are_read_instead() {
        let dir = tempfile::tempdir().unwrap();
        let creds = dir.path().join("creds");
        std::fs::write(
            &creds,
            "[default]\naws_access_key_id=A\naws_secret_access_key=B\n",
        )
        .unwrap();
        let env = env_of(&[
            ("HOME", "/nonexistent".into()),
            ("AWS_SHARED_CREDENTIALS_FILE", creds.display().to_string()),
        ]);
        assert_eq!(
            load(&env).unwrap().unwrap().access_key_id.as_deref(),
            Some("A")
        );
    }

    #[test]
    fn a_file_that_does_not_parse_is_one_line_without_its_values() {
        let home = home_with("[default\naws_secret_access_key = hunter2\n", "");
        let env = env_of(&[("HOME", home.path().display().to_string())]);
        let err = load(&env).unwrap_err().to_string();
        assert!(err.contains("does not parse"), "{err}");
        assert!(!err.contains("hunter2"), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}
