//! benchrun operator
