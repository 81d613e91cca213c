//! The API crate's integration tests, in one test binary (one link instead of four): the CEL
//! rules on the generated CRD, the CRD and the examples, property tests of validation, and
//! statuses stored by earlier operators.

mod cel_rules;
mod crd_and_examples;
mod fuzz_validate;
mod stored_status;
