//! The operator's Prometheus clients, one per URL for the operator's lifetime.
//!
//! A [`Prometheus`] holds an HTTP connection pool: building one per query cycle would open
//! new connections for every window. Runs may name different Prometheus URLs (within
//! [`crate::policy`]'s allow-list), so the clients are made lazily, one per URL, and at most
//! [`MAX_CLIENTS`] are kept (with the allow-list's `*` a run could name any number of URLs).

use std::sync::{Mutex, PoisonError};

use crate::prometheus::{PromError, Prometheus};

/// Most clients kept; past it the least recently used one is dropped.
pub const MAX_CLIENTS: usize = 16;

/// The clients made so far, least recently used first.
#[derive(Debug, Default)]
pub struct PrometheusClients {
    clients: Mutex<Vec<(String, Prometheus)>>,
}

impl PrometheusClients {
    /// No client yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The client for the Prometheus at `url`, made on first use; an unusable URL is an error
    /// (and nothing is kept for it).
    pub fn get(&self, url: &str) -> Result<Prometheus, PromError> {
        let key = url.trim().trim_end_matches('/');
        let mut clients = self.clients.lock().unwrap_or_else(PoisonError::into_inner);
        let client = match clients.iter().position(|(u, _)| u == key) {
            Some(i) => clients.remove(i).1,
            None => {
                let client = Prometheus::new(url)?;
                if clients.len() >= MAX_CLIENTS {
                    clients.remove(0);
                }
                client
            }
        };
        clients.push((key.to_string(), client.clone()));
        Ok(client)
    }

    /// How many clients are kept.
    pub fn len(&self) -> usize {
        self.clients
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// True when no client was kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(clients: &PrometheusClients) -> Vec<String> {
        let clients = clients.clients.lock().unwrap();
        clients.iter().map(|(u, _)| u.clone()).collect()
    }

    #[test]
    fn one_client_per_url_however_often_asked() {
        let clients = PrometheusClients::new();
        clients.get("http://prometheus:9090").unwrap();
        clients.get("http://other:9090").unwrap();
        clients.get(" http://prometheus:9090/").unwrap();
        assert_eq!(
            kept(&clients),
            ["http://other:9090", "http://prometheus:9090"],
            "the same URL is one client, now the most recently used"
        );
    }

    #[test]
    fn an_unusable_url_is_an_error_and_is_not_kept() {
        let clients = PrometheusClients::new();
        assert!(clients.get("ftp://x").is_err());
        assert!(clients.is_empty());
    }

    #[test]
    fn past_the_bound_the_least_recently_used_client_goes() {
        let clients = PrometheusClients::new();
        for i in 0..MAX_CLIENTS {
            clients.get(&format!("http://p{i}:9090")).unwrap();
        }
        // p0 used again: p1 is now the least recently used.
        clients.get("http://p0:9090").unwrap();
        clients.get("http://new:9090").unwrap();
        let kept = kept(&clients);
        assert_eq!(kept.len(), MAX_CLIENTS);
        assert!(!kept.contains(&"http://p1:9090".to_string()), "{kept:?}");
        assert_eq!(
            kept[kept.len() - 2..],
            ["http://p0:9090", "http://new:9090"]
        );
    }
}
