use super::*;
use crate::fixtures::{self, schedule as fixture};

fn render(s: &BenchmarkSchedule, format: Format) -> String {
    let mut out = Vec::new();
    write_trend(&mut out, s, format).unwrap();
    String::from_utf8(out).unwrap()
}

fn page(s: &BenchmarkSchedule) -> (String, usize) {
    let mut out = Vec::new();
    let charts = write_trend_html(&mut out, s, "2026-12-14T08:00:00Z").unwrap();
    (String::from_utf8(out).unwrap(), charts)
}

/// The `id`s of the page's `<figure class="chart">` elements, in page order.
fn chart_ids(html: &str) -> Vec<String> {
    html.split("<figure class=\"chart\" id=\"")
        .skip(1)
        .filter_map(|s| s.split_once('"').map(|p| p.0.to_string()))
        .collect()
}

/// The `<figure>` element with this id.
fn figure<'a>(html: &'a str, id: &str) -> &'a str {
    let start = html
        .find(&format!("<figure class=\"chart\" id=\"{id}\""))
        .unwrap();
    let len = html[start..].find("</figure>").unwrap();
    &html[start..start + len]
}

#[test]
fn the_fixture_file_is_the_fixture_schedule_as_yaml() {
    // The headless-Chromium test (tests/trend_browser.rs) renders this snapshot's content.
    let yaml = serde_yaml::to_string(&fixture::schedule()).unwrap();
    fixtures::assert_snapshot_in("tests/fixtures/schedule", "nightly.yaml", &yaml);
}

#[test]
fn the_fixture_has_the_steps_its_runs_were_made_with() {
    let status = fixture::schedule().status.unwrap();
    let found: Vec<(&str, &str, i32, bool, bool)> = status
        .changes
        .iter()
        .map(|c| {
            (
                c.cell.as_str(),
                c.figure.as_str(),
                c.index,
                c.worse,
                c.provisional,
            )
        })
        .collect();
    let hello = "demo/hello cpu=500m mem=256Mi c=16";
    let compute = "demo/compute cpu=500m mem=256Mi c=16";
    assert_eq!(
        found,
        [
            (hello, "throughput", 7, true, false),
            (hello, "p99", 7, true, false),
            (compute, "throughput", 10, false, true),
        ]
    );
}

#[test]
fn text_has_the_header_a_table_per_cell_and_the_changes() {
    let got = render(&fixture::schedule(), Format::Text);
    fixtures::assert_golden("trend.txt", &got);
}

#[test]
fn the_row_where_a_change_starts_carries_its_step_and_judgement() {
    let got = render(&fixture::schedule(), Format::Text);
    let row = |run: &str, cell: &str| {
        let section = got.split(&format!("\n{cell}:\n")).nth(1).unwrap();
        let line = section.lines().find(|l| l.contains(run)).unwrap();
        line.to_string()
    };
    let hello = row("nightly-20261208", "demo/hello cpu=500m mem=256Mi c=16");
    assert!(
        hello.ends_with("▼ −23 % throughput (worse); ▲ +30 % p99 (worse)"),
        "{hello}"
    );
    let compute = row("nightly-20261211", "demo/compute cpu=500m mem=256Mi c=16");
    assert!(
        compute.ends_with("▲ +10 % throughput (better, provisional)"),
        "{compute}"
    );
    // No interval from a single repeat; the first runs have no commit, so the image shows.
    let single = row("nightly-20261204", "demo/compute cpu=500m mem=256Mi c=16");
    assert!(
        single.contains(" 1  ") && single.contains(" -  "),
        "{single}"
    );
    let first = row("nightly-20261201", "demo/hello cpu=500m mem=256Mi c=16");
    assert!(
        first.contains("benchrun.local/benchrun-demo:nightly"),
        "{first}"
    );
}

#[test]
fn markdown_has_a_section_and_a_table_per_cell() {
    let got = render(&fixture::schedule(), Format::Markdown);
    assert!(got.starts_with("# nightly: 2 cells over 14 runs, 3 changes (2 for the worse)\n"));
    assert!(got.contains("\n## demo/hello cpu=500m mem=256Mi c=16\n\n| # | RUN | FINISHED |"));
    assert!(got.contains("\n## Changes (3)\n\n- demo/hello"), "{got}");
}

#[test]
fn csv_has_one_record_per_cell_and_run_with_the_changes_where_they_start() {
    let got = render(&fixture::schedule(), Format::Csv);
    let lines: Vec<&str> = got.lines().collect();
    assert_eq!(lines.len(), 1 + 2 * fixture::RUNS);
    assert_eq!(lines[0], CSV_COLUMNS_LINE);
    let step = lines
        .iter()
        .find(|l| {
            l.starts_with("demo/hello cpu=500m mem=256Mi c=16,demo,hello,7,nightly-20261208,")
        })
        .unwrap();
    let fields: Vec<&str> = step.split(',').collect();
    assert_eq!(fields.len(), export::CSV_COLUMNS.len());
    assert!(fields[16].starts_with("-0.2"), "{step}");
    assert_eq!((fields[17], fields[19]), ("worse", "worse"), "{step}");
    let provisional = lines
        .iter()
        .find(|l| l.contains(",nightly-20261211,") && l.contains("compute"))
        .unwrap();
    assert!(
        provisional.contains(",better provisional,,"),
        "{provisional}"
    );
}

