//! Notebook parsing and the diff by cell, on well-formed and hostile input.

use super::*;
use serde_json::json;

fn nb(cells: Value) -> String {
    json!({
        "nbformat": 4, "nbformat_minor": 5,
        "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
        "cells": cells,
    })
    .to_string()
}

fn code(source: Value, outputs: Value) -> Value {
    json!({"cell_type": "code", "source": source, "outputs": outputs, "execution_count": 1, "metadata": {}})
}

#[test]
fn reads_cells_their_sources_and_the_language() {
    let text = nb(json!([
        code(json!(["import os\n", "print(1)\n"]), json!([])),
        {"cell_type": "markdown", "source": "# Title", "metadata": {}},
    ]));
    let n = parse(&text).expect("a notebook");
    assert_eq!(n.language.as_deref(), Some("python"));
    assert_eq!(n.cells.len(), 2);
    assert_eq!(n.cells[0].source, "import os\nprint(1)\n");
    assert_eq!(n.cells[1].cell_type, "markdown");
    assert_eq!(n.cells[1].source, "# Title");
}

#[test]
fn anything_else_is_not_a_notebook() {
    let deep = format!(
        "{{\"cells\": {}{}}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let too_many = nb(Value::Array(vec![json!({"source": "x"}); MAX_CELLS + 1]));
    for bad in [
        "",
        "not json",
        "{\"cells\": [",
        "[]",
        "{}",
        "{\"cells\": {}}",
        "{\"cells\": [1]}",
        "{\"cells\": [{\"source\": 5}]}",
        "{\"cells\": [{\"source\": [\"a\", 5]}]}",
        "{\"cells\": [{\"cell_type\": \"a b\\u001b[31m\", \"source\": \"x\"}]}",
        "{\"cells\": [{\"source\": \"x\", \"outputs\": \"no\"}]}",
        &deep,
        &too_many,
    ] {
        assert_eq!(parse(bad), None, "{}", &bad[..bad.len().min(80)]);
    }
    // A language that is not one word is left out, the notebook still read.
    let odd =
        json!({"metadata": {"kernelspec": {"language": "py\nthon"}}, "cells": []}).to_string();
    assert_eq!(parse(&odd).map(|n| n.language), Some(None));
}

#[test]
fn outputs_read_as_words() {
    let outputs = vec![
        json!({"output_type": "stream", "name": "stdout", "text": ["hi\n"]}),
        json!({"output_type": "display_data", "data": {"text/plain": ["<Figure>"], "image/png": "iVBOR"}}),
        json!({"output_type": "error", "ename": "ValueError", "evalue": "x", "traceback": []}),
        json!({"output_type": "error", "ename": "\u{1b}[31mevil"}),
        json!({"output_type": "execute_result", "data": {}}),
        json!(42),
    ];
    assert_eq!(
        summary(&outputs).as_deref(),
        Some("6 outputs: stream, image/png, error ValueError, error, empty result, output")
    );
    assert_eq!(summary(&outputs[..1]).as_deref(), Some("1 output: stream"));
    assert_eq!(summary(&[]), None);
    let many = vec![json!({"output_type": "stream"}); 9];
    assert!(
        summary(&many).unwrap().ends_with("and 3 more"),
        "{:?}",
        summary(&many)
    );
}

#[test]
fn cells_are_paired_edited_added_deleted_and_outputs_compared() {
    let old = parse(&nb(json!([
        code(json!("a = 1\n"), json!([])),
        code(json!("print(a)\n"), json!([{"output_type": "stream", "name": "stdout", "text": "1\n"}])),
        {"cell_type": "markdown", "source": "gone"},
        code(json!("x = 2\n"), json!([])),
    ])))
    .unwrap();
    let new = parse(&nb(json!([
        {"cell_type": "markdown", "source": "# New"},
        code(json!("a = 1\n"), json!([])),
        code(json!("print(a)\n"), json!([{"output_type": "stream", "name": "stdout", "text": "2\n"}])),
        code(json!("x = 3\n"), json!([])),
    ])))
    .unwrap();
    let (cells, approximate) = diff_cells(Some(&old), Some(&new), &mut DiffBudget::for_request());
    assert!(!approximate);
    let got: Vec<(CellStatus, Option<usize>, Option<usize>)> = cells
        .iter()
        .map(|c| (c.status, c.old_index, c.new_index))
        .collect();
    assert_eq!(
        got,
        vec![
            (CellStatus::Added, None, Some(1)),
            (CellStatus::Unchanged, Some(1), Some(2)),
            (CellStatus::Unchanged, Some(2), Some(3)),
            (CellStatus::Deleted, Some(3), None),
            (CellStatus::Modified, Some(4), Some(4)),
        ]
    );
    assert_eq!(cells[0].source_diff, "@@ -0,0 +1 @@\n+# New\n");
    assert!(cells[2].outputs_changed);
    assert_eq!(cells[2].outputs.as_deref(), Some("1 output: stream"));
    assert!(!cells[1].outputs_changed);
    // A cell is edited into one of its own type: the markdown cell goes,
    // the code cell after it is the one edited.
    assert_eq!(cells[3].cell_type, "markdown");
    assert!(
        cells[3].source_diff.contains("-gone"),
        "{}",
        cells[3].source_diff
    );
    assert_eq!(cells[4].source_diff, "@@ -1 +1 @@\n-x = 2\n+x = 3\n");
    // An execution count alone is no change of outputs.
    let mut rerun = old.clone();
    for c in &mut rerun.cells {
        for o in &mut c.outputs {
            o["execution_count"] = json!(7);
        }
    }
    let rerun = parse(&serde_json::to_string(&json!({"cells": rerun.cells.iter().map(|c| json!({"cell_type": c.cell_type, "source": c.source, "outputs": c.outputs})).collect::<Vec<_>>()})).unwrap()).unwrap();
    let (cells, _) = diff_cells(Some(&old), Some(&rerun), &mut DiffBudget::for_request());
    assert!(cells
        .iter()
        .all(|c| c.status == CellStatus::Unchanged && !c.outputs_changed));
}

#[test]
fn a_notebook_added_or_deleted_is_every_cell_added_or_deleted() {
    let n = parse(&nb(json!([
        code(json!("a\n"), json!([])),
        code(json!("b\n"), json!([]))
    ])))
    .unwrap();
    let (cells, _) = diff_cells(None, Some(&n), &mut DiffBudget::for_request());
    assert!(cells.iter().all(|c| c.status == CellStatus::Added));
    let (cells, _) = diff_cells(Some(&n), None, &mut DiffBudget::for_request());
    assert!(cells.iter().all(|c| c.status == CellStatus::Deleted));
    assert_eq!(cells[1].source_diff, "@@ -1 +0,0 @@\n-b\n");
}

#[test]
fn only_ipynb_names_are_notebooks() {
    assert!(is_notebook("a/analysis.ipynb"));
    assert!(is_notebook("X.IPYNB"));
    assert!(!is_notebook(".ipynb"));
    assert!(!is_notebook("a.ipynb/b.txt"));
    assert!(!is_notebook("notes.txt"));
}
