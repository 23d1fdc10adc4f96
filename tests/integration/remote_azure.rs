//! The remote store on Azure Blob Storage (`az://CONTAINER/PREFIX`), end to
//! end with the real binary against Azurite on 127.0.0.1
//! (tests/integration/azurite.rs): the S3 tests' machines
//! (tests/integration/remote.rs), configured as a user of the emulator
//! configures rewind, through the environment object_store's Azure
//! builder reads (`AZURE_STORAGE_USE_EMULATOR`, `AZURITE_BLOB_STORAGE_URL`).

use futures_util::TryStreamExt;
use object_store::ObjectStore;

use crate::azurite::{self, Azurite};
use crate::common::disk_state;
use crate::garage;
use crate::remote::{alter_every_pack, seed, session_id, Machine};

fn url(azurite: &Azurite) -> String {
    format!("az://{}/team-a", azurite.container())
}

/// A machine whose seeded project recorded one turn and pushed its session
/// to `origin` (the test's container); the session's id.
fn pushed(azurite: &Azurite) -> (Machine, String) {
    Machine::with_env(azurite.env()).pushed_to(&url(azurite))
}

/// Machine A records turns and pushes them to a container; machine B (its
/// own store, an empty directory) lists the session, pulls it and restores
/// turn 1 byte for byte: the executable bit, the symlink and the binary
/// file that turn 2 changed come back.
#[test]
fn two_machines_share_a_session_through_azure() {
    let Some(azurite) = Azurite::start() else {
        return;
    };
    let a = Machine::with_env(azurite.env());
    seed(&a);
    let turn1 = a.turn("echo two >> a.txt; echo new > src/new.txt", None);
    let at_turn1 = disk_state(&a.project());
    a.turn(
        "rm link src/f3.txt; chmod 644 run.sh; printf '\\000x' > src/deep/bin.dat",
        None,
    );
    a.ok(&["remote", "add", "origin", &url(&azurite)]);
    let pushed = a.ok(&["push"]);
    assert!(pushed.contains("pushed to origin"), "{pushed}");
    assert!(a.ok(&["push"]).contains("up to date"));
    let id = session_id(&a.session_files()[0]);

    // What the push left in the container, under the URL's prefix.
    let listed: Vec<String> = garage::runtime().block_on(async {
        azurite::client(&azurite)
            .list(None)
            .map_ok(|meta| meta.location.to_string())
            .try_collect()
            .await
            .unwrap()
    });
    assert!(
        listed.iter().any(|key| key.starts_with("team-a/packs/"))
            && listed.iter().all(|key| key.starts_with("team-a/")),
        "{listed:?}"
    );

    let b = Machine::with_env(azurite.env());
    b.pull_and_restore(&url(&azurite), &id, &turn1, &at_turn1);
}

/// An object altered in the container is found on arrival: the pull fails
/// naming the session, the checkpoint and the object, and writes no session.
#[test]
fn an_altered_blob_is_refused_and_nothing_is_written() {
    let Some(azurite) = Azurite::start() else {
        return;
    };
    let (_a, id) = pushed(&azurite);

    alter_every_pack(&azurite::client(&azurite));
    Machine::with_env(azurite.env()).pull_is_refused_as_altered(&url(&azurite), &id);
}

/// A wrong account key and an unreachable server: one clear line each,
/// within seconds, and local checkpoints go on.
#[test]
fn a_wrong_account_key_is_one_line_and_checkpoints_go_on() {
    let Some(azurite) = Azurite::start() else {
        return;
    };
    let mut a = Machine::with_env(azurite.env());
    seed(&a);
    a.turn("true", None);
    a.ok(&["remote", "add", "origin", &url(&azurite)]);

    // A well-formed key (base64, as account keys are) of the right
    // account, but not its key: the server refuses the signature (403
    // AuthorizationFailure, "Server failed to authenticate the request").
    a.set(
        "AZURE_STORAGE_ACCOUNT_KEY",
        "bm90LXRoZS1rZXktb2YtZGV2c3RvcmVhY2NvdW50MS1ub3QtdGhlLWtleS1vZi1kZXZzdG9yZWFjY291bnQx",
    );
    let err = a.fails_in_one_line(&["push"]);
    assert!(
        err.contains("permission denied") && err.contains("AuthorizationFailure"),
        "{err}"
    );

    // A mistyped key that is not base64 at all: the client refuses it
    // before any request, and the line says where to look (the settings),
    // not that the URL is bad.
    a.set("AZURE_STORAGE_ACCOUNT_KEY", "not-base64-!");
    let err = a.fails_in_one_line(&["push"]);
    assert!(
        err.contains("cannot be set up from the URL and the environment's settings")
            && !err.contains("not a remote URL"),
        "{err}"
    );

    // The right key again (the emulators' own), and a port nothing
    // listens on.
    a.set("AZURE_STORAGE_ACCOUNT_KEY", azurite::KEY);
    a.push_to_nothing_fails_quickly("AZURITE_BLOB_STORAGE_URL");
    a.checkpoints_go_on();
}
