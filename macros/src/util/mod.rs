//! Helpers shared by the macros.

pub(crate) mod attr_fn;
pub(crate) mod docs;
pub(crate) mod errors;
pub(crate) mod fn_value;
pub(crate) mod param_attrs;
pub(crate) mod spans;
