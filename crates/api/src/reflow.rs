//! Reflows the CRD's descriptions for `kubectl explain`, which prints each description as it
//! is: the `///` comments they come from wrap at 100 columns, so without this every field's
//! text would break mid-sentence. Line breaks stay only between paragraphs, before list items
//! and inside indented (code) blocks.
//!
//! Pure: text in, text out; [`reflow_descriptions`] applies it to every `description` of a
//! schema.

use serde_json::Value;

/// Whether `line` starts a list item: `- `, `* `, `1. ` or `1) `.
fn is_list_item(line: &str) -> bool {
    if line.starts_with("- ") || line.starts_with("* ") {
        return true;
    }
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && (line[digits..].starts_with(". ") || line[digits..].starts_with(") "))
}

/// `text` with the line breaks inside its paragraphs and list items replaced by spaces.
///
/// A blank line ends a paragraph (kept, as one empty line); a list item starts on its own
/// line, and its indented continuation lines join it; other indented lines (a code block) are
/// kept as they are.
pub fn reflow(text: &str) -> String {
    let mut out = String::new();
    // What the last line written was: nothing yet, a blank, prose, a list item or code.
    #[derive(PartialEq)]
    enum Last {
        Start,
        Blank,
        Prose,
        Item,
        Code,
    }
    let mut last = Last::Start;
    for raw in text.lines() {
        let line = raw.trim_end();
        let indented = line.starts_with([' ', '\t']);
        if line.is_empty() {
            // Written before the next line, so trailing blank lines go.
            if last != Last::Start {
                last = Last::Blank;
            }
            continue;
        }
        let joins = match last {
            Last::Prose => !indented && !is_list_item(line),
            Last::Item => !is_list_item(line.trim_start()) && (indented || !is_list_item(line)),
            _ => false,
        };
        if joins {
            out.push(' ');
            out.push_str(line.trim_start());
            continue;
        }
        match last {
            Last::Blank => out.push_str("\n\n"),
            Last::Prose | Last::Item | Last::Code => out.push('\n'),
            Last::Start => {}
        }
        if indented {
            out.push_str(line);
            last = Last::Code;
        } else {
            out.push_str(line);
            last = if is_list_item(line) {
                Last::Item
            } else {
                Last::Prose
            };
        }
    }
    out
}

/// Reflows every `description` string in `schema`, at any depth.
pub fn reflow_descriptions(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                match v {
                    Value::String(s) if k == "description" => *s = reflow(s),
                    _ => reflow_descriptions(v),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(reflow_descriptions),
        _ => {}
    }
}

/// Whether every line break of `text` is one that [`reflow`] keeps: one of the two around a
/// blank line, or one before a list item or an indented line. The test over the generated CRD
/// uses it.
pub fn breaks_only_between_blocks(text: &str) -> bool {
    text.match_indices('\n').all(|(i, _)| {
        let rest = &text[i + 1..];
        rest.starts_with('\n')
            || text[..i].ends_with('\n')
            || rest.starts_with([' ', '\t'])
            || is_list_item(rest)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_of_a_paragraph_are_joined_and_paragraphs_kept_apart() {
        let text = "Raise the load linearly over this time before the warm-up and the measured\nwindow, e.g.\n`\"10s\"`.\n\nSecond paragraph\ncontinues.";
        assert_eq!(
            reflow(text),
            "Raise the load linearly over this time before the warm-up and the measured window, e.g. `\"10s\"`.\n\nSecond paragraph continues."
        );
    }

    #[test]
    fn list_items_start_on_their_own_line_and_join_their_continuations() {
        let text = "Levels:\n- `Restricted`: the container runs\n  as non-root.\n- `Baseline`: for\nimages that need root.\n1. first\n2) second";
        assert_eq!(
            reflow(text),
            "Levels:\n- `Restricted`: the container runs as non-root.\n- `Baseline`: for images that need root.\n1. first\n2) second"
        );
    }

    #[test]
    fn indented_blocks_after_prose_keep_their_lines() {
        let text = "Example:\n\n    a: 1\n    b: 2\n\nEnd\nof it.";
        assert_eq!(reflow(text), "Example:\n\n    a: 1\n    b: 2\n\nEnd of it.");
    }

    #[test]
    fn blank_lines_collapse_to_one_and_trailing_ones_go() {
        assert_eq!(reflow("a\n\n\n\nb\n\n"), "a\n\nb");
        assert_eq!(reflow(""), "");
    }

    #[test]
    fn reflowed_text_breaks_only_between_blocks() {
        let text = "a\nb\n\n- c\nd\n  e\n12. f\n\n    code\n";
        let out = reflow(text);
        assert!(breaks_only_between_blocks(&out), "{out:?}");
        assert!(!breaks_only_between_blocks("one\ntwo"));
        assert!(breaks_only_between_blocks("one\n\ntwo"));
    }

    #[test]
    fn every_description_at_any_depth_is_reflowed_and_nothing_else() {
        let mut v = serde_json::json!({
            "description": "a\nb",
            "properties": {"x": {"description": "c\nd", "default": "e\nf"}},
            "items": [{"description": "g\nh"}]
        });
        reflow_descriptions(&mut v);
        assert_eq!(v["description"], "a b");
        assert_eq!(v["properties"]["x"]["description"], "c d");
        assert_eq!(v["properties"]["x"]["default"], "e\nf");
        assert_eq!(v["items"][0]["description"], "g h");
    }
}
