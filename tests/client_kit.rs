//! The client's test kit: `Client::builder().in_process(server)` with `Scripted` answers, every
//! branch of a tool that asks (accept, decline, cancel, invalid content, no elicitation
//! support, answers per round) on both eras, the question keys the same on both.

#![cfg(feature = "client")]
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs, unreachable_pub)]

use mcp_resolve::client::{Answer, Client, ClientError, EraChoice, Scripted, content_text};
use mcp_resolve::prelude::*;
use serde_json::json;

#[derive(Clone, Debug, FormSchema)]
pub struct When {
    #[form(format = "date")]
    pub date: String,
}

#[resolver]
async fn ask_date(city: String) -> Elicit<When> {
    Elicit::form(format!("When do you want to go to {city}?"))
}

#[resolver(key = "price")]
async fn confirm_price(#[resolve(ask_date)] when: When) -> Resolution<Confirm> {
    if !when.date.contains("-12-") {
        return Resolution::Value(Confirm { ok: true });
    }
    Elicit::form(format!("December costs more. Book {} anyway?", when.date)).into()
}

/// Books a trip.
#[tool]
async fn book(
    city: String,
    #[resolve(ask_date)] when: ElicitationResult<When>,
    #[resolve(confirm_price)] ok: ElicitationResult<Confirm>,
) -> String {
    match (when, ok) {
        (ElicitationResult::Accepted(w), ElicitationResult::Accepted(Confirm { ok: true })) => {
            format!("booked {city} on {}", w.date)
        }
        (ElicitationResult::Accepted(_), _) => "not booked".into(),
        (ElicitationResult::Declined, _) => "declined".into(),
        (ElicitationResult::Cancelled, _) => "cancelled".into(),
    }
}

fn server() -> Server {
    Server::new("trips").tool(book)
}

const ERAS: [EraChoice; 2] = [EraChoice::Stateless, EraChoice::Handshake];

async fn call(era: EraChoice, answers: &Scripted) -> Result<String, ClientError> {
    let client = Client::builder()
        .era(era)
        .elicitation(answers.clone())
        .in_process(server())
        .await?;
    let r = client.call_tool("book", json!({"city": "Lyon"})).await?;
    Ok(content_text(&r.content))
}

#[tokio::test]
async fn accepted_answers_book_the_trip_with_the_same_keys_on_both_eras() {
    for era in ERAS {
        let answers = Scripted::new()
            .on("ask_date", Answer::json(json!({"date": "2026-12-24"})))
            .on("price", Answer::json(json!({"ok": true})));
        assert_eq!(
            call(era, &answers).await.unwrap(),
            "booked Lyon on 2026-12-24",
            "{era:?}"
        );
        assert_eq!(answers.keys(), ["ask_date", "price"], "{era:?}: asked in order, by key");
        let asked = answers.asked();
        assert_eq!(asked[0].message, "When do you want to go to Lyon?");
        assert_eq!(asked[1].message, "December costs more. Book 2026-12-24 anyway?");
        assert_eq!(asked[0].server.name, "trips");
    }
}

#[tokio::test]
async fn a_date_outside_december_asks_nothing_more() {
    for era in ERAS {
        let answers = Scripted::new().on("ask_date", Answer::json(json!({"date": "2026-05-01"})));
        assert_eq!(call(era, &answers).await.unwrap(), "booked Lyon on 2026-05-01");
        assert_eq!(answers.keys(), ["ask_date"], "{era:?}");
    }
}

#[tokio::test]
async fn decline_and_cancel_reach_the_tool_and_nothing_more_is_asked() {
    for era in ERAS {
        for (answer, expected) in [(Answer::Decline, "declined"), (Answer::Cancel, "cancelled")] {
            let answers = Scripted::new().on("ask_date", answer);
            assert_eq!(call(era, &answers).await.unwrap(), expected, "{era:?}");
            assert_eq!(answers.keys(), ["ask_date"], "{era:?}");
        }
        // The unscripted default is a cancel.
        let answers = Scripted::new();
        assert_eq!(call(era, &answers).await.unwrap(), "cancelled");
    }
}

#[tokio::test]
async fn a_no_to_the_second_question_books_nothing() {
    for era in ERAS {
        let answers = Scripted::new()
            .on("ask_date", Answer::json(json!({"date": "2026-12-24"})))
            .on("price", Answer::json(json!({"ok": false})));
        assert_eq!(call(era, &answers).await.unwrap(), "not booked", "{era:?}");
    }
}

#[tokio::test]
async fn content_that_does_not_fit_the_form_is_refused_by_the_server() {
    for era in ERAS {
        let answers = Scripted::new().on("ask_date", Answer::json(json!({"date": 5})));
        let outcome = call(era, &answers).await;
        let text = match &outcome {
            Ok(t) => t.clone(),
            Err(e) => e.to_string(),
        };
        assert!(text.contains("does not match its form"), "{era:?}: {text}");
        assert_ne!(text, "booked Lyon on 5");
    }
}

