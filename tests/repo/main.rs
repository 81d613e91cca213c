//! Checks of the repository that need no cluster, in one test binary: the deploy manifests
//! against the generated CRDs and the RBAC the operator needs, and the operator's module graph.

mod deploy;
mod module_graph;
