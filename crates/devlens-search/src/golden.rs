//! What every corpus's quality check shares: golden files (`question<TAB>answer<SEP>answer…` per
//! line, blank lines and `#` comments skipped) and nearest-rank percentiles of latencies.

/// One golden line: the question and its non-empty answers, in file order.
pub type GoldenLine = (String, Vec<String>);

/// Splits a golden file into questions and answers. `shape` describes a line for the error
/// message (e.g. "a question, a TAB, then comma-separated operationIds"), which names the line.
pub fn golden_lines(text: &str, separator: char, shape: &str) -> Result<Vec<GoldenLine>, String> {
    let mut out = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        let number = index + 1;
        let Some((question, answers)) = line.split_once('\t') else {
            return Err(format!("line {number}: expected {shape}; found no TAB"));
        };
        let answers: Vec<String> = answers
            .split(separator)
            .map(str::trim)
            .filter(|a| !a.is_empty())
            .map(String::from)
            .collect();
        if question.trim().is_empty() || answers.is_empty() {
            return Err(format!(
                "line {number}: both the question and at least one answer are required ({shape})"
            ));
        }
        out.push((question.trim().to_string(), answers));
    }
    if out.is_empty() {
        return Err("the golden file has no questions".into());
    }
    Ok(out)
}

/// The value at quantile `q` (0..=1) of `values` by nearest rank; 0 for none.
pub fn percentile(values: &[f64], q: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_comments_and_errors() {
        let lines = golden_lines("# c\n\nhow\ta | b |\r\nwhy\tc\n", '|', "q<TAB>a|b").unwrap();
        assert_eq!(
            lines,
            vec![
                ("how".to_string(), vec!["a".to_string(), "b".to_string()]),
                ("why".to_string(), vec!["c".to_string()])
            ]
        );
        let err = golden_lines("ok\ta\nno tab", '|', "q<TAB>a|b").unwrap_err();
        assert!(err.contains("line 2") && err.contains("q<TAB>a|b"), "{err}");
        assert!(
            golden_lines("q\t , ", ',', "x")
                .unwrap_err()
                .contains("line 1")
        );
        assert!(
            golden_lines("# only\n", ',', "x")
                .unwrap_err()
                .contains("no questions")
        );
    }

    #[test]
    fn nearest_rank_percentiles() {
        assert_eq!(percentile(&[4.0, 1.0, 3.0, 2.0], 0.5), 2.0);
        assert_eq!(percentile(&[1.0, 2.0, 3.0, 4.0], 0.95), 4.0);
        assert_eq!(percentile(&[], 0.5), 0.0);
    }
}
