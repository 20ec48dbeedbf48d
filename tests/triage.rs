//! The `triage` example (examples/triage/): an issue-triage server laid out as a user's own would
//! be (`model.rs`, `resolvers.rs`, `tools.rs`, `main.rs`), driven through `TestClient` on both
//! eras, each test with a tracker of its own (no statics, no lock between tests), and its sign-in
//! page called as a browser would post to it. `tests/interop_triage.rs` drives the built binary
//! with the official Python SDK client over real stdio and HTTP.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[allow(dead_code)]
#[path = "../examples/triage/main.rs"]
mod triage;

use mcp_resolve::http::{Method, Request, StatusCode};
use mcp_resolve::protocol::ProtocolVersion;
use mcp_resolve::testing::TestClient;
use mcp_resolve::{Bytes, State};
use serde_json::{Map, Value, json};
use triage::SignInPage;
use triage::model::{PageBase, Tracker};

const BASE: &str = "http://127.0.0.1:8700";

/// A server of its own for one test: its tracker (the sample's), and its sign-in page.
struct Triage {
    server: Option<mcp_resolve::Server>,
    tracker: State<Tracker>,
    page: SignInPage,
}

impl Triage {
    fn new() -> Triage {
        let server = triage::server(Tracker::sample(), PageBase(BASE.into()));
        let tracker = server.state_of::<Tracker>().expect("the server holds the tracker");
        let page = SignInPage {
            flows: server.url_flows(),
            tracker: tracker.clone(),
            base: PageBase(BASE.into()),
        };
        Triage {
            server: Some(server),
            tracker,
            page,
        }
    }

    /// The same, with this server's one user signed in to the tracker as `account` already.
    fn signed_in(account: &str) -> Triage {
        let t = Triage::new();
        t.tracker.sign_in(Tracker::caller(None), account);
        t
    }

    async fn client(&mut self, era: Era) -> TestClient {
        let server = self.server.take().expect("one client per test server");
        match era {
            Era::New => TestClient::stateless(server, json!({"elicitation": {"form": {}, "url": {}}})),
            Era::Old => {
                TestClient::handshake(
                    server,
                    ProtocolVersion::V2025_11_25,
                    json!({"elicitation": {"form": {}, "url": {}}}),
                )
                .await
            }
        }
    }

    /// What the page answers to `method target` with `form` as its body, posted from `origin`.
    async fn page(&self, method: Method, target: &str, origin: Option<&str>, form: &str) -> (StatusCode, String) {
        let mut req = Request::builder().method(method).uri(target);
        if let Some(origin) = origin {
            req = req.header("origin", origin);
        }
        let req = req
            .header("content-type", "application/x-www-form-urlencoded")
            .body(Bytes::from(form.to_owned()))
            .unwrap();
        let resp = self.page.serve(req).await;
        let body = String::from_utf8_lossy(resp.body()).into_owned();
        (resp.status(), body)
    }

    /// The user opens the sign-in URL and signs in as `account`.
    async fn sign_in_at(&self, url: &str, account: &str) {
        let target = url
            .strip_prefix(BASE)
            .unwrap_or_else(|| panic!("{url} is not on {BASE}"));
        let (status, body) = self.page(Method::GET, target, None, "").await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert!(body.contains("Sign in to the issue tracker"), "{body}");
        let form = format!("flow={}&account={account}&decision=sign-in", flow_of(url));
        let (status, body) = self.page(Method::POST, "/sign-in", Some(BASE), &form).await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
}

#[derive(Clone, Copy, Debug)]
enum Era {
    New,
    Old,
}

const ERAS: [Era; 2] = [Era::New, Era::Old];

fn flow_of(url: &str) -> String {
    url.rsplit("flow=").next().unwrap().to_owned()
}

/// One question the server asked: its round (on the handshake era each question is one), its
/// key (on the handshake era, the scripted answer's), message and mode.
#[derive(Debug)]
struct Asked {
    round: u32,
    key: String,
    message: String,
    params: Value,
}

/// Answers by question key; on the handshake era found by the start of the message.
#[derive(Default)]
struct Script(Vec<(&'static str, &'static str, Answer)>);

#[derive(Clone)]
enum Answer {
    /// Accept with this content.
    Accept(Value),
    Decline,
    /// Sign in on the page as this account, then accept (a URL-mode question).
    SignIn(&'static str),
}

impl Script {
    fn answer(mut self, key: &'static str, message_start: &'static str, answer: Answer) -> Self {
        self.0.push((key, message_start, answer));
        self
    }

