//! The CPU model of the machine the load runs on, for the result's `cpu_models`: a figure
//! measured on one CPU model is not comparable with one measured on another, and Kubernetes
//! publishes no node's model.

/// The distinct `model name` values of `/proc/cpuinfo` (one on an ordinary machine); empty
/// where the file is unreadable or names none (some ARM kernels).
pub fn models() -> Vec<String> {
    std::fs::read_to_string("/proc/cpuinfo")
        .map(|s| parse(&s))
        .unwrap_or_default()
}

/// The distinct, sorted `model name` values of a `/proc/cpuinfo` text.
fn parse(cpuinfo: &str) -> Vec<String> {
    let mut out: Vec<String> = cpuinfo
        .lines()
        .filter_map(|l| {
            let (key, value) = l.split_once(':')?;
            (key.trim() == "model name").then(|| value.trim().to_string())
        })
        .filter(|v| !v.is_empty())
        .collect();
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_processor_names_the_same_model_once() {
        let text = "processor\t: 0\nmodel name\t: AMD EPYC 7B13\nflags\t: fpu\n\n\
                    processor\t: 1\nmodel name\t: AMD EPYC 7B13\n";
        assert_eq!(parse(text), ["AMD EPYC 7B13"]);
    }

    #[test]
    fn a_file_without_model_names_gives_none() {
        assert!(parse("processor : 0\nBogoMIPS : 50.00\n").is_empty());
    }

    #[test]
    fn this_machine_names_its_model() {
        // Linux on x86-64 (these machines) always lists it.
        if cfg!(all(target_os = "linux", target_arch = "x86_64")) {
            assert!(!models().is_empty());
        }
    }
}
