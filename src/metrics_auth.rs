//! Authentication and authorisation of `/metrics`, the way Kubernetes components and
//! kubebuilder-made operators do it (controller-runtime's `WithAuthenticationAndAuthorization`
//! filter): the request's bearer token is reviewed by the apiserver (a TokenReview,
//! `authentication.k8s.io/v1`), and the user it names must be allowed `get` on the
//! non-resource URL `/metrics` (a SubjectAccessReview, `authorization.k8s.io/v1`). The
//! ClusterRole `benchrun-metrics-reader` (deploy/base/metrics-auth.yaml) grants that to a
//! scraper; the operator's own ClusterRole `benchrun-operator-metrics-auth` lets it create the
//! two reviews.
//!
//! No token or a malformed `Authorization` header: 401. A token the apiserver does not accept:
//! 401. A user without the right: 403. A review the operator could not make (the apiserver is
//! unreachable, or the operator may not create reviews): 500, with the apiserver's words.
//!
//! Decisions are cached per SHA-256 of the token for [`CACHE_TTL`], so that a scrape every few
//! seconds costs the apiserver two requests per token and TTL; a review that failed is not
//! cached. The pure parts ([`bearer_token`], [`DecisionCache`]) are tested without a server,
//! the reviews against the fake apiserver.
//!
//! `--metrics-auth=false` serves `/metrics` to anyone who reaches the port (a single-tenant
//! install); `/healthz` and `/readyz` are never authenticated (the kubelet probes them).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec};
use k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kube::api::PostParams;
use kube::Api;

/// How long a decision about a token is reused: scrapes come every few seconds, and a revoked
/// right or a deleted service account is noticed within this time.
pub const CACHE_TTL: Duration = Duration::from_secs(30);

/// The most tokens whose decisions are kept (beyond it, the oldest decision is dropped), so a
/// flood of made-up tokens cannot grow the operator's memory.
pub const CACHE_CAPACITY: usize = 1024;

/// The non-resource URL a scraper must be allowed to `get`.
pub const METRICS_PATH: &str = "/metrics";

/// What the apiserver said about a token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// The token names this user, who may get `/metrics`.
    Allowed {
        /// The user's name, e.g. `system:serviceaccount:monitoring:prometheus`.
        user: String,
    },
    /// The token names this user, who may not get `/metrics`.
    Forbidden {
        /// The user's name.
        user: String,
        /// The authoriser's reason (often empty for a plain "no").
        reason: String,
    },
    /// The apiserver did not accept the token.
    Unauthenticated {
        /// The TokenReview's error (e.g. an expired or unknown token).
        error: String,
    },
}

/// Why a request has no token to review.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenError {
    /// No `Authorization` header.
    Missing,
    /// An `Authorization` header that is not one `Bearer <token>`.
    Malformed,
}

/// The bearer token of a request: one `Authorization: Bearer <token>` header (the scheme in
/// any case, RFC 7235), the token without spaces.
pub fn bearer_token(headers: &HeaderMap) -> Result<&str, TokenError> {
    let mut values = headers.get_all(header::AUTHORIZATION).iter();
    let value = values.next().ok_or(TokenError::Missing)?;
    if values.next().is_some() {
        return Err(TokenError::Malformed);
    }
    let value = value.to_str().map_err(|_| TokenError::Malformed)?.trim();
    let (scheme, token) = value.split_once(' ').ok_or(TokenError::Malformed)?;
    let token = token.trim();
    if !scheme.eq_ignore_ascii_case("bearer")
        || token.is_empty()
        || token.contains(char::is_whitespace)
    {
        return Err(TokenError::Malformed);
    }
    Ok(token)
}

/// The cache key of a token: its SHA-256, so the cache holds no token and no made-up token
/// can share the entry of a real one.
pub type TokenHash = [u8; 32];

/// [`TokenHash`] of `token`.
pub fn token_hash(token: &str) -> TokenHash {
    let digest = ring::digest::digest(&ring::digest::SHA256, token.as_bytes());
    let mut out = [0; 32];
    out.copy_from_slice(digest.as_ref());
    out
}

/// Decisions by token hash, each for `ttl` after it was made; at most `capacity` of them.
#[derive(Debug)]
pub struct DecisionCache {
    ttl: Duration,
    capacity: usize,
    entries: HashMap<TokenHash, (Instant, Decision)>,
}

impl DecisionCache {
    /// An empty cache.
    pub fn new(ttl: Duration, capacity: usize) -> Self {
        Self {
            ttl,
            capacity,
            entries: HashMap::new(),
        }
    }

    /// The decision about `key` made less than the TTL before `now`; an expired one is
    /// removed.
    pub fn get(&mut self, key: &TokenHash, now: Instant) -> Option<Decision> {
        let (at, decision) = self.entries.get(key)?;
        if now.saturating_duration_since(*at) < self.ttl {
            return Some(decision.clone());
        }
        self.entries.remove(key);
        None
    }

    /// Keeps `decision` about `key`, made at `now`. When the cache is full, expired entries
    /// go first, then the oldest.
    pub fn put(&mut self, key: TokenHash, decision: Decision, now: Instant) {
        if self.capacity == 0 {
            return;
        }
        if !self.entries.contains_key(&key) && self.entries.len() >= self.capacity {
            let ttl = self.ttl;
            self.entries
                .retain(|_, (at, _)| now.saturating_duration_since(*at) < ttl);
            while self.entries.len() >= self.capacity {
                let Some(oldest) = self.entries.iter().min_by_key(|(_, (at, _))| *at) else {
                    break;
                };
                let oldest = *oldest.0;
                self.entries.remove(&oldest);
            }
        }
        self.entries.insert(key, (now, decision));
    }

