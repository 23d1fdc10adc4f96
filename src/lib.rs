//! rewind: a checkpoint and rollback sidecar for AI coding agents.
