//! Requests and results of store maintenance. gc and verify own them (they
//! run on a store, with no engine); the engine's `gc` and `verify` methods
//! hand them through.

pub use crate::gc::{GcParams, GcResult};
pub use crate::verify::{VerifyProblem, VerifyProblemKind, VerifyResult};