    fn by_key(&self, key: &str) -> Answer {
        let found = self.0.iter().find(|(k, _, _)| *k == key);
        found
            .unwrap_or_else(|| panic!("no answer scripted for question `{key}`"))
            .2
            .clone()
    }

    fn by_message(&self, message: &str) -> (&'static str, Answer) {
        let found = self.0.iter().find(|(_, start, _)| message.starts_with(start));
        let (key, _, answer) = found.unwrap_or_else(|| panic!("no answer scripted for {message:?}"));
        (key, answer.clone())
    }
}

impl Triage {
    /// The JSON an answer is, after doing on the page what it says.
    async fn give(&self, answer: Answer, question: &Value) -> Value {
        match answer {
            Answer::Accept(content) => json!({"action": "accept", "content": content}),
            Answer::Decline => json!({"action": "decline"}),
            Answer::SignIn(account) => {
                assert_eq!(question["mode"], "url", "{question}");
                self.sign_in_at(question["url"].as_str().unwrap(), account).await;
                json!({"action": "accept"})
            }
        }
    }

    /// Calls `close_issues` on `era`, answering from `script`; what was asked, and the response.
    async fn close(&mut self, era: Era, arguments: Value, script: &Script) -> (Vec<Asked>, Value) {
        let mut client = self.client(era).await;
        self.close_with(&mut client, era, arguments, script).await
    }

