//! CPU and memory of a container, as targets, backing services and the load generator declare
//! them. Its own module so that the spec and the backing services' types both use it.

use kube::KubeSchema;
use serde::{Deserialize, Serialize};

/// CPU and memory of a container. Limits are always set; requests default to the limits.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
#[x_kube(
    validation = Rule::new("isQuantity(self.cpu) && quantity(self.cpu).isGreaterThan(quantity('0'))").message("cpu must be a positive quantity such as \"500m\" or \"2\""),
    validation = Rule::new("isQuantity(self.memory) && quantity(self.memory).isGreaterThan(quantity('0'))").message("memory must be a positive quantity such as \"512Mi\" or \"1Gi\""),
    validation = Rule::new("!has(self.cpuRequest) || (isQuantity(self.cpuRequest) && quantity(self.cpuRequest).compareTo(quantity(self.cpu)) <= 0)").message("cpuRequest must be a quantity not above cpu (the limit): lower the request or raise the limit"),
    validation = Rule::new("!has(self.memoryRequest) || (isQuantity(self.memoryRequest) && quantity(self.memoryRequest).compareTo(quantity(self.memory)) <= 0)").message("memoryRequest must be a quantity not above memory (the limit): lower the request or raise the limit"),
)]
pub struct Resources {
    /// CPU limit, e.g. `"1"`, `"3500m"`.
    pub cpu: String,
    /// Memory limit, e.g. `"1Gi"`.
    pub memory: String,
    /// CPU request; defaults to the CPU limit (Guaranteed QoS).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_request: Option<String>,
    /// Memory request; defaults to the memory limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_request: Option<String>,
}
