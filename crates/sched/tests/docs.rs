//! docs/schedulers.md's parameter tables are the descriptors' own
//! ([`coflowkit_sched::descriptor::markdown`]): this test fails when the
//! doc is out of date, and with `COFLOWKIT_WRITE_DOCS=1` writes them.

use coflowkit_sched::{descriptor::markdown, SCHEDULERS};
use std::path::Path;

const BEGIN: &str = "<!-- params:begin (generated from the descriptors: \
                     COFLOWKIT_WRITE_DOCS=1 cargo test -p coflowkit-sched --test docs) -->\n";
const END: &str = "<!-- params:end -->";

#[test]
fn the_parameter_tables_in_docs_are_the_descriptors() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/schedulers.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let start = text
        .find(BEGIN)
        .expect("docs/schedulers.md has the params:begin marker")
        + BEGIN.len();
    let end = text
        .find(END)
        .expect("docs/schedulers.md has the params:end marker");
    let tables = markdown(SCHEDULERS);
    if text[start..end] == tables {
        return;
    }
    if std::env::var_os("COFLOWKIT_WRITE_DOCS").is_some() {
        std::fs::write(&path, format!("{}{tables}{}", &text[..start], &text[end..])).unwrap();
        return;
    }
    panic!(
        "docs/schedulers.md's parameter tables are out of date: run \
         COFLOWKIT_WRITE_DOCS=1 cargo test -p coflowkit-sched --test docs"
    );
}

#[test]
fn no_table_row_is_longer_than_200_characters() {
    let tables = markdown(SCHEDULERS);
    for line in tables.lines().filter(|l| l.starts_with('|')) {
        assert!(
            line.chars().count() <= 200,
            "{} chars: {line}",
            line.chars().count()
        );
    }
}
