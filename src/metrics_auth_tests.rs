//! `/metrics` behind the token and access reviews: the `Authorization` header, the decision
//! cache, and the HTTP answers of the operator's router against the fake apiserver, which
//! plays the TokenReview and SubjectAccessReview APIs.

use axum::body::Body;
use axum::http::{HeaderValue, Request as HttpRequest};
use http::Method;
use serde_json::{json, Value};
use tower::ServiceExt as _;

use super::*;
use crate::fake_api::{FakeApi, Fault};
use crate::telemetry::{router, Metrics};

fn headers(values: &[&str]) -> HeaderMap {
    let mut h = HeaderMap::new();
    for v in values {
        h.append(header::AUTHORIZATION, HeaderValue::from_str(v).unwrap());
    }
    h
}

#[test]
fn the_bearer_token_is_read_from_one_authorization_header() {
    assert_eq!(bearer_token(&headers(&["Bearer abc.def"])), Ok("abc.def"));
    assert_eq!(bearer_token(&headers(&["bearer abc"])), Ok("abc"));
    assert_eq!(bearer_token(&headers(&["BEARER  abc "])), Ok("abc"));
    assert_eq!(bearer_token(&headers(&[])), Err(TokenError::Missing));
    for bad in [
        &["Basic dXNlcjpwYXNz"][..],
        &["Bearer"],
        &["Bearer "],
        &["Bearer a b"],
        &["abc"],
        &["Bearer a", "Bearer b"],
    ] {
        assert_eq!(
            bearer_token(&headers(bad)),
            Err(TokenError::Malformed),
            "{bad:?}"
        );
    }
}

#[test]
fn tokens_are_cached_by_their_sha256() {
    assert_eq!(token_hash("a"), token_hash("a"));
    assert_ne!(token_hash("a"), token_hash("b"));
    // SHA-256("abc"), FIPS 180-2 appendix B.1.
    assert_eq!(
        token_hash("abc")[..4],
        [0xba, 0x78, 0x16, 0xbf],
        "{:02x?}",
        token_hash("abc")
    );
}

fn allowed(user: &str) -> Decision {
    Decision::Allowed { user: user.into() }
}

#[test]
fn a_decision_is_reused_until_the_ttl_has_passed() {
    let t0 = Instant::now();
    let mut cache = DecisionCache::new(Duration::from_secs(30), 8);
    let key = token_hash("t");
    assert_eq!(cache.get(&key, t0), None);
    cache.put(key, allowed("u"), t0);
    assert_eq!(
        cache.get(&key, t0 + Duration::from_secs(29)),
        Some(allowed("u"))
    );
    assert_eq!(cache.get(&key, t0 + Duration::from_secs(30)), None);
    assert!(cache.is_empty(), "an expired decision is removed");
}

#[test]
fn a_full_cache_drops_expired_decisions_first_then_the_oldest() {
    let t0 = Instant::now();
    let s = Duration::from_secs;
    let mut cache = DecisionCache::new(s(30), 3);
    cache.put(token_hash("expired"), allowed("a"), t0);
    cache.put(token_hash("old"), allowed("b"), t0 + s(10));
    cache.put(token_hash("new"), allowed("c"), t0 + s(20));
    // At t0+35 "expired" has expired: it makes room, the others stay.
    cache.put(token_hash("fourth"), allowed("d"), t0 + s(35));
    assert_eq!(cache.len(), 3);
    assert_eq!(cache.get(&token_hash("expired"), t0 + s(35)), None);
    assert_eq!(
        cache.get(&token_hash("old"), t0 + s(35)),
        Some(allowed("b"))
    );
    // Nothing expired at t0+36: the oldest ("old") goes.
    cache.put(token_hash("fifth"), allowed("e"), t0 + s(36));
    assert_eq!(cache.len(), 3);
    assert_eq!(cache.get(&token_hash("old"), t0 + s(36)), None);
    for (t, u) in [("new", "c"), ("fourth", "d"), ("fifth", "e")] {
        assert_eq!(
            cache.get(&token_hash(t), t0 + s(36)),
            Some(allowed(u)),
            "{t}"
        );
    }
    // Replacing a kept decision evicts nothing.
    cache.put(token_hash("new"), allowed("c2"), t0 + s(37));
    assert_eq!(cache.len(), 3);
    let mut off = DecisionCache::new(s(30), 0);
    off.put(token_hash("x"), allowed("x"), t0);
    assert!(off.is_empty(), "capacity 0 caches nothing");
}

const READER: &str = "system:serviceaccount:monitoring:prometheus";
const NOBODY: &str = "system:serviceaccount:bench:default";

/// The fake apiserver's reviews: token `reader-token` is [`READER`], who may get `/metrics`;
/// `nobody-token` is [`NOBODY`], who may not; any other token is not accepted.
fn reviewing_api() -> FakeApi {
    let fake = FakeApi::new();
    fake.answer_creates("tokenreviews", |body: &Value| {
        let user = match body["spec"]["token"].as_str() {
            Some("reader-token") => READER,
            Some("nobody-token") => NOBODY,
            _ => {
                return json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
                    "metadata": {}, "spec": body["spec"],
                    "status": {"authenticated": false, "error": "invalid bearer token"}})
            }
        };
        json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
            "metadata": {}, "spec": body["spec"],
            "status": {"authenticated": true, "user": {"username": user, "uid": "u-1",
                "groups": ["system:serviceaccounts", "system:authenticated"]}}})
    });
    fake.answer_creates("subjectaccessreviews", |body: &Value| {
        let spec = &body["spec"];
        let allowed = spec["user"] == READER
            && spec["groups"][1] == "system:authenticated"
            && spec["nonResourceAttributes"] == json!({"path": "/metrics", "verb": "get"})
            && spec["resourceAttributes"].is_null();
        json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
            "metadata": {}, "spec": spec, "status": {"allowed": allowed}})
    });
    fake
}

