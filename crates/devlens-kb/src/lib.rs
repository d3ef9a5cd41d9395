//! The knowledge base: solutions a developer saved (snippets, answers, pages), found again by
//! meaning, and handed to an agent as a numbered, cited context — or answered from directly by a
//! configured LLM.