    /// How many decisions are kept.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no decision is kept.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// Reviews tokens with the apiserver and caches the decisions.
pub struct MetricsAuth {
    client: kube::Client,
    cache: Mutex<DecisionCache>,
}

impl std::fmt::Debug for MetricsAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MetricsAuth")
            .field("cached", &self.lock().len())
            .finish()
    }
}

impl MetricsAuth {
    /// Reviews with `client` (the operator's own service account), caching for [`CACHE_TTL`].
    pub fn new(client: kube::Client) -> Self {
        Self::with_cache(client, DecisionCache::new(CACHE_TTL, CACHE_CAPACITY))
    }

    /// Reviews with `client`, caching in `cache`.
    pub fn with_cache(client: kube::Client, cache: DecisionCache) -> Self {
        Self {
            client,
            cache: Mutex::new(cache),
        }
    }

    /// The decision about `token`: from the cache, or from a TokenReview and (for a token the
    /// apiserver accepts) a SubjectAccessReview of `get` on `/metrics`. An error when a review
    /// could not be made (not cached).
    pub async fn decide(&self, token: &str) -> Result<Decision, kube::Error> {
        let key = token_hash(token);
        if let Some(d) = self.lock().get(&key, Instant::now()) {
            return Ok(d);
        }
        let decision = self.review(token).await?;
        self.lock().put(key, decision.clone(), Instant::now());
        Ok(decision)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, DecisionCache> {
        self.cache.lock().unwrap_or_else(|e| e.into_inner())
    }

    async fn review(&self, token: &str) -> Result<Decision, kube::Error> {
        let review = TokenReview {
            spec: TokenReviewSpec {
                token: Some(token.to_string()),
                ..Default::default()
            },
            ..Default::default()
        };
        let reviewed = Api::<TokenReview>::all(self.client.clone())
            .create(&PostParams::default(), &review)
            .await?;
        let status = reviewed.status.unwrap_or_default();
        let user = match (status.authenticated, status.user) {
            (Some(true), Some(user)) => user,
            _ => {
                return Ok(Decision::Unauthenticated {
                    error: status
                        .error
                        .unwrap_or_else(|| "the token was not accepted".into()),
                })
            }
        };
        let name = user.username.clone().unwrap_or_default();
        let access = SubjectAccessReview {
            spec: SubjectAccessReviewSpec {
                user: user.username,
                groups: user.groups,
                uid: user.uid,
                extra: user.extra,
                non_resource_attributes: Some(NonResourceAttributes {
                    path: Some(METRICS_PATH.into()),
                    verb: Some("get".into()),
                }),
                ..Default::default()
            },
            ..Default::default()
        };
        let answered = Api::<SubjectAccessReview>::all(self.client.clone())
            .create(&PostParams::default(), &access)
            .await?;
        let status = answered.status.unwrap_or_default();
        Ok(if status.allowed && status.denied != Some(true) {
            Decision::Allowed { user: name }
        } else {
            Decision::Forbidden {
                user: name,
                reason: status.reason.unwrap_or_default(),
            }
        })
    }
}

/// A plain-text answer with `code`; a 401 names the scheme (`WWW-Authenticate: Bearer`).
fn refuse(code: StatusCode, message: String) -> Response {
    let mut res = (code, message + "\n").into_response();
    if code == StatusCode::UNAUTHORIZED {
        res.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            header::HeaderValue::from_static("Bearer"),
        );
    }
    res
}

/// The axum middleware in front of `/metrics`: passes the request on only for a token whose
/// user may get `/metrics`.
pub async fn require(State(auth): State<Arc<MetricsAuth>>, req: Request, next: Next) -> Response {
    let token =
        match bearer_token(req.headers()) {
            Ok(t) => t.to_string(),
            Err(TokenError::Missing) => return refuse(
                StatusCode::UNAUTHORIZED,
                "/metrics needs a bearer token (Authorization: Bearer <token>) of a user allowed \
                 to get the non-resource URL /metrics, e.g. a service account bound to the \
                 ClusterRole benchrun-metrics-reader"
                    .into(),
            ),
            Err(TokenError::Malformed) => {
                return refuse(
                    StatusCode::UNAUTHORIZED,
                    "the Authorization header must be one `Bearer <token>`".into(),
                )
            }
        };
    match auth.decide(&token).await {
        Ok(Decision::Allowed { .. }) => next.run(req).await,
        Ok(Decision::Forbidden { user, reason }) => {
            tracing::debug!(%user, %reason, "/metrics refused");
            refuse(
                StatusCode::FORBIDDEN,
                format!(
                    "user {user:?} may not get /metrics: bind it to the ClusterRole \
                     benchrun-metrics-reader"
                ),
            )
        }
        Ok(Decision::Unauthenticated { error }) => {
            tracing::debug!(%error, "/metrics: token not accepted");
            refuse(
                StatusCode::UNAUTHORIZED,
                "the apiserver did not accept the bearer token (TokenReview)".into(),
            )
        }
        Err(e) => {
            let hint = match &e {
                kube::Error::Api(s) if s.code == 403 => {
                    ": grant the operator's service account the ClusterRole \
                     benchrun-operator-metrics-auth (deploy/base/metrics-auth.yaml) or \
                     system:auth-delegator, or run it with --metrics-auth=false"
                }
                _ => "",
            };
            tracing::warn!(error = %e, "/metrics: cannot review the token{hint}");
            refuse(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("cannot review the bearer token: {e}{hint}"),
            )
        }
    }
}

#[cfg(test)]
#[path = "metrics_auth_tests.rs"]
mod tests;