const CSV_COLUMNS_LINE: &str = "cell,target,scenario,index,run,finished,repeats,throughput,\
    throughput_low,throughput_high,p99_ms,p99_low,p99_high,coverage,commit,images,\
    throughput_step,throughput_change,p99_step,p99_change";

#[test]
fn json_is_the_series_and_the_changes_of_the_status() {
    let s = fixture::schedule();
    let got: serde_json::Value = serde_json::from_str(&render(&s, Format::Json)).unwrap();
    let status = s.status.unwrap();
    assert_eq!(got["series"], serde_json::to_value(&status.series).unwrap());
    assert_eq!(
        got["changes"],
        serde_json::to_value(&status.changes).unwrap()
    );
    assert_eq!(got.as_object().unwrap().len(), 2);
}

#[test]
fn an_empty_schedule_says_it_has_no_points_yet() {
    let s = fixture::empty();
    let text = render(&s, Format::Text);
    assert!(text.starts_with("nightly: no points yet\n"), "{text}");
    assert!(
        text.contains("Last run:   nightly-20261201 (Running)\n"),
        "{text}"
    );
    assert!(text.trim_end().ends_with(NO_POINTS), "{text}");
    assert_eq!(
        render(&s, Format::Csv).lines().count(),
        1,
        "the header only"
    );
    let (html, charts) = page(&s);
    assert_eq!(charts, 0);
    assert!(html.contains(&format!("<p>{NO_POINTS}</p>")) && !html.contains("<svg"));
}

#[test]
fn the_page_has_a_chart_per_cell_and_figure_with_bands_markers_and_tooltips() {
    let (html, charts) = page(&fixture::schedule());
    assert!(html.starts_with("<!DOCTYPE html>") && html.trim_end().ends_with("</html>"));
    assert!(!html.contains("<script"), "no JavaScript");
    assert!(
        !html.contains("src=\"") && !html.contains("href=\"http"),
        "nothing to fetch"
    );
    let ids = chart_ids(&html);
    assert_eq!(
        ids,
        [
            "chart-demo-hello-cpu-500m-mem-256mi-c-16-throughput",
            "chart-demo-hello-cpu-500m-mem-256mi-c-16-p99",
            "chart-demo-compute-cpu-500m-mem-256mi-c-16-throughput",
            "chart-demo-compute-cpu-500m-mem-256mi-c-16-p99",
        ]
    );
    assert_eq!(charts, ids.len());
    for id in &ids {
        let f = figure(&html, id);
        assert!(f.contains("<svg"), "{id} is drawn");
        // The intervals as a band.
        assert!(f.contains("<polygon"), "{id} has a band");
        // A tooltip naming its run on every point.
        assert_eq!(f.matches("<title>").count(), fixture::RUNS, "{id}");
        assert!(
            f.contains("<title>#1 nightly-20261201 (2026-12-01 02:06): "),
            "{id}"
        );
    }
    let hello = figure(&html, &ids[0]);
    assert!(
        hello.contains("▼ −23 %\n</text>"),
        "the step beside its marker"
    );
    assert!(hello.contains("change for the worse") && hello.contains("mean between changes"));
    let compute = figure(&html, &ids[2]);
    assert!(compute.contains("▲ +10 % (provisional)\n</text>"));
    assert!(compute.contains("change for the better"));
    // The single repeat of run 4 and the change at run 11 break the band: runs 1–3, 5–10
    // and 11–14.
    assert_eq!(compute.matches("<polygon").count(), 3);
    let flat = figure(&html, &ids[3]);
    assert!(!flat.contains("change for the") && !flat.contains("mean between changes"));
    assert!(html.contains("<h2>Changes</h2>\n<ul>\n<li>demo/hello"));
}

#[test]
fn output_is_a_format_or_an_html_file() {
    assert_eq!(parse_output("csv"), Ok(Output::Format(Format::Csv)));
    assert_eq!(parse_output("html"), Ok(Output::Html(None)));
    assert_eq!(
        parse_output("out/trend.html"),
        Ok(Output::Html(Some("out/trend.html".into())))
    );
    assert!(parse_output("trend.pdf").unwrap_err().contains("trend.pdf"));
}

#[test]
fn steps_are_signed_percentages_with_a_true_minus() {
    assert_eq!(percent(-0.2317), "−23 %");
    assert_eq!(percent(0.045), "+4.5 %");
    assert_eq!(percent(0.0), "+0.0 %");
}
