//! The detail ConfigMap of one measurement: the merged load result (histograms, timeline).

use k8s_openapi::api::core::v1::ConfigMap;
use std::collections::BTreeMap;

use super::Owner;
use crate::names::{self, role};

pub use benchrun_api::DETAIL_KEY;

/// The detail ConfigMap holding `json` (the merged load result) for one measurement.
pub fn build_detail_configmap(
    owner: &Owner,
    cell: usize,
    repeat: usize,
    json: String,
) -> ConfigMap {
    ConfigMap {
        metadata: owner.meta(
            names::detail_name(&owner.name, cell, repeat),
            names::measurement_labels(&owner.name, role::DETAIL, cell, repeat),
        ),
        data: Some(BTreeMap::from([(DETAIL_KEY.to_string(), json)])),
        ..ConfigMap::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builders::fixtures::owner;

    #[test]
    fn detail_configmap_is_named_and_labelled_per_measurement() {
        let cm = build_detail_configmap(&owner(), 2, 1, "{}".into());
        assert_eq!(cm.metadata.name.as_deref(), Some("demo-detail-c2-r1"));
        let labels = cm.metadata.labels.unwrap();
        assert_eq!(labels[names::label::ROLE], "detail");
        assert_eq!(labels[names::label::CELL], "2");
        assert_eq!(labels[names::label::REPEAT], "1");
        assert_eq!(cm.data.unwrap()[DETAIL_KEY], "{}");
        assert_eq!(cm.metadata.owner_references.unwrap()[0].uid, "uid-1");
    }
}
