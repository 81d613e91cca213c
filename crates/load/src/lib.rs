//! benchrun-load: the load generator library.
