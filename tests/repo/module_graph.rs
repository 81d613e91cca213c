//! No import cycles between the modules of any crate of the workspace.
//!
//! Read from the sources: a module is a file or folder directly under a crate's `src/`
//! (`plan/` with everything in it is one module); it depends on every module it names as
//! `crate::<module>` outside comments and outside its tests (files named `*tests.rs` or
//! `fuzz_*.rs`, and everything after a file's first `#[cfg(test)]`, which by the project's
//! style closes a file). A cycle fails the test with its path, e.g. `observe → controller →
//! observe`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The module graph of the crate whose sources are in `src`.
fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in rust_files(src) {
        let rel = file.strip_prefix(src).unwrap();
        let top = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let top = top.trim_end_matches(".rs").to_string();
        let name = file.file_name().unwrap().to_string_lossy().to_string();
        if ["lib", "main", "bin"].contains(&top.as_str())
            || name.ends_with("tests.rs")
            || name.starts_with("fuzz_")
        {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        let deps = g.entry(top.clone()).or_default();
        for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
            for dep in named_modules(line) {
                if dep != top {
                    deps.insert(dep);
                }
            }
        }
    }
    g
}

/// The modules a line of code names: `crate::a::…`, and `a`, `b` of `use crate::{a, b::c}`.
fn named_modules(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, _) in line.match_indices("crate::") {
        let rest = &line[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            out.extend(
                top_level_items(group)
                    .iter()
                    .filter_map(|item| ident(item.trim())),
            );
        } else {
            out.extend(ident(rest));
        }
    }
    out
}

/// The items of a `{…}` group up to its closing brace, split at its own commas only.
fn top_level_items(group: &str) -> Vec<&str> {
    let (mut depth, mut start, mut items) = (0, 0, Vec::new());
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                items.push(&group[start..i]);
                return items;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&group[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&group[start..]);
    items
}

fn ident(s: &str) -> Option<String> {
    let id: String = s
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    (!id.is_empty() && id != "self").then_some(id)
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// A cycle of `g`, as the path around it, if there is one.
fn cycle(g: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        g: &BTreeMap<String, BTreeSet<String>>,
        node: &str,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|n| n == node) {
            let mut c = path[i..].to_vec();
            c.push(node.to_string());
            return Some(c);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in g.get(node).into_iter().flatten() {
            if let Some(c) = visit(g, next, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    g.keys()
        .find_map(|n| visit(g, n, &mut Vec::new(), &mut done))
}

#[test]
fn no_crate_of_the_workspace_has_an_import_cycle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for src in [
        "src",
        "crates/api/src",
        "crates/cli/src",
        "crates/wire/src",
        "crates/load/src",
        "crates/demo/src",
    ] {
        let g = graph(&root.join(src));
        assert!(g.len() > 3, "{src}: only {} modules found", g.len());
        if let Some(c) = cycle(&g) {
            panic!("{src}: import cycle {}", c.join(" → "));
        }
    }
}

#[test]
fn the_cycle_check_finds_a_cycle_and_reads_use_groups() {
    let g: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec![]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.into_iter().map(String::from).collect()))
    .collect();
    assert_eq!(cycle(&g).unwrap(), vec!["a", "b", "c", "a"]);
    assert_eq!(
        named_modules("use crate::{names::{self, label}, observed::Slot, self};"),
        vec!["names", "observed"]
    );
    assert_eq!(
        named_modules("let x = crate::plan::focus(v);"),
        vec!["plan"]
    );
}
