//! The engine: visits the resolvers of a tool, prompt or resource (dependencies first), runs
//! their bodies, and asks their questions through the era's asker ([`super::ask`]). It decides
//! whether the body can run, must wait for answers, or stops.

use super::ask::{Asked, Asker, Origin};
use super::def::{ResolveInputs, ResolveSlot, ResolverSpec, Step};
use super::state::RoundState;
use crate::context::Context;
use crate::protocol::ErrorObject;
use crate::protocol::messages::InputRequest;
use crate::question::{AskSpec, Settled};
use futures_util::future::BoxFuture;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The keys of a tool's resolvers, unique within the tool (collisions get `#2`, `#3`, …).
#[derive(Debug, Default, Clone)]
pub(crate) struct Keys {
    entries: Vec<(&'static ResolverSpec, String)>,
}

impl Keys {
    pub(crate) fn of(params: &'static [ResolveSlot]) -> Self {
        let mut keys = Keys::default();
        fn visit(k: &mut Keys, def: &'static ResolverSpec) {
            if k.entries.iter().any(|(d, _)| d.same(def)) {
                return;
            }
            k.entries.push((def, String::new()));
            for dep in def.deps {
                visit(k, dep);
            }
            k.entries.retain(|(d, _)| !d.same(def));
            let mut key = def.key.to_string();
            let mut n = 1;
            while k.entries.iter().any(|(_, used)| *used == key) {
                n += 1;
                key = format!("{}#{n}", def.key);
            }
            k.entries.push((def, key));
        }
        for p in params {
            visit(&mut keys, p.resolver);
        }
        keys
    }
    /// Whether a resolver reached (a parameter's or a dependency's) is `#[resolver(once)]`.
    pub(crate) fn any_once(&self) -> bool {
        self.entries.iter().any(|(d, _)| d.once)
    }
    fn key(&self, def: &ResolverSpec) -> &str {
        self.entries
            .iter()
            .find(|(d, _)| d.same(def))
            .map(|(_, k)| k.as_str())
            .unwrap_or(def.key)
    }
}

/// What the engine decided.
pub(crate) enum Outcome {
    /// Every resolved parameter has its value, in declaration order.
    Ready(Vec<Settled>),
    /// Stop with this message (a failed resolver, a declined question, too many rounds…): a
    /// tool's `isError` result, a prompt's or resource's JSON-RPC error.
    Stop(String),
    /// 2026-07-28: ask these questions; seal this state.
    InputRequired {
        requests: BTreeMap<String, InputRequest>,
        state: RoundState,
    },
    /// A JSON-RPC error ends the call (missing capability, a client's error on the back-channel).
    Abort(ErrorObject),
}

enum Node {
    /// Being resolved: meeting it again means a dependency cycle.
    Visiting,
    Done(Settled),
    Pending,
    Failed(String),
}

pub(crate) struct Engine<'a> {
    /// What is resolved: `tool`, `prompt`, `resource`.
    kind: &'static str,
    /// Its name (a resource's URI).
    target: &'a str,
    /// The definition the question limit counts: its name, a resource's template.
    item: &'a str,
    /// Its metric handles.
    metrics: &'a crate::telemetry::ItemMetrics,
    keys: &'a Keys,
    arguments: Arc<Map<String, Value>>,
    context: Context,
    asker: Asker,
    max_rounds: u64,
    memo: Vec<(&'static ResolverSpec, Node)>,
    abort: Option<ErrorObject>,
}

impl<'a> Engine<'a> {
    pub(crate) fn new(
        kind: &'static str,
        (target, item, metrics): (&'a str, &'a str, &'a crate::telemetry::ItemMetrics),
        keys: &'a Keys,
        arguments: Arc<Map<String, Value>>,
        context: Context,
        asker: Asker,
        max_rounds: u64,
    ) -> Self {
        Self {
            kind,
            target,
            item,
            metrics,
            keys,
            arguments,
            context,
            asker,
            max_rounds,
            memo: Vec::new(),
            abort: None,
        }
    }

    fn state(&self, def: &ResolverSpec) -> Option<&Node> {
        self.memo.iter().find(|(d, _)| d.same(def)).map(|(_, n)| n)
    }

    /// Resolves every parameter and decides what happens to the call.
    pub(crate) async fn run(mut self, params: &'static [ResolveSlot]) -> Outcome {
        for p in params {
            self.visit(p.resolver).await;
            if let Some(e) = self.abort.take() {
                return Outcome::Abort(e);
            }
        }
        // A failure stops the call, whatever else is pending.
        for p in params {
            if let Some(Node::Failed(message)) = self.state(p.resolver) {
                return Outcome::Stop(message.clone());
            }
        }
        if let Asker::Collect(c) = &mut self.asker
            && !c.requests.is_empty()
        {
            let round = c.state.round + 1;
            if round > self.max_rounds {
                crate::telemetry::metric::limit_hit("rounds");
                let waiting_page = if c.flows_now.is_empty() {
                    ""
                } else {
                    "; the page of its URL-mode question was not completed in time: call again"
                };
                return Outcome::Stop(format!(
                    "{} `{}` stopped: it needed more than {} rounds of questions{waiting_page}",
                    self.kind, self.target, self.max_rounds
                ));
            }
            let state = RoundState {
                round,
                outcomes: std::mem::take(&mut c.keep),
                asked: std::mem::take(&mut c.asked_now),
                flows: std::mem::take(&mut c.flows_now),
            };
            return Outcome::InputRequired {
                requests: std::mem::take(&mut c.requests),
                state,
            };
        }
        let mut values = Vec::with_capacity(params.len());
        for p in params {
            match self.state(p.resolver) {
                Some(Node::Done(r)) => values.push(r.clone()),
                _ => return Outcome::Stop(format!("internal error: `{}` has no value", p.param)),
            }
        }
        Outcome::Ready(values)
    }

    fn visit(&mut self, def: &'static ResolverSpec) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            if self.state(def).is_some() || self.abort.is_some() {
                return;
            }
            self.memo.push((def, Node::Visiting));
            let mut deps = Vec::with_capacity(def.deps.len());
            let mut blocked = false;
            let mut failed = None;
            for &dep in def.deps {
                if matches!(self.state(dep), Some(Node::Visiting)) {
                    failed = Some(format!("resolver `{}` depends on itself", def.name));
                    break;
                }
                self.visit(dep).await;
                match self.state(dep) {
                    Some(Node::Done(r)) => deps.push((dep, r.clone())),
                    Some(Node::Failed(m)) => {
                        failed = Some(m.clone());
                        break;
                    }
                    _ => blocked = true,
                }
            }
            self.memo.retain(|(d, _)| !d.same(def));
            if let Some(m) = failed {
                self.memo.push((def, Node::Failed(m)));
                return;
            }
            if self.abort.is_some() {
                return;
            }
            if blocked {
                // Asked again once its dependencies are answered: one round per level.
                self.memo.push((def, Node::Pending));
                return;
            }
            let refused_dep = deps.iter().find_map(|(_, r)| match r {
                Settled::Refused(action, q) => Some((*action, q.clone())),
                _ => None,
            });
            let inputs = ResolveInputs {
                kind: self.kind,
                arguments: self.arguments.clone(),
                context: self.context.clone(),
                deps,
            };
            let span = tracing::info_span!(
                target: "mcp_resolve",
                "mcp.resolver",
                mcp.resolver.name = def.name,
                mcp.outcome = tracing::field::Empty,
            );
            let run = async {
                match (def.run)(inputs).await {
                    // It could not run because a question it needs was declined: it is declined
                    // too, naming that question, so a consumer taking `ElicitationResult` still runs.
                    Step::Invalid(_) if refused_dep.is_some() => match refused_dep {
                        Some((action, q)) => Node::Done(Settled::Refused(action, q)),
                        None => Node::Failed("internal error: a refused dependency vanished".into()),
                    },
                    Step::Value(v) => Node::Done(Settled::Value(v)),
                    Step::Fail(m) => Node::Failed(format!("resolver `{}` failed: {m}", def.name)),
                    Step::Invalid(m) => Node::Failed(m),
                    Step::Ask(ask) => self.ask(def, ask).await,
                }
            };
            let node = crate::telemetry::InSpan::new(&span, std::pin::pin!(run)).await;
            span.record(
                "mcp.outcome",
                match &node {
                    Node::Done(Settled::Value(_)) => "value",
                    Node::Done(Settled::Answered(..)) => "answered",
                    Node::Done(Settled::Refused(..)) => "refused",
                    Node::Failed(_) => "failed",
                    _ => "asked",
                },
            );
            self.memo.push((def, node));
        })
    }

    async fn ask(&mut self, def: &'static ResolverSpec, ask: AskSpec) -> Node {
        let key = self.keys.key(def);
        let origin = Origin {
            kind: self.kind,
            target: self.target,
            item: self.item,
            metrics: self.metrics,
            key,
            named: format!("Resolver '{key}'"),
            logged: format!("resolver `{key}`"),
        };
        match self.asker.ask(origin, &ask, &self.context).await {
            Asked::Done(Ok(r)) => Node::Done(r),
            Asked::Done(Err(m)) => Node::Failed(m),
            Asked::Pending => Node::Pending,
            Asked::Abort(e) => {
                self.abort = Some(e);
                Node::Pending
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_nothing(_: ResolveInputs) -> BoxFuture<'static, Step> {
        Box::pin(async { Step::Fail(String::new()) })
    }

    static C: ResolverSpec = ResolverSpec {
        name: "c",
        module: "m",
        key: "a",
        deps: &[&D],
        states: &[],
        once: false,
        run: run_nothing,
    };
    static D: ResolverSpec = ResolverSpec {
        name: "a",
        module: "other",
        key: "a",
        deps: &[],
        states: &[],
        once: false,
        run: run_nothing,
    };

    #[test]
    fn colliding_keys_get_suffixes() {
        static PARAMS: [ResolveSlot; 1] = [ResolveSlot {
            param: "x",
            resolver: &C,
        }];
        let keys = Keys::of(&PARAMS);
        assert_eq!(keys.key(&D), "a");
        assert_eq!(keys.key(&C), "a#2");
        assert!(!keys.any_once());
    }

    #[test]
    fn a_once_dependency_makes_the_call_single_use() {
        static E: ResolverSpec = ResolverSpec {
            name: "e",
            module: "m",
            key: "e",
            deps: &[],
            states: &[],
            once: true,
            run: run_nothing,
        };
        static F: ResolverSpec = ResolverSpec {
            name: "f",
            module: "m",
            key: "f",
            deps: &[&E],
            states: &[],
            once: false,
            run: run_nothing,
        };
        static PARAMS: [ResolveSlot; 1] = [ResolveSlot {
            param: "x",
            resolver: &F,
        }];
        assert!(Keys::of(&PARAMS).any_once());
    }
}
