//! An in-memory apiserver for the controller's tests: a [`kube::Client`] whose requests are
//! answered from a map of JSON objects instead of a cluster.
//!
//! It serves what the operator and its kube-runtime wiring send: GET of an object, a pod's
//! `log` and a LIST (filtered by `labelSelector`, over one namespace or all); server-side
//! apply, merge patches and status patches; POST; DELETE; and watches. A uid in an apply's
//! `metadata` or in a DELETE's `preconditions` is honoured as the apiserver does: a 409
//! Conflict unless the stored object has that uid. A watch stays open
//! without events until [`FakeApi::expire_watches`] ends it the way an apiserver does when its
//! resourceVersion is too old (an `ERROR` event with code 410). Every request is recorded
//! ([`FakeApi::requests`]), and [`FakeApi::fail`] makes chosen requests fail.
//!
//! The test plays the rest of the cluster with [`FakeApi::put`] and [`FakeApi::update`]
//! (a Deployment becoming available, a Job completing, a pod's log), and answers the review
//! APIs (TokenReview, SubjectAccessReview) with [`FakeApi::answer_creates`]. Not an apiserver: no
//! validation, no defaulting, no garbage collection; a server-side apply merges the applied
//! object into the stored one (RFC 7386), which is what a single field manager sees, except
//! that a Job's pod template is immutable, as the apiserver has it: a write that changes the
//! stored one is refused with 422 Invalid.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, MutexGuard};

use http::{Method, Request, Response, StatusCode};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::client::Body;
use kube::Resource;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};
use tokio::sync::Notify;

/// A request the fake received.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seen {
    /// The HTTP method.
    pub method: Method,
    /// The path, e.g. `/apis/apps/v1/namespaces/bench/deployments/x`.
    pub path: String,
    /// The query, percent-decoded (empty without one).
    pub query: String,
}

impl Seen {
    /// A server-side apply to an object of `resource` (plural), status patches excluded.
    pub fn is_apply_of(&self, resource: &str) -> bool {
        self.method == Method::PATCH
            && self.query.contains("fieldManager=")
            && parse_path(&self.path)
                .is_some_and(|t| t.resource == resource && t.name.is_some() && t.sub.is_none())
    }

    /// A watch of `resource` (plural).
    pub fn is_watch_of(&self, resource: &str) -> bool {
        self.is_read_of(resource) && self.query.contains("watch=true")
    }

    /// A LIST of `resource` (plural), watches excluded.
    pub fn is_list_of(&self, resource: &str) -> bool {
        self.is_read_of(resource) && !self.query.contains("watch=true")
    }

    fn is_read_of(&self, resource: &str) -> bool {
        self.method == Method::GET
            && parse_path(&self.path).is_some_and(|t| t.resource == resource && t.name.is_none())
    }
}

/// How a request that [`FakeApi::fail`] picked fails.
#[derive(Clone, Debug)]
pub enum Fault {
    /// An error `Status` with this HTTP code, reason and message.
    Status(u16, &'static str, String),
    /// No answer: the connection broke (the client sees a transport error).
    Disconnect,
}

/// Requests that fail: a method, a piece of the path, the fault and how many times more.
#[derive(Debug)]
struct Rule {
    method: Method,
    path_contains: String,
    fault: Fault,
    times: usize,
}

/// Where an object is stored: the API path of its group and version (`api/v1`,
/// `apis/apps/v1`), its namespace, its resource (plural) and its name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Key {
    base: String,
    namespace: Option<String>,
    resource: String,
    name: String,
}

/// A request path, parsed: a collection (no name) or one object, and its subresource.
#[derive(Clone, Debug, PartialEq)]
struct Target {
    base: String,
    namespace: Option<String>,
    resource: String,
    name: Option<String>,
    sub: Option<String>,
}

impl Target {
    fn key(&self, name: &str) -> Key {
        Key {
            base: self.base.clone(),
            namespace: self.namespace.clone(),
            resource: self.resource.clone(),
            name: name.to_string(),
        }
    }

    /// Whether `key` is in this collection (a collection without namespace spans them all).
    fn holds(&self, key: &Key) -> bool {
        key.base == self.base
            && key.resource == self.resource
            && (self.namespace.is_none() || self.namespace == key.namespace)
    }
}

