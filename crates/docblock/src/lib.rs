//! Figures in the docs that a test computes, kept equal to what it computes.
//!
//! A page holds a block between two markers,
//!
//! ```text
//! <!-- generated: NAME (by `cargo test …`) -->
//! …
//! <!-- end: NAME -->
//! ```
//!
//! and the test that computes its figures calls [`check`] with the page, the block's name and
//! what it rendered. Normally [`check`] fails the test when the page's block differs (so no
//! figure in it can be typed or go stale); with `BENCHRUN_BLESS=1` in the environment it
//! rewrites the block instead (`make metrics-doc` runs the tests that way, one at a time).

use std::path::{Path, PathBuf};

/// The environment variable that makes [`check`] rewrite instead of compare.
pub const BLESS: &str = "BENCHRUN_BLESS";

/// The repository's root, from a crate's `CARGO_MANIFEST_DIR` at run time (`crates/<name>` or
/// the root itself).
pub fn repo_root() -> PathBuf {
    let dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("run by cargo test"));
    if dir.join("crates").is_dir() {
        dir
    } else {
        dir.join("../..")
    }
}

/// The block `name` of `page` replaced by `body`, or why it cannot be: the markers are missing
/// or out of order. Pure.
pub fn replace(page: &str, name: &str, body: &str) -> Result<String, String> {
    let begin = format!("<!-- generated: {name} ");
    let end = format!("<!-- end: {name} -->");
    let b = page
        .find(&begin)
        .ok_or_else(|| format!("no `{begin}…-->` marker"))?;
    let open_end = b
        + page[b..]
            .find("-->")
            .ok_or_else(|| format!("the `{begin}` marker is not closed"))?
        + 3;
    let e = page[open_end..]
        .find(&end)
        .map(|i| open_end + i)
        .ok_or_else(|| format!("no `{end}` marker after `{begin}`"))?;
    // The end marker keeps its line's indentation.
    let end_line = page[..e].rfind('\n').map_or(e, |i| i + 1);
    let mut body = body.trim_end().to_string();
    body.push('\n');
    Ok(format!(
        "{}\n{body}{}",
        &page[..open_end],
        &page[end_line..]
    ))
}

/// The block `name` of `page`, between its markers. Pure.
pub fn block<'a>(page: &'a str, name: &str) -> Option<&'a str> {
    let begin = format!("<!-- generated: {name} ");
    let b = page.find(&begin)?;
    let open_end = b + page[b..].find("-->")? + 3;
    let e = open_end + page[open_end..].find(&format!("<!-- end: {name} -->"))?;
    Some(page[open_end..e].trim_start_matches('\n').trim_end())
}

/// Checks that the block `name` of the page at `path` (relative to the repository's root) is
/// `body`; with `BENCHRUN_BLESS=1`, writes `body` into it instead. Panics with what to do when
/// they differ.
pub fn check(path: &str, name: &str, body: &str) {
    let file = repo_root().join(path);
    let page = std::fs::read_to_string(&file)
        .unwrap_or_else(|e| panic!("reading {}: {e}", file.display()));
    if std::env::var_os(BLESS).is_some_and(|v| v == "1") {
        let new = replace(&page, name, body).unwrap_or_else(|e| panic!("{path}: {e}"));
        write(&file, &new);
        return;
    }
    let have = block(&page, name).unwrap_or_else(|| {
        panic!("{path} has no generated block `{name}`: add its markers and run make metrics-doc")
    });
    assert!(
        have == body.trim_start_matches('\n').trim_end(),
        "{path}'s block `{name}` is not what this test computes: run `make metrics-doc` \
         (BENCHRUN_BLESS=1) and commit the page.\n--- the page:\n{have}\n--- computed:\n{}",
        body.trim_start_matches('\n').trim_end()
    );
}

fn write(file: &Path, text: &str) {
    std::fs::write(file, text).unwrap_or_else(|e| panic!("writing {}: {e}", file.display()));
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str =
        "intro\n<!-- generated: t (by `cargo test x`) -->\nold\n<!-- end: t -->\nafter\n";

    #[test]
    fn a_block_is_replaced_between_its_markers_and_nothing_else_changes() {
        let new = replace(PAGE, "t", "| a |\n| 1 |\n").unwrap();
        assert_eq!(
            new,
            "intro\n<!-- generated: t (by `cargo test x`) -->\n| a |\n| 1 |\n<!-- end: t -->\nafter\n"
        );
        assert_eq!(block(&new, "t"), Some("| a |\n| 1 |"));
        assert_eq!(replace(&new, "t", "| a |\n| 1 |").unwrap(), new);
    }

    #[test]
    fn an_indented_block_keeps_its_end_marker_indented() {
        let page = "- item\n  <!-- generated: t (x) -->\n  | a |\n  <!-- end: t -->\n";
        assert_eq!(block(page, "t"), Some("  | a |"));
        assert_eq!(
            replace(page, "t", "  | b |\n").unwrap(),
            "- item\n  <!-- generated: t (x) -->\n  | b |\n  <!-- end: t -->\n"
        );
    }

    #[test]
    fn a_missing_marker_is_named() {
        assert!(replace("x", "t", "y").unwrap_err().contains("generated: t"));
        assert!(replace("<!-- generated: t (a) -->\n", "t", "y")
            .unwrap_err()
            .contains("end: t"));
        assert_eq!(block("x", "t"), None);
    }
}
