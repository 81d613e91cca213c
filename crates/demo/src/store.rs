//! The in-memory document store behind `/docs/{id}` (pure: no I/O).
//!
//! Documents are opaque bytes under an id. Reads take a shared lock and hand out a
//! reference-counted [`Bytes`], so serving a document copies nothing.

use std::collections::HashMap;
use std::sync::RwLock;

use bytes::Bytes;

/// Longest document id, in bytes.
pub const MAX_ID_LEN: usize = 128;
/// Largest document accepted by one `PUT`.
pub const MAX_DOC_BYTES: usize = 64 << 10;
/// Most bytes all documents may hold together.
pub const MAX_STORE_BYTES: usize = 256 << 20;
/// Most documents the store holds.
pub const MAX_DOCS: usize = 1_000_000;

/// A document id that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    /// The id is empty or longer than [`MAX_ID_LEN`].
    #[error("document id must be 1 to {MAX_ID_LEN} bytes long, got {0} bytes")]
    Length(usize),
    /// The id holds a byte outside `[A-Za-z0-9._-]`.
    #[error("document id {0:?} may hold only A-Z, a-z, 0-9, '.', '_' and '-'")]
    Character(String),
    /// The id is `.` or `..`, which clients remove from URL paths.
    #[error("document id {0:?} is a path dot-segment")]
    DotSegment(String),
}

/// Checks that `id` is 1..=[`MAX_ID_LEN`] bytes of `[A-Za-z0-9._-]` and not `.` or `..`,
/// so it is one URL path segment that needs no escaping.
pub fn check_id(id: &str) -> Result<(), IdError> {
    if id.is_empty() || id.len() > MAX_ID_LEN {
        return Err(IdError::Length(id.len()));
    }
    let allowed = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-');
    if !id.bytes().all(allowed) {
        return Err(IdError::Character(id.to_owned()));
    }
    if id == "." || id == ".." {
        return Err(IdError::DotSegment(id.to_owned()));
    }
    Ok(())
}

/// Why a document was not stored.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// The document is larger than the per-document limit.
    #[error("the document is {size} bytes, more than the {max} bytes a document may hold")]
    TooLarge {
        /// Size of the rejected document.
        size: usize,
        /// The per-document limit.
        max: usize,
    },
    /// Storing the document would exceed the total size or the number of documents.
    #[error("the store is full: {0}")]
    Full(String),
}

/// What a successful [`Store::put`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Put {
    /// The id was new.
    Created,
    /// The id held a document, which was replaced.
    Replaced,
}

/// The bounds of a [`Store`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest document, in bytes.
    pub doc_bytes: usize,
    /// Most bytes of all documents together.
    pub total_bytes: usize,
    /// Most documents.
    pub docs: usize,
}

impl Default for Limits {
    /// [`MAX_DOC_BYTES`], [`MAX_STORE_BYTES`] and [`MAX_DOCS`].
    fn default() -> Self {
        Limits {
            doc_bytes: MAX_DOC_BYTES,
            total_bytes: MAX_STORE_BYTES,
            docs: MAX_DOCS,
        }
    }
}

/// Documents by id, bounded by [`Limits`]; shared between requests behind an `Arc`.
#[derive(Debug, Default)]
pub struct Store {
    limits: Limits,
    inner: RwLock<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    docs: HashMap<Box<str>, Bytes>,
    /// Sum of the lengths of `docs`' values.
    bytes: usize,
}

impl Store {
    /// An empty store with the default [`Limits`].
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty store with the given limits.
    pub fn with_limits(limits: Limits) -> Self {
        Store {
            limits,
            inner: RwLock::default(),
        }
    }

    /// The store's limits.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// The document stored under `id`, if any (takes the read lock only).
    pub fn get(&self, id: &str) -> Option<Bytes> {
        let inner = self.inner.read().unwrap_or_else(|e| e.into_inner());
        inner.docs.get(id).cloned()
    }