/// `/api/v1/namespaces/ns/pods/name/log` and the like, parsed; `None` for other paths.
fn parse_path(path: &str) -> Option<Target> {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let base_len = match segs.first() {
        Some(&"api") => 2,
        Some(&"apis") => 3,
        _ => return None,
    };
    if segs.len() <= base_len {
        return None;
    }
    let mut rest = &segs[base_len..];
    let mut namespace = None;
    if rest.len() >= 3 && rest[0] == "namespaces" {
        namespace = Some(rest[1].to_string());
        rest = &rest[2..];
    }
    Some(Target {
        base: segs[..base_len].join("/"),
        namespace,
        resource: rest[0].to_string(),
        name: rest.get(1).map(|s| s.to_string()),
        sub: rest.get(2).map(|s| s.to_string()),
    })
}

/// `s` with `%XX` escapes and `+` decoded.
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b'+', _) => {
                out.push(b' ');
                i += 1;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The value of parameter `name` in a decoded query.
fn param<'a>(query: &'a str, name: &str) -> Option<&'a str> {
    query
        .split('&')
        .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
}

/// Whether `labels` match an equality-based label selector (`a=b,c!=d,e,!f`).
fn selects(selector: &str, labels: &Value) -> bool {
    let label = |k: &str| labels.get(k.trim()).and_then(Value::as_str);
    selector
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .all(|term| {
            if let Some((k, v)) = term.split_once("!=") {
                label(k) != Some(v.trim())
            } else if let Some((k, v)) = term.split_once('=') {
                label(k.trim_end_matches('=')) == Some(v.trim_start_matches('=').trim())
            } else if let Some(k) = term.strip_prefix('!') {
                label(k).is_none()
            } else {
                label(term).is_some()
            }
        })
}

/// Merges `patch` into `target` as a JSON merge patch does (RFC 7386): objects field by field,
/// `null` removes, anything else replaces.
fn merge(target: &mut Value, patch: &Value) {
    let Value::Object(fields) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = json!({});
    }
    let Value::Object(into) = target else {
        return;
    };
    for (k, v) in fields {
        if v.is_null() {
            into.remove(k);
        } else {
            merge(into.entry(k.clone()).or_insert(Value::Null), v);
        }
    }
}

/// An error `Status` as the apiserver sends it.
fn status(code: u16, reason: &str, message: &str) -> Response<Body> {
    let body = json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message, "reason": reason, "code": code,
    });
    answer(code, &body)
}

fn not_found(t: &Target, name: &str) -> Response<Body> {
    status(
        404,
        "NotFound",
        &format!("{} {name:?} not found", t.resource),
    )
}

fn answer(code: u16, body: &Value) -> Response<Body> {
    let mut res = Response::new(Body::from(serde_json::to_vec(body).unwrap_or_default()));
    *res.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    res
}

/// What the fake holds.
#[derive(Debug, Default)]
struct State {
    objects: BTreeMap<Key, Value>,
    /// Pod logs by (namespace, pod).
    logs: BTreeMap<(String, String), String>,
    requests: Vec<Seen>,
    rules: Vec<Rule>,
    /// Resources whose open and next watches are ended with 410 Gone.
    expired: BTreeSet<String>,
    /// The last resourceVersion given out.
    version: u64,
}

impl State {
    fn next_version(&mut self) -> String {
        self.version += 1;
        self.version.to_string()
    }

    /// The fault for this request, if a rule picks it (each use counts against the rule).
    fn fault(&mut self, method: &Method, path: &str) -> Option<Fault> {
        let rule = self
            .rules
            .iter_mut()
            .find(|r| r.times > 0 && r.method == *method && path.contains(&r.path_contains))?;
        rule.times -= 1;
        Some(rule.fault.clone())
    }

    /// Stores `obj` at `key` with the fields the apiserver sets: uid, creation time and
    /// generation when new (kept when given), a new resourceVersion, and a generation one
    /// higher when an existing object's spec changed.
    fn store(&mut self, key: Key, mut obj: Value) -> Value {
        let old = self.objects.get(&key).cloned();
        let version = self.next_version();
        let meta = &mut obj["metadata"];
        meta["name"] = json!(key.name);
        if let Some(ns) = &key.namespace {
            meta["namespace"] = json!(ns);
        }
        meta["resourceVersion"] = json!(version);
        if meta["uid"].is_null() {
            meta["uid"] = json!(format!("uid-{version}"));
        }
        if meta["creationTimestamp"].is_null() {
            meta["creationTimestamp"] =
                serde_json::to_value(Time(jiff::Timestamp::now())).unwrap_or_default();
        }
        let generation = match &old {
            Some(o) => {
                let g = o["metadata"]["generation"].as_i64().unwrap_or(1);
                g + i64::from(o.get("spec") != obj.get("spec"))
            }
            None => obj["metadata"]["generation"].as_i64().unwrap_or(1),
        };
        obj["metadata"]["generation"] = json!(generation);
        self.objects.insert(key, obj.clone());
        obj
    }

