//! Checks of the repository that need no cluster, in one test binary: the deploy manifests
//! against the generated CRDs and the RBAC the operator needs, the operator's module graph, and
//! the guard that keeps the test suites off a cluster that is not the local one.

mod cluster_guard;
mod deploy;
mod module_graph;
