//! Application state: values the server's author registers once ([`Server::state`]), such as a
//! database pool or an API client, which tools, prompts, resources, resolvers and completers take
//! as a [`State<T>`] parameter. Each server has its own; nothing is global.
//!
//! [`Server::state`]: crate::Server::state

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

/// A value of type `T` the server holds ([`Server::state`](crate::Server::state)), as a
/// parameter of a `#[tool]`, `#[prompt]`, `#[resource]` or `#[resolver]` function, or of a
/// completer: hidden from every schema, shared by every call (an [`Arc`] inside; cloning it is
/// cheap). A server that lacks a state one of its items takes refuses to start, naming the type
/// and the item.
///
/// ```
/// use mcp_resolve_runtime::{Server, State};
///
/// struct Tracker {
///     open: Vec<u32>,
/// }
///
/// // What a tool body receives:
/// fn count(tracker: State<Tracker>) -> usize {
///     tracker.open.len()
/// }
/// let server = Server::new("triage").state(Tracker { open: vec![101, 102] });
/// # let _ = server;
/// // Calling the function directly, as a unit test does:
/// assert_eq!(count(State::new(Tracker { open: vec![7] })), 1);
/// ```
pub struct State<T: ?Sized>(Arc<T>);

impl<T> State<T> {
    /// A state holding `value`, for calling an item's function directly (in a unit test).
    pub fn new(value: T) -> Self {
        Self(Arc::new(value))
    }
}

impl<T: ?Sized> State<T> {
    /// The shared value.
    ///
    /// ```
    /// use mcp_resolve_runtime::State;
    /// let state = State::new(5u8);
    /// assert_eq!(*state.into_arc(), 5);
    /// ```
    pub fn into_arc(self) -> Arc<T> {
        self.0
    }
}

impl<T: ?Sized> Clone for State<T> {
    fn clone(&self) -> Self {
        Self(self.0.clone())
    }
}

impl<T: ?Sized> Deref for State<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for State<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("State").field(&&*self.0).finish()
    }
}

/// The states a server holds, by type.
#[derive(Clone, Default)]
pub(crate) struct States(HashMap<TypeId, Arc<dyn Any + Send + Sync>>);

impl States {
    /// Holds `value`; a value of the same type registered before is replaced.
    pub(crate) fn insert<T: Send + Sync + 'static>(&mut self, value: T) {
        self.0.insert(TypeId::of::<T>(), Arc::new(value));
    }

    /// The value of type `T`, if one is held.
    pub(crate) fn get<T: Send + Sync + 'static>(&self) -> Option<State<T>> {
        let any = self.0.get(&TypeId::of::<T>())?.clone();
        any.downcast::<T>().ok().map(State)
    }

    /// Whether a value of the type `need` names is held.
    pub(crate) fn has(&self, need: &StateNeed) -> bool {
        self.0.contains_key(&(need.id)())
    }
}

impl fmt::Debug for States {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "States({} held)", self.0.len())
    }
}

/// A state type a parameter takes: what a server checks it holds before it serves.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct StateNeed {
    /// The type's id.
    pub id: fn() -> TypeId,
    /// The type's name, for the error.
    pub name: fn() -> &'static str,
}

impl StateNeed {
    /// The need of a `State<T>` parameter.
    pub const fn of<T: ?Sized + 'static>() -> Self {
        Self {
            id: TypeId::of::<T>,
            name: std::any::type_name::<T>,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_is_found_by_its_type_and_a_second_value_replaces_the_first() {
        let mut states = States::default();
        assert!(states.get::<u32>().is_none());
        states.insert(1u32);
        states.insert("text");
        assert_eq!(*states.get::<u32>().unwrap(), 1);
        assert_eq!(*states.get::<&str>().unwrap(), "text");
        states.insert(2u32);
        assert_eq!(*states.get::<u32>().unwrap(), 2);
        assert!(states.has(&StateNeed::of::<u32>()));
        assert!(!states.has(&StateNeed::of::<u64>()));
        assert!(states.get::<u64>().is_none());
    }

    #[test]
    fn clones_share_one_value() {
        let a = State::new(std::sync::Mutex::new(0));
        let b = a.clone();
        *a.lock().unwrap() += 1;
        assert_eq!(*b.lock().unwrap(), 1);
        assert_eq!(format!("{:?}", State::new(3)), "State(3)");
        assert!((StateNeed::of::<String>().name)().ends_with("String"));
    }
}
