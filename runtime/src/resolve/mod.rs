//! Resolvers: how `#[resolve(fn)]` parameters are filled, on both protocol eras.
//!
//! A tool, prompt or resource declares its resolved parameters
//! ([`Tool::resolvers`](crate::tool::Tool::resolvers), `Prompt::resolvers`, `Resource::resolvers`).
//! Before its body runs, the engine ([`engine`]) visits every resolver (dependencies first), runs
//! its body, and either takes its value or asks its question (a form, a sample, the roots)
//! through the era's asker ([`ask`]):
//! - 2026-07-28: every independently askable question of a round goes into one
//!   `InputRequiredResult`; answers come back in the retry's `inputResponses`, and what was
//!   already answered rides in the sealed `requestState` ([`state`]). A dependent question costs
//!   one round per level. Resolver bodies re-run every round.
//! - handshake era: each question is a request on the back-channel (`elicitation/create`,
//!   `sampling/createMessage`, `roots/list`), asked in turn and awaited.
//!
//! The body runs once, when every resolved value is known. What generated code uses
//! ([`def`], [`checks`]) is reached through `__private01`.

pub(crate) mod ask;
pub(crate) mod back_channel;
pub(crate) mod checks;
pub(crate) mod collect;
pub(crate) mod def;
pub(crate) mod engine;
pub(crate) mod limit;
pub(crate) mod state;