    fn list(&self, t: &Target, query: &str) -> Value {
        let selector = param(query, "labelSelector").unwrap_or("");
        let items: Vec<Value> = self
            .objects
            .iter()
            .filter(|(k, v)| t.holds(k) && selects(selector, &v["metadata"]["labels"]))
            .map(|(_, v)| v.clone())
            .collect();
        json!({
            "apiVersion": "v1", "kind": "List",
            "metadata": {"resourceVersion": self.version.max(1).to_string()},
            "items": items,
        })
    }
}

/// Answers a POST to a collection from its body, storing nothing (the review APIs).
#[derive(Clone)]
struct Responder(Arc<dyn Fn(&Value) -> Value + Send + Sync>);

impl std::fmt::Debug for Responder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Responder")
    }
}

/// The in-memory apiserver. Clones share one state.
#[derive(Clone, Debug, Default)]
pub struct FakeApi {
    state: Arc<Mutex<State>>,
    /// POSTs to these resources (plural) are answered by their responder.
    responders: Arc<Mutex<BTreeMap<String, Responder>>>,
    /// Wakes the open watches when [`FakeApi::expire_watches`] is called.
    expiry: Arc<Notify>,
}

impl FakeApi {
    /// An empty apiserver.
    pub fn new() -> Self {
        Self::default()
    }

