//! benchrun-api
