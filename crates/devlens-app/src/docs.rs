//! The docs family's requests: where a library's docs come from when they are added. Queries
//! and lookups take the docs crate's own inputs ([`devlens_docs::QueryDocsInput`]), which every
//! surface deserializes or builds as they are.

use std::path::PathBuf;

use devlens_docs::DocsSource;
use devlens_docs::crawl::CrawlLimits;

use crate::AppError;

/// Where docs come from, as a caller sends it: a folder on this machine or a site to crawl.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SourceInput {
    pub path: Option<PathBuf>,
    pub url: Option<String>,
    /// With `url`: pages to fetch at most.
    pub max_pages: Option<usize>,
    /// With `url`: links to follow from the start page at most.
    pub max_depth: Option<usize>,
    /// With `url`: also fetch what the site's robots.txt disallows (a site of one's own).
    pub ignore_robots: bool,
}

/// The source of an ingest: exactly one of a folder and a URL; crawl limits only with a URL.
pub fn docs_source(input: SourceInput) -> Result<DocsSource, AppError> {
    let url = input.url.filter(|u| !u.trim().is_empty());
    let path = input.path.filter(|p| !p.as_os_str().is_empty());
    match (path, url) {
        (Some(path), None) => {
            if input.max_pages.is_some() || input.max_depth.is_some() || input.ignore_robots {
                return Err(AppError::invalid(
                    "maxPages, maxDepth and ignoreRobots apply to a crawl: give them with `url`, \
                     not with `path`",
                ));
            }
            Ok(DocsSource::Path(path))
        }
        (None, Some(url)) => {
            let defaults = CrawlLimits::default();
            Ok(DocsSource::Crawl {
                url: url.trim().to_string(),
                limits: CrawlLimits {
                    max_pages: input.max_pages.unwrap_or(defaults.max_pages),
                    max_depth: input.max_depth.unwrap_or(defaults.max_depth),
                    ignore_robots: input.ignore_robots,
                },
            })
        }
        _ => Err(AppError::invalid(
            "give exactly one of `path` (a docs folder on this machine) or `url` (a docs site \
             to crawl)",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_is_a_folder_or_a_site_never_both() {
        let folder = docs_source(SourceInput {
            path: Some("docs".into()),
            ..SourceInput::default()
        })
        .unwrap();
        assert!(matches!(folder, DocsSource::Path(p) if p == std::path::Path::new("docs")));
        let site = docs_source(SourceInput {
            url: Some(" https://example.com/docs/ ".into()),
            max_pages: Some(3),
            ..SourceInput::default()
        })
        .unwrap();
        match site {
            DocsSource::Crawl { url, limits } => {
                assert_eq!(url, "https://example.com/docs/");
                assert_eq!(limits.max_pages, 3);
                assert_eq!(limits.max_depth, CrawlLimits::default().max_depth);
            }
            other => panic!("{other:?}"),
        }
        for input in [
            SourceInput::default(),
            SourceInput {
                path: Some("docs".into()),
                url: Some("https://example.com".into()),
                ..SourceInput::default()
            },
            SourceInput {
                path: Some("docs".into()),
                max_pages: Some(3),
                ..SourceInput::default()
            },
        ] {
            assert!(docs_source(input).is_err());
        }
    }
}