/// GETs `path` from the operator's router with `auth`, with `token` as bearer token.
async fn get(app: &axum::Router, path: &str, token: Option<&str>) -> (StatusCode, String, bool) {
    let mut req = HttpRequest::get(path);
    if let Some(t) = token {
        req = req.header(header::AUTHORIZATION, format!("Bearer {t}"));
    }
    let res = app
        .clone()
        .oneshot(req.body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = res.status();
    let challenge =
        res.headers().get(header::WWW_AUTHENTICATE) == Some(&HeaderValue::from_static("Bearer"));
    let body = axum::body::to_bytes(res.into_body(), usize::MAX)
        .await
        .unwrap();
    (
        status,
        String::from_utf8_lossy(&body).into_owned(),
        challenge,
    )
}

fn reviews(fake: &FakeApi, resource: &str) -> usize {
    fake.requests()
        .iter()
        .filter(|r| r.method == Method::POST && r.path.ends_with(resource))
        .count()
}

#[tokio::test]
async fn metrics_answer_401_without_a_valid_token_403_without_the_right_and_200_with_it() {
    let fake = reviewing_api();
    let auth = Arc::new(MetricsAuth::new(fake.client()));
    let app = router(Arc::new(Metrics::default()), Some(auth));

    let (code, body, challenge) = get(&app, "/metrics", None).await;
    assert_eq!(code, StatusCode::UNAUTHORIZED, "{body}");
    assert!(challenge, "a 401 names the Bearer scheme");
    assert!(body.contains("benchrun-metrics-reader"), "{body}");
    assert_eq!(reviews(&fake, "tokenreviews"), 0, "no token, no review");

    let (code, body, challenge) = get(&app, "/metrics", Some("made-up")).await;
    assert_eq!(code, StatusCode::UNAUTHORIZED, "{body}");
    assert!(challenge);
    assert!(!body.contains("benchrun_"), "{body}");
    assert_eq!(
        reviews(&fake, "subjectaccessreviews"),
        0,
        "no SAR for a bad token"
    );

    let (code, body, _) = get(&app, "/metrics", Some("nobody-token")).await;
    assert_eq!(code, StatusCode::FORBIDDEN, "{body}");
    assert!(
        body.contains(NOBODY) && body.contains("benchrun-metrics-reader"),
        "{body}"
    );
    assert!(!body.contains("benchrun_leader"), "{body}");

    let (code, body, _) = get(&app, "/metrics", Some("reader-token")).await;
    assert_eq!(code, StatusCode::OK, "{body}");
    assert!(body.contains("benchrun_leader 0"), "{body}");
    assert_eq!(reviews(&fake, "tokenreviews"), 3);
    assert_eq!(reviews(&fake, "subjectaccessreviews"), 2);

    // Scrapes within the TTL reuse each decision: no further review.
    for (token, want) in [
        ("reader-token", StatusCode::OK),
        ("nobody-token", StatusCode::FORBIDDEN),
        ("made-up", StatusCode::UNAUTHORIZED),
    ] {
        assert_eq!(get(&app, "/metrics", Some(token)).await.0, want, "{token}");
    }
    assert_eq!(reviews(&fake, "tokenreviews"), 3);
    assert_eq!(reviews(&fake, "subjectaccessreviews"), 2);

    // The probes ask for no token.
    assert_eq!(get(&app, "/healthz", None).await.0, StatusCode::OK);
    assert_eq!(
        get(&app, "/readyz", None).await.0,
        StatusCode::SERVICE_UNAVAILABLE,
        "starting: not ready, but not refused either"
    );
}

#[tokio::test]
async fn a_review_the_operator_may_not_make_is_a_500_that_says_which_grant_is_missing() {
    let fake = reviewing_api();
    fake.fail(
        Method::POST,
        "tokenreviews",
        Fault::Status(
            403,
            "Forbidden",
            "tokenreviews.authentication.k8s.io is forbidden".into(),
        ),
        1,
    );
    let auth = Arc::new(MetricsAuth::new(fake.client()));
    let app = router(Arc::new(Metrics::default()), Some(auth));
    let (code, body, _) = get(&app, "/metrics", Some("reader-token")).await;
    assert_eq!(code, StatusCode::INTERNAL_SERVER_ERROR, "{body}");
    assert!(
        body.contains("tokenreviews.authentication.k8s.io is forbidden")
            && body.contains("benchrun-operator-metrics-auth")
            && body.contains("--metrics-auth=false"),
        "{body}"
    );
    // The failure is not cached: the next scrape reviews again and is let in.
    assert_eq!(
        get(&app, "/metrics", Some("reader-token")).await.0,
        StatusCode::OK
    );
}

#[tokio::test]
async fn without_auth_metrics_are_served_to_anyone() {
    let app = router(Arc::new(Metrics::default()), None);
    let (code, body, _) = get(&app, "/metrics", None).await;
    assert_eq!(code, StatusCode::OK);
    assert!(body.contains("benchrun_leader 0"), "{body}");
}