    /// A client whose requests this fake answers (default namespace `default`).
    pub fn client(&self) -> kube::Client {
        let fake = self.clone();
        let service = tower::service_fn(move |req: Request<Body>| {
            let fake = fake.clone();
            async move { fake.serve(req).await }
        });
        kube::Client::new(service, "default")
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Every request so far, in order.
    pub fn requests(&self) -> Vec<Seen> {
        self.lock().requests.clone()
    }

    /// The next `times` requests with `method` whose path contains `path_contains` fail with
    /// `fault` (rules are tried in the order they were added).
    pub fn fail(&self, method: Method, path_contains: &str, fault: Fault, times: usize) {
        self.lock().rules.push(Rule {
            method,
            path_contains: path_contains.into(),
            fault,
            times,
        });
    }

    /// Ends the open watches of `resource` (plural), and the next one, with an `ERROR` event
    /// of code 410 (Gone): their resourceVersion is too old and the watcher must list again.
    pub fn expire_watches(&self, resource: &str) {
        self.lock().expired.insert(resource.into());
        self.expiry.notify_waiters();
    }

    /// Stores `obj` (in its namespace, if any) as the cluster would have it.
    pub fn put<K>(&self, obj: &K)
    where
        K: Resource<DynamicType = ()> + Serialize,
    {
        let key = key_of::<K>(
            obj.meta().namespace.as_deref(),
            &obj.meta().name.clone().unwrap_or_default(),
        );
        let value = serde_json::to_value(obj).expect("the object serializes");
        self.lock().store(key, value);
    }

    /// The stored object `name` (in `namespace` for a namespaced kind).
    pub fn get<K>(&self, namespace: Option<&str>, name: &str) -> Option<K>
    where
        K: Resource<DynamicType = ()> + DeserializeOwned,
    {
        let value = self
            .lock()
            .objects
            .get(&key_of::<K>(namespace, name))?
            .clone();
        Some(serde_json::from_value(value).expect("the stored object deserializes"))
    }

    /// The stored objects of kind `K` (in `namespace`, or in all).
    pub fn list<K>(&self, namespace: Option<&str>) -> Vec<K>
    where
        K: Resource<DynamicType = ()> + DeserializeOwned,
    {
        let t = parse_path(&K::url_path(&(), namespace)).expect("a kube path");
        let state = self.lock();
        state
            .objects
            .iter()
            .filter(|(k, _)| t.holds(k))
            .map(|(_, v)| serde_json::from_value(v.clone()).expect("the object deserializes"))
            .collect()
    }

    /// Changes the stored object `name` with `change`, as a controller of the cluster would.
    pub fn update<K>(&self, namespace: Option<&str>, name: &str, change: impl FnOnce(&mut K))
    where
        K: Resource<DynamicType = ()> + Serialize + DeserializeOwned,
    {
        let mut obj: K = self
            .get(namespace, name)
            .unwrap_or_else(|| panic!("{} {name} is stored", K::kind(&())));
        change(&mut obj);
        self.put(&obj);
    }

    /// Answers every POST to `resource` (plural, e.g. `tokenreviews`) with `respond(body)`
    /// and code 201, storing nothing: what the apiserver does with a review.
    pub fn answer_creates(
        &self,
        resource: &str,
        respond: impl Fn(&Value) -> Value + Send + Sync + 'static,
    ) {
        self.responders
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(resource.into(), Responder(Arc::new(respond)));
    }

    /// Serves `log` as the log of pod `pod` in `namespace` (any container).
    pub fn set_log(&self, namespace: &str, pod: &str, log: &str) {
        self.lock()
            .logs
            .insert((namespace.into(), pod.into()), log.into());
    }

    async fn serve(&self, req: Request<Body>) -> Result<Response<Body>, std::io::Error> {
        let method = req.method().clone();
        let path = req.uri().path().to_string();
        let query = percent_decode(req.uri().query().unwrap_or(""));
        let content_type = req
            .headers()
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        let body = req.into_body().collect_bytes().await.unwrap_or_default();
        let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let fault = {
            let mut state = self.lock();
            state.requests.push(Seen {
                method: method.clone(),
                path: path.clone(),
                query: query.clone(),
            });
            state.fault(&method, &path)
        };
        match fault {
            // The client's service fails: kube reports it as a transport error.
            Some(Fault::Disconnect) => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::ConnectionReset,
                    "connection reset by the fake apiserver",
                ))
            }
            Some(Fault::Status(code, reason, message)) => {
                return Ok(status(code, reason, &message))
            }
            None => {}
        }
        let Some(t) = parse_path(&path) else {
            return Ok(status(
                404,
                "NotFound",
                &format!("the server could not find {path}"),
            ));
        };
        if method == Method::GET && t.name.is_none() && param(&query, "watch") == Some("true") {
            return Ok(self.watch(&t.resource).await);
        }
        if method == Method::POST && t.name.is_none() {
            let responder = self
                .responders
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get(&t.resource)
                .cloned();
            if let Some(Responder(respond)) = responder {
                return Ok(answer(201, &respond(&body)));
            }
        }
        Ok(self.answer(&method, &t, &query, &content_type, body))
    }

    /// An open watch: no event until the resource's watches are expired, then the 410.
    async fn watch(&self, resource: &str) -> Response<Body> {
        loop {
            let woken = self.expiry.notified();
            tokio::pin!(woken);
            woken.as_mut().enable();
            if self.lock().expired.remove(resource) {
                let gone = json!({"type": "ERROR", "object": {
                    "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                    "message": "too old resource version", "reason": "Expired", "code": 410,
                }});
                let mut line = serde_json::to_vec(&gone).unwrap_or_default();
                line.push(b'\n');
                return Response::new(Body::from(line));
            }
            woken.await;
        }
    }

    fn answer(
        &self,
        method: &Method,
        t: &Target,
        query: &str,
        content_type: &str,
        body: Value,
    ) -> Response<Body> {
        let mut state = self.lock();
        let name = t.name.clone().unwrap_or_default();
        let key = t.key(&name);
        match (method.as_str(), &t.name, t.sub.as_deref()) {
            ("GET", None, _) => answer(200, &state.list(t, query)),
            ("GET", Some(_), Some("log")) => {
                let ns = t.namespace.clone().unwrap_or_default();
                match state.logs.get(&(ns, name.clone())) {
                    Some(log) => Response::new(Body::from(log.clone().into_bytes())),
                    None => not_found(t, &name),
                }
            }
            ("GET", Some(_), _) => match state.objects.get(&key) {
                Some(obj) => answer(200, obj),
                None => not_found(t, &name),
            },
            ("POST", None, _) => {
                let name = body["metadata"]["name"].as_str().unwrap_or("").to_string();
                let key = t.key(&name);
                if state.objects.contains_key(&key) {
                    let message = format!("{} {name:?} already exists", t.resource);
                    return status(409, "AlreadyExists", &message);
                }
                answer(201, &state.store(key, body))
            }
            ("PATCH", Some(_), sub) => {
                let apply = content_type.starts_with("application/apply-patch");
                // A uid in the patch is a precondition: the object of that uid, and no other.
                let want = body["metadata"]["uid"].as_str();
                let have = state.objects.get(&key).map(|o| &o["metadata"]["uid"]);
                if let Some(uid) = want.filter(|u| have.and_then(|h| h.as_str()) != Some(*u)) {
                    let message = format!("Precondition failed: UID in precondition: {uid}");
                    return status(409, "Conflict", &message);
                }
                let obj = match (state.objects.get(&key).cloned(), sub, apply) {
                    // The status subresource takes only the status; an apply of it by the
                    // one manager of the status replaces it whole.
                    (Some(mut obj), Some("status"), true) => {
                        obj["status"] = body["status"].clone();
                        obj
                    }
                    (Some(mut obj), Some("status"), false) => {
                        merge(&mut obj["status"], &body["status"]);
                        obj
                    }
                    (None, Some(_), _) | (None, None, false) => return not_found(t, &name),
                    // The main resource ignores a status in the patch.
                    (old, _, _) => {
                        let existed = old.is_some();
                        let mut obj = old.unwrap_or_else(|| json!({}));
                        let kept = obj.get("status").cloned();
                        let template = obj["spec"]["template"].clone();
                        merge(&mut obj, &body);
                        if existed
                            && immutable_template(&t.resource)
                            && obj["spec"]["template"] != template
                        {
                            let message = format!(
                                "{} {name:?} is invalid: spec.template: Invalid value: field is immutable",
                                t.resource
                            );
                            return status(422, "Invalid", &message);
                        }
                        match kept {
                            Some(s) => obj["status"] = s,
                            None => {
                                if let Some(o) = obj.as_object_mut() {
                                    o.remove("status");
                                }
                            }
                        }
                        obj
                    }
                };
                answer(200, &state.store(key, obj))
            }
            ("DELETE", Some(_), None) => match state.objects.get(&key) {
                Some(obj)
                    if body["preconditions"]["uid"]
                        .as_str()
                        .is_some_and(|u| obj["metadata"]["uid"].as_str() != Some(u)) =>
                {
                    status(409, "Conflict", "Precondition failed: UID in precondition")
                }
                _ => match state.objects.remove(&key) {
                    Some(obj) => answer(200, &obj),
                    None => not_found(t, &name),
                },
            },
            _ => status(
                405,
                "MethodNotAllowed",
                &format!("{method} is not served here"),
            ),
        }
    }
}

