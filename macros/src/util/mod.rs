//! Helpers shared by the macros.

pub(crate) mod docs;
pub(crate) mod errors;