    async fn close_with(
        &self,
        client: &mut TestClient,
        era: Era,
        arguments: Value,
        script: &Script,
    ) -> (Vec<Asked>, Value) {
        let mut asked = Vec::new();
        match era {
            Era::New => {
                let mut params = json!({"name": "close_issues", "arguments": arguments});
                for round in 1.. {
                    let r = client.request("tools/call", params.clone()).await;
                    if r["result"]["resultType"] != "input_required" {
                        return (asked, r);
                    }
                    let mut responses = Map::new();
                    for (key, question) in r["result"]["inputRequests"].as_object().unwrap() {
                        let q = &question["params"];
                        asked.push(Asked {
                            round,
                            key: key.clone(),
                            message: q["message"].as_str().unwrap_or_default().into(),
                            params: q.clone(),
                        });
                        responses.insert(key.clone(), self.give(script.by_key(key), q).await);
                    }
                    params["inputResponses"] = Value::Object(responses);
                    params["requestState"] = r["result"]["requestState"].clone();
                }
                unreachable!()
            }
            Era::Old => {
                let id = json!(
                    client
                        .start("tools/call", json!({"name": "close_issues", "arguments": arguments}))
                        .await
                );
                loop {
                    let frame = client.recv().await;
                    if frame["id"] == id && frame.get("method").is_none() {
                        return (asked, frame);
                    }
                    if frame.get("id").is_none() {
                        continue; // notifications/elicitation/complete, logs
                    }
                    assert_eq!(frame["method"], "elicitation/create", "{frame}");
                    let q = &frame["params"];
                    let message = q["message"].as_str().unwrap_or_default().to_owned();
                    let (key, answer) = script.by_message(&message);
                    let round = u32::try_from(asked.len()).unwrap() + 1;
                    let result = self.give(answer, q).await;
                    asked.push(Asked {
                        round,
                        key: key.into(),
                        message,
                        params: q.clone(),
                    });
                    client
                        .send(&json!({"jsonrpc": "2.0", "id": frame["id"], "result": result}))
                        .await;
                }
            }
        }
    }
}

fn rounds(asked: &[Asked]) -> Vec<(u32, &str)> {
    asked.iter().map(|a| (a.round, a.key.as_str())).collect()
}

fn text(response: &Value) -> &str {
    response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {response}"))
}

fn accept(content: Value) -> Answer {
    Answer::Accept(content)
}

const PICK: &str = "5 open issues of acme/app match \"crash\". Which should be closed?";

/// The whole story: five crashes match, four are picked, the user signs in on the page, gives a
/// comment (more than three), and confirms a question naming the four and the account.
#[tokio::test]
async fn four_picked_crashes_are_closed_after_sign_in_comment_and_confirmation_on_both_eras() {
    for era in ERAS {
        let mut t = Triage::new();
        let script = Script::default()
            .answer(
                "pick_issues",
                "5 open issues",
                accept(json!({"issues": ["101", "102", "104", "105"]})),
            )
            .answer("sign_in", "Sign in to the issue tracker", Answer::SignIn("alice"))
            .answer(
                "closing_comment",
                "Closing 4 issues",
                accept(json!({"comment": "fixed in 2.1"})),
            )
            .answer("confirm_close", "Close #101", accept(json!({"ok": true})));
        let (asked, r) = t
            .close(era, json!({"repo": "acme/app", "query": "crash"}), &script)
            .await;

        let order = rounds(&asked);
        match era {
            // The pick first; sign-in and comment both need only the pick, so they share round 2;
            // the confirmation needs them all.
            Era::New => assert_eq!(
                order,
                [
                    (1, "pick_issues"),
                    (2, "closing_comment"),
                    (2, "sign_in"),
                    (3, "confirm_close")
                ]
            ),
            Era::Old => assert_eq!(
                order,
                [
                    (1, "pick_issues"),
                    (2, "sign_in"),
                    (3, "closing_comment"),
                    (4, "confirm_close")
                ]
            ),
        }
        // The options are the five matching issues, built from the tracker when asked.
        assert_eq!(asked[0].message, PICK);
        let items = &asked[0].params["requestedSchema"]["properties"]["issues"]["items"]["anyOf"];
        assert_eq!(
            items,
            &json!([
                {"const": "101", "title": "#101 crash on start"},
                {"const": "102", "title": "#102 crash when saving"},
                {"const": "104", "title": "#104 crash on exit"},
                {"const": "105", "title": "#105 crash after update"},
                {"const": "106", "title": "#106 crash in settings"},
            ]),
            "{era:?}"
        );
        let sign_in = asked.iter().find(|a| a.key == "sign_in").unwrap();
        assert_eq!(sign_in.params["mode"], "url");
        assert!(
            sign_in.params["url"]
                .as_str()
                .unwrap()
                .starts_with(&format!("{BASE}/sign-in?flow="))
        );
        assert_eq!(
            asked.last().unwrap().message,
            "Close #101, #102, #104, #105 in acme/app as alice with the comment \"fixed in 2.1\"?"
        );
        assert_eq!(
            text(&r),
            "Closed #101, #102, #104, #105 in acme/app as alice.",
            "{era:?}"
        );

        // What the tool did to this test's own tracker.
        let open: Vec<u32> = t
            .tracker
            .open_issues("acme/app")
            .unwrap()
            .iter()
            .map(|i| i.id)
            .collect();
        assert_eq!(open, [103, 106], "{era:?}");
        let closed = t.tracker.issue("acme/app", 104).unwrap();
        assert_eq!(closed.comments, ["fixed in 2.1"]);
        assert_eq!(closed.closed_by.as_deref(), Some("alice"));
        assert_eq!(t.tracker.account_of(""), Some("alice".into()), "the session is kept");
    }
}

/// Two picked: no comment is asked; signed in already: no page; the confirmation names them.
#[tokio::test]
async fn a_signed_in_user_picking_two_is_asked_no_comment_and_no_sign_in_on_both_eras() {
    for era in ERAS {
        let mut t = Triage::signed_in("bob");
        let script = Script::default()
            .answer(
                "pick_issues",
                "5 open issues",
                accept(json!({"issues": ["102", "106"]})),
            )
            .answer(
                "confirm_close",
                "Close #102, #106 in acme/app as bob?",
                accept(json!({"ok": true})),
            );
        let (asked, r) = t
            .close(era, json!({"repo": "acme/app", "query": "crash"}), &script)
            .await;
        assert_eq!(rounds(&asked), [(1, "pick_issues"), (2, "confirm_close")], "{era:?}");
        assert_eq!(asked[1].message, "Close #102, #106 in acme/app as bob?");
        assert_eq!(text(&r), "Closed #102, #106 in acme/app as bob.");
        assert!(t.tracker.issue("acme/app", 102).unwrap().comments.is_empty());
    }
}

/// One match: nothing to pick; the confirmation is the only question.
#[tokio::test]
async fn a_single_match_is_not_offered_as_a_choice_on_both_eras() {
    for era in ERAS {
        let mut t = Triage::signed_in("bob");
        let script = Script::default().answer(
            "confirm_close",
            "Close #103 in acme/app as bob?",
            accept(json!({"ok": true})),
        );
        let (asked, r) = t
            .close(era, json!({"repo": "acme/app", "query": "DARK"}), &script)
            .await;
        assert_eq!(rounds(&asked), [(1, "confirm_close")], "{era:?}");
        assert_eq!(text(&r), "Closed #103 in acme/app as bob.");
    }
}

/// A declined pick asks nothing more (no sign-in, no comment, no confirmation) and closes nothing;
/// a declined confirmation closes nothing either.
#[tokio::test]
async fn declines_close_nothing_and_a_declined_pick_asks_nothing_more_on_both_eras() {
    for era in ERAS {
        let mut t = Triage::new();
        let script = Script::default().answer("pick_issues", "5 open issues", Answer::Decline);
        let (asked, r) = t
            .close(era, json!({"repo": "acme/app", "query": "crash"}), &script)
            .await;
        assert_eq!(rounds(&asked), [(1, "pick_issues")], "{era:?}");
        assert_eq!(text(&r), "Nothing closed: you chose no issues.");
        assert_eq!(r["result"]["isError"], false);

        let mut t = Triage::signed_in("carol");
        let script = Script::default()
            .answer(
                "pick_issues",
                "5 open issues",
                accept(json!({"issues": ["101", "102"]})),
            )
            .answer("confirm_close", "Close #101, #102", Answer::Decline);
        let (asked, r) = t
            .close(era, json!({"repo": "acme/app", "query": "crash"}), &script)
            .await;
        assert_eq!(asked.len(), 2, "{era:?}");
        assert_eq!(text(&r), "Nothing closed: not confirmed.");
        assert_eq!(t.tracker.open_issues("acme/app").unwrap().len(), 6, "nothing closed");

        // Refusing on the sign-in page is a decline of that question: no confirmation follows.
        let mut t = Triage::new();
        let mut client = t.client(era).await;
        let id = match era {
            Era::New => None,
            Era::Old => Some(
                client
                    .start(
                        "tools/call",
                        json!({"name": "close_issues", "arguments": {"repo": "acme/site", "query": "link"}}),
                    )
                    .await,
            ),
        };
        let url = match era {
            Era::New => {
                let r = client
                    .request(
                        "tools/call",
                        json!({"name": "close_issues", "arguments": {"repo": "acme/site", "query": "link"}}),
                    )
                    .await;
                let q = &r["result"]["inputRequests"]["sign_in"]["params"];
                let form = format!("flow={}&decision=refuse", flow_of(q["url"].as_str().unwrap()));
                let (status, _) = t.page(Method::POST, "/sign-in", Some(BASE), &form).await;
                assert_eq!(status, StatusCode::OK);
                let retry = json!({"name": "close_issues", "arguments": {"repo": "acme/site", "query": "link"},
                    "inputResponses": {"sign_in": {"action": "accept"}}, "requestState": r["result"]["requestState"]});
                let r = client.request("tools/call", retry).await;
                assert_eq!(text(&r), "Nothing closed: you did not sign in to the tracker.");
                continue;
            }
            Era::Old => client.recv().await,
        };
        let form = format!(
            "flow={}&decision=refuse",
            flow_of(url["params"]["url"].as_str().unwrap())
        );
        let (status, _) = t.page(Method::POST, "/sign-in", Some(BASE), &form).await;
        assert_eq!(status, StatusCode::OK);
        client
            .send(&json!({"jsonrpc": "2.0", "id": url["id"], "result": {"action": "accept"}}))
            .await;
        let r = client.response_to(&json!(id.unwrap())).await;
        assert_eq!(text(&r), "Nothing closed: you did not sign in to the tracker.");
        assert_eq!(t.tracker.account_of(""), None);
    }
}

/// Mistakes the model can fix are errors it reads, not questions for the user.
#[tokio::test]
async fn an_unknown_repository_or_no_match_is_an_error_for_the_model_and_asks_nothing() {
    for era in ERAS {
        let mut t = Triage::new();
        let mut client = t.client(era).await;
        let (asked, r) = t
            .close_with(
                &mut client,
                era,
                json!({"repo": "acme/nope", "query": "crash"}),
                &Script::default(),
            )
            .await;
        assert!(asked.is_empty());
        assert_eq!(r["result"]["isError"], true);
        assert_eq!(
            text(&r),
            "there is no repository acme/nope; the repositories are acme/app, acme/site"
        );
        let (asked, r) = t
            .close_with(
                &mut client,
                era,
                json!({"repo": "acme/app", "query": "flicker"}),
                &Script::default(),
            )
            .await;
        assert!(asked.is_empty());
        assert_eq!(text(&r), "no open issue of acme/app has \"flicker\" in its title");
    }
}

/// A pick of an issue that was not offered (103 exists, but is no crash) is refused.
#[tokio::test]
async fn an_answer_outside_the_offered_issues_is_refused() {
    for era in ERAS {
        let mut t = Triage::signed_in("bob");
        let script = Script::default().answer(
            "pick_issues",
            "5 open issues",
            accept(json!({"issues": ["101", "103"]})),
        );
        let (_, r) = t
            .close(era, json!({"repo": "acme/app", "query": "crash"}), &script)
            .await;
        assert_eq!(r["result"]["isError"], true, "{era:?}: {r}");
        assert!(text(&r).contains("103"), "{r}");
        assert_eq!(t.tracker.open_issues("acme/app").unwrap().len(), 6);
    }
}

/// Each server has its own tracker: closing on one leaves the other's as it was.
#[tokio::test]
async fn two_servers_in_one_process_have_their_own_tracker() {
    let (mut a, b) = (Triage::signed_in("ann"), Triage::new());
    let script = Script::default().answer("confirm_close", "Close #7", accept(json!({"ok": true})));
    let (_, r) = a
        .close(Era::New, json!({"repo": "acme/site", "query": "link"}), &script)
        .await;
    assert_eq!(text(&r), "Closed #7 in acme/site as ann.");
    assert!(a.tracker.open_issues("acme/site").unwrap().is_empty());
    assert_eq!(b.tracker.open_issues("acme/site").unwrap().len(), 1);
    assert_eq!(b.tracker.account_of(""), None);
}

/// The resource template takes `owner/name` (`{+repo}`) and says "not found" for an unknown one;
/// the prompt lists the open issues and completes the repository's name.
#[tokio::test]
async fn the_resource_template_and_the_prompt_read_the_tracker_on_both_eras() {
    for era in ERAS {
        let mut t = Triage::new();
        t.tracker.close("acme/app", &[101], None, "test");
        let mut client = t.client(era).await;
        let r = client
            .request("resources/read", json!({"uri": "issues://acme/app/open"}))
            .await;
        let contents = &r["result"]["contents"][0];
        assert_eq!(contents["mimeType"], "application/json");
        let issues: Value = serde_json::from_str(contents["text"].as_str().unwrap()).unwrap();
        let ids: Vec<&Value> = issues.as_array().unwrap().iter().map(|i| &i["id"]).collect();
        assert_eq!(ids, [102, 103, 104, 105, 106], "{era:?}");

        let r = client
            .request("resources/read", json!({"uri": "issues://acme/nope/open"}))
            .await;
        let code = match era {
            Era::New => -32602,
            Era::Old => -32002,
        };
        assert_eq!(r["error"]["code"], code, "{r}");
        assert_eq!(r["error"]["data"]["uri"], "issues://acme/nope/open");

        let r = client
            .request(
                "prompts/get",
                json!({"name": "triage", "arguments": {"repo": "acme/site"}}),
            )
            .await;
        let prompt = r["result"]["messages"][0]["content"]["text"].as_str().unwrap();
        assert!(
            prompt.starts_with("These are the open issues of acme/site:\n- #7 broken link on the home page\n"),
            "{prompt}"
        );

        let r = client
            .request(
                "completion/complete",
                json!({"ref": {"type": "ref/prompt", "name": "triage"}, "argument": {"name": "repo", "value": "acme/s"}}),
            )
            .await;
        assert_eq!(r["result"]["completion"]["values"], json!(["acme/site"]));
    }
}

/// The page takes posts from its own origin only, each sign-in once, and a valid account name.
#[tokio::test]
async fn the_sign_in_page_refuses_other_origins_replays_unknown_links_and_bad_names() {
    let mut t = Triage::new();
    let mut client = t.client(Era::New).await;
    let r = client
        .request(
            "tools/call",
            json!({"name": "close_issues", "arguments": {"repo": "acme/site", "query": "link"}}),
        )
        .await;
    let url = r["result"]["inputRequests"]["sign_in"]["params"]["url"]
        .as_str()
        .unwrap()
        .to_owned();
    let flow = flow_of(&url);
    let sign_in = format!("flow={flow}&account=alice&decision=sign-in");

    let (status, _) = t
        .page(Method::POST, "/sign-in", Some("https://evil.example"), &sign_in)
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _) = t.page(Method::POST, "/sign-in", None, &sign_in).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let bad = format!("flow={flow}&account=%3Cscript%3E&decision=sign-in");
    let (status, _) = t.page(Method::POST, "/sign-in", Some(BASE), &bad).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _) = t.page(Method::GET, "/sign-in?flow=nope", None, "").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(t.tracker.account_of(""), None, "nothing refused signed anyone in");

    let (status, _) = t.page(Method::POST, "/sign-in", Some(BASE), &sign_in).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = t.page(Method::POST, "/sign-in", Some(BASE), &sign_in).await;
    assert_eq!(status, StatusCode::CONFLICT, "a sign-in completes once");
    assert_eq!(t.tracker.account_of(""), Some("alice".into()));
}
