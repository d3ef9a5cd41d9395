//! BM25 keyword ranking over documents made of weighted text fields.

use tantivy::{
    Index, IndexReader, TantivyDocument,
    collector::TopDocs,
    query::QueryParser,
    schema::{FAST, Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions},
    tokenizer::{
        Language, LowerCaser, RemoveLongFilter, SimpleTokenizer, Stemmer, StopWordFilter,
        TextAnalyzer,
    },
};

use crate::SearchError;

const TOKENIZER: &str = "devlens_en";

/// One searchable field and how much a match in it counts.
#[derive(Debug, Clone, Copy)]
pub struct KeywordField {
    pub name: &'static str,
    pub boost: f32,
}

/// A ranked match: the document's position in the build input, and its BM25 score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KeywordHit {
    pub doc: u64,
    pub score: f32,
}

/// An in-memory BM25 index. Cheap to query from many threads at once.
pub struct KeywordIndex {
    reader: IndexReader,
    parser: QueryParser,
    len: usize,
}

impl std::fmt::Debug for KeywordIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeywordIndex")
            .field("len", &self.len)
            .finish()
    }
}

fn analyzer() -> TextAnalyzer {
    // English stemming makes "creates"/"created"/"creating" one term; stop words keep
    // "how do I …" from matching everything.
    let stop_words = StopWordFilter::new(Language::English)
        .unwrap_or_else(|| StopWordFilter::remove(Vec::<String>::new()));
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(64))
        .filter(LowerCaser)
        .filter(stop_words)
        .filter(Stemmer::new(Language::English))
        .build()
}

impl KeywordIndex {
    /// Builds an index of `docs`; each document gives one text per field, in `fields` order.
    pub fn build<D, T>(fields: &[KeywordField], docs: D) -> Result<Self, SearchError>
    where
        D: IntoIterator<Item = Vec<T>>,
        T: AsRef<str>,
    {
        let mut schema = Schema::builder();
        let doc_id = schema.add_u64_field("doc_id", FAST);
        let text_options = TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(TOKENIZER)
                .set_index_option(IndexRecordOption::WithFreqsAndPositions),
        );
        let text_fields: Vec<Field> = fields
            .iter()
            .map(|f| schema.add_text_field(f.name, text_options.clone()))
            .collect();
        let index = Index::create_in_ram(schema.build());
        index.tokenizers().register(TOKENIZER, analyzer());

        // One thread, small budget: the corpora are small and this runs beside a server.
        let mut writer = index.writer_with_num_threads(1, 32_000_000)?;
        let mut len = 0usize;
        for (position, texts) in docs.into_iter().enumerate() {
            if texts.len() != text_fields.len() {
                return Err(SearchError::FieldCount {
                    expected: text_fields.len(),
                    got: texts.len(),
                });
            }
            let mut doc = TantivyDocument::default();
            doc.add_u64(doc_id, position as u64);
            for (field, text) in text_fields.iter().zip(&texts) {
                doc.add_text(*field, text.as_ref());
            }
            writer.add_document(doc)?;
            len += 1;
        }
        writer.commit()?;
        let reader = index.reader()?;
        let mut parser = QueryParser::for_index(&index, text_fields.clone());
        for (field, spec) in text_fields.iter().zip(fields) {
            parser.set_field_boost(*field, spec.boost);
        }
        Ok(Self {
            reader,
            parser,
            len,
        })
    }

    /// Number of documents indexed.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The `limit` best matches for a free-text query, best first. Query syntax is not
    /// interpreted: users type questions, not Lucene queries, so punctuation is just a separator.
    pub fn search(&self, query: &str, limit: usize) -> Result<Vec<KeywordHit>, SearchError> {
        let cleaned: String = query
            .chars()
            .map(|c| if c.is_alphanumeric() { c } else { ' ' })
            .collect();
        if cleaned.trim().is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let (parsed, _ignored_errors) = self.parser.parse_query_lenient(&cleaned);
        let searcher = self.reader.searcher();
        let top = searcher.search(&parsed, &TopDocs::with_limit(limit).order_by_score())?;
        // Positions come from the fast field: no stored-document decoding per hit.
        let mut columns = Vec::with_capacity(searcher.segment_readers().len());
        for segment in searcher.segment_readers() {
            columns.push(segment.fast_fields().u64("doc_id")?);
        }
        let hits = top
            .into_iter()
            .filter_map(|(score, address)| {
                let column = columns.get(address.segment_ord as usize)?;
                column
                    .first(address.doc_id)
                    .map(|doc| KeywordHit { doc, score })
            })
            .collect();
        Ok(hits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIELDS: &[KeywordField] = &[
        KeywordField {
            name: "title",
            boost: 2.0,
        },
        KeywordField {
            name: "body",
            boost: 1.0,
        },
    ];

    fn index() -> KeywordIndex {
        KeywordIndex::build(
            FIELDS,
            vec![
                vec!["Create an issue", "Creates a new issue in a repository"],
                vec!["List pull requests", "Lists open pull requests"],
                vec![
                    "Delete a repository",
                    "Deleting a repository needs admin rights",
                ],
            ],
        )
        .unwrap()
    }

    #[test]
    fn stemmed_words_match_and_title_outranks_body() {
        let hits = index().search("creating issues", 3).unwrap();
        assert_eq!(hits[0].doc, 0);
        let hits = index().search("repository", 3).unwrap();
        assert_eq!(hits[0].doc, 2, "title match should win: {hits:?}");
    }

    #[test]
    fn query_syntax_characters_are_harmless() {
        let idx = index();
        for q in ["title:(", "\"unbalanced", "a AND OR", "+-!^~*", "", "   "] {
            assert!(idx.search(q, 5).is_ok(), "{q}");
        }
        assert!(idx.search("how do I", 5).unwrap().is_empty());
    }

    #[test]
    fn field_count_mismatch_is_an_error() {
        let err = KeywordIndex::build(FIELDS, vec![vec!["only one"]]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "a document has 1 fields but the index declares 2"
        );
    }
}