    /// Stores `doc` under `id`, replacing any earlier document, unless a limit forbids it.
    /// The caller checks `id` with [`check_id`].
    pub fn put(&self, id: &str, doc: Bytes) -> Result<Put, StoreError> {
        if doc.len() > self.limits.doc_bytes {
            return Err(StoreError::TooLarge {
                size: doc.len(),
                max: self.limits.doc_bytes,
            });
        }
        let mut inner = self.inner.write().unwrap_or_else(|e| e.into_inner());
        let old = inner.docs.get(id).map(Bytes::len);
        if old.is_none() && inner.docs.len() >= self.limits.docs {
            return Err(StoreError::Full(format!(
                "it holds {} documents, the most it may",
                inner.docs.len()
            )));
        }
        let bytes = inner.bytes - old.unwrap_or(0) + doc.len();
        if bytes > self.limits.total_bytes {
            return Err(StoreError::Full(format!(
                "storing {} bytes would bring the documents to {bytes} bytes, more than the {} \
                 they may hold together",
                doc.len(),
                self.limits.total_bytes
            )));
        }
        inner.bytes = bytes;
        inner.docs.insert(id.into(), doc);
        Ok(if old.is_some() {
            Put::Replaced
        } else {
            Put::Created
        })
    }

    /// Number of documents and their total size in bytes.
    pub fn usage(&self) -> (usize, usize) {
        let inner = self.inner.read().unwrap_or_else(|e| e.into_inner());
        (inner.docs.len(), inner.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Store {
        Store::with_limits(Limits {
            doc_bytes: 4,
            total_bytes: 6,
            docs: 2,
        })
    }

    #[test]
    fn accepts_ids_of_the_allowed_characters_and_lengths() {
        for id in ["a", "A-z_0.9", "..a", &"x".repeat(MAX_ID_LEN)] {
            assert_eq!(check_id(id), Ok(()), "{id}");
        }
    }

    #[test]
    fn rejects_empty_long_odd_and_dot_segment_ids() {
        assert_eq!(check_id(""), Err(IdError::Length(0)));
        let long = "x".repeat(MAX_ID_LEN + 1);
        assert_eq!(check_id(&long), Err(IdError::Length(MAX_ID_LEN + 1)));
        for id in ["a/b", "a%2Fb", "a b", "é", "a?b", "a:b"] {
            assert_eq!(check_id(id), Err(IdError::Character(id.to_owned())), "{id}");
        }
        for id in [".", ".."] {
            assert_eq!(check_id(id), Err(IdError::DotSegment(id.to_owned())));
        }
    }

    #[test]
    fn stores_replaces_and_reads_documents() {
        let store = Store::new();
        assert_eq!(store.get("a"), None);
        assert_eq!(store.put("a", Bytes::from_static(b"{}")), Ok(Put::Created));
        assert_eq!(
            store.put("a", Bytes::from_static(b"[1]")),
            Ok(Put::Replaced)
        );
        assert_eq!(store.get("a"), Some(Bytes::from_static(b"[1]")));
        assert_eq!(store.usage(), (1, 3));
    }

    #[test]
    fn refuses_documents_above_the_size_limit() {
        let store = small();
        assert_eq!(
            store.put("a", Bytes::from_static(b"12345")),
            Err(StoreError::TooLarge { size: 5, max: 4 })
        );
        assert_eq!(store.usage(), (0, 0));
    }

    #[test]
    fn refuses_new_ids_beyond_the_document_count() {
        let store = small();
        store.put("a", Bytes::from_static(b"1")).unwrap();
        store.put("b", Bytes::from_static(b"2")).unwrap();
        let err = store.put("c", Bytes::from_static(b"3")).unwrap_err();
        assert!(err.to_string().starts_with("the store is full"), "{err}");
        // Replacing an existing id still works when the count is reached.
        assert_eq!(store.put("b", Bytes::from_static(b"22")), Ok(Put::Replaced));
        assert_eq!(store.usage(), (2, 3));
    }

    #[test]
    fn refuses_documents_beyond_the_total_size_counting_what_they_replace() {
        let store = small();
        store.put("a", Bytes::from_static(b"1234")).unwrap();
        assert!(matches!(
            store.put("b", Bytes::from_static(b"123")),
            Err(StoreError::Full(_))
        ));
        // 4 + 2 = 6 fits; replacing "a" by 4 bytes frees what it held.
        store.put("b", Bytes::from_static(b"12")).unwrap();
        assert_eq!(
            store.put("a", Bytes::from_static(b"abcd")),
            Ok(Put::Replaced)
        );
        assert_eq!(store.usage(), (2, 6));
        assert_eq!(store.get("a"), Some(Bytes::from_static(b"abcd")));
    }
}