/// Whether an object of `resource` (plural) has an immutable `spec.template`, as a Job's is:
/// a write that changes it is refused (422 Invalid).
fn immutable_template(resource: &str) -> bool {
    resource == "jobs"
}

/// The storage key of object `name` of kind `K`.
fn key_of<K: Resource<DynamicType = ()>>(namespace: Option<&str>, name: &str) -> Key {
    parse_path(&K::url_path(&(), namespace))
        .expect("a kube path")
        .key(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_name_the_collection_the_object_and_its_subresource() {
        let t = parse_path("/api/v1/namespaces/bench/pods/p-1/log").unwrap();
        assert_eq!(
            (t.base.as_str(), t.namespace.as_deref(), t.resource.as_str()),
            ("api/v1", Some("bench"), "pods")
        );
        assert_eq!(
            (t.name.as_deref(), t.sub.as_deref()),
            (Some("p-1"), Some("log"))
        );
        let all = parse_path("/apis/benchrun.dev/v1alpha1/benchmarkruns").unwrap();
        assert_eq!((all.namespace, all.name), (None, None));
        let node = parse_path("/api/v1/nodes/node-a").unwrap();
        assert_eq!(
            (node.resource.as_str(), node.name.as_deref()),
            ("nodes", Some("node-a"))
        );
    }

    #[test]
    fn label_selectors_match_by_equality_and_existence() {
        let labels = json!({"app": "web", "role": "target"});
        assert!(selects("app=web,role==target", &labels));
        assert!(selects("app,!tier,role!=load", &labels));
        assert!(!selects("app=web,role=load", &labels));
        assert!(!selects("tier", &labels));
        assert!(selects("", &Value::Null));
        assert_eq!(percent_decode("a%3Db%2Cc+d"), "a=b,c d");
    }

    #[test]
    fn a_merge_replaces_values_and_arrays_and_removes_nulls() {
        let mut v = json!({"a": {"b": 1, "c": [1, 2]}, "d": 1});
        merge(&mut v, &json!({"a": {"c": [3], "e": 2}, "d": null}));
        assert_eq!(v, json!({"a": {"b": 1, "c": [3], "e": 2}}));
    }
}