#[tokio::test]
async fn answers_per_round_a_first_refusal_then_an_answer_on_the_next_call() {
    for era in ERAS {
        let answers = Scripted::new()
            .on_round("ask_date", 1, Answer::Decline)
            .on("ask_date", Answer::json(json!({"date": "2026-06-01"})));
        assert_eq!(
            call(era, &answers).await.unwrap(),
            "declined",
            "{era:?}: the first time"
        );
        assert_eq!(
            call(era, &answers).await.unwrap(),
            "booked Lyon on 2026-06-01",
            "{era:?}: the second"
        );
        assert_eq!(answers.keys(), ["ask_date", "ask_date"]);
    }
}

#[tokio::test]
async fn a_client_without_elicitation_gets_a_clear_error_and_declares_nothing() {
    for era in ERAS {
        let client = Client::builder().era(era).in_process(server()).await.unwrap();
        let outcome = client.call_tool("book", json!({"city": "Lyon"})).await;
        let text = match &outcome {
            Ok(r) => {
                assert!(r.is_error, "{era:?}");
                content_text(&r.content)
            }
            Err(e) => e.to_string(),
        };
        assert!(text.contains("elicitation"), "{era:?}: {text}");
    }
}

#[tokio::test]
async fn a_server_lacking_state_is_an_error_when_connecting() {
    #[tool]
    async fn needs(count: State<u32>) -> String {
        count.to_string()
    }
    let e = Client::builder()
        .in_process(Server::new("s").tool(needs))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("u32"), "{e}");
}

#[tokio::test]
async fn a_handler_taking_no_mode_declares_no_elicitation_and_one_mode_declares_that_mode() {
    for era in ERAS {
        // Neither mode: the server sees a client without elicitation.
        let none = Scripted::new().form_only().url_only();
        let text = match call(era, &none).await {
            Ok(t) => t,
            Err(e) => e.to_string(),
        };
        assert!(text.contains("elicitation"), "{era:?}: {text}");
        assert!(none.keys().is_empty(), "{era:?}: nothing asked");
        // Form mode only is enough for a form.
        let form = Scripted::new()
            .form_only()
            .on("ask_date", Answer::json(json!({"date": "2026-05-01"})));
        assert_eq!(call(era, &form).await.unwrap(), "booked Lyon on 2026-05-01", "{era:?}");
    }
}

#[resolver(key = "capital")]
async fn ask_capital(country: String) -> Sample {
    Sample::new(format!("What is the capital of {country}?")).max_tokens(20)
}

#[resolver(key = "where")]
async fn ask_roots() -> ListRoots {
    ListRoots
}

/// Samples the client's model and lists its roots.
#[tool]
async fn capital(
    country: String,
    #[resolve(ask_capital)] reply: Sampled,
    #[resolve(ask_roots)] roots: Vec<Root>,
) -> String {
    format!("{country}: {} ({} root(s))", reply.text().unwrap_or("?"), roots.len())
}

#[tokio::test]
async fn sampling_and_roots_are_answered_by_their_handlers_on_both_eras() {
    for era in ERAS {
        let asked = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let log = asked.clone();
        let client = Client::builder()
            .era(era)
            .sampling(move |params: serde_json::Value| {
                log.lock()
                    .unwrap()
                    .push(params["messages"][0]["content"]["text"].clone());
                async move {
                    Ok(
                        json!({"role": "assistant", "content": {"type": "text", "text": "Paris"},
                              "model": "test-llm", "stopReason": "endTurn"}),
                    )
                }
            })
            .roots(vec![Root::new("file:///work/notes").name("notes")])
            .in_process(Server::new("geo").tool(capital))
            .await
            .unwrap();
        let r = client.call_tool("capital", json!({"country": "France"})).await.unwrap();
        assert_eq!(content_text(&r.content), "France: Paris (1 root(s))", "{era:?}");
        assert_eq!(
            *asked.lock().unwrap(),
            [json!("What is the capital of France?")],
            "{era:?}"
        );
        // A client without them: the server says what is missing, nothing is asked.
        let bare = Client::builder()
            .era(era)
            .in_process(Server::new("geo").tool(capital))
            .await
            .unwrap();
        let text = match bare.call_tool("capital", json!({"country": "France"})).await {
            Ok(r) => content_text(&r.content),
            Err(e) => e.to_string(),
        };
        assert!(text.contains("sampling"), "{era:?}: {text}");
    }
}

#[tokio::test]
async fn a_refused_sample_ends_the_call_with_the_reason() {
    for era in ERAS {
        let client = Client::builder()
            .era(era)
            .sampling(|_: serde_json::Value| async { Err("the user said no".to_owned()) })
            .roots(Vec::new())
            .in_process(Server::new("geo").tool(capital))
            .await
            .unwrap();
        let text = match client.call_tool("capital", json!({"country": "France"})).await {
            Ok(r) => content_text(&r.content),
            Err(e) => e.to_string(),
        };
        assert!(!text.starts_with("France: Paris"), "{era:?}: {text}");
        assert!(
            text.contains("the user said no") || text.contains("sampl"),
            "{era:?}: {text}"
        );
    }
}
