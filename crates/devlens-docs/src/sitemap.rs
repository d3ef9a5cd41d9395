//! Sitemaps (sitemaps.org) for the docs crawler: the pages a site lists, including those no link
//! reaches (a navigation drawn by JavaScript). Only what the crawl needs: the `<loc>` of each
//! `<url>`, and the child sitemaps of a `<sitemapindex>`.

/// What one sitemap file lists.
#[derive(Debug, PartialEq)]
pub enum Sitemap {
    /// Page URLs, in file order.
    Pages(Vec<String>),
    /// Further sitemaps (a sitemap index).
    Index(Vec<String>),
}

/// The `<loc>` values of `xml`, entity-decoded; an index when the root is `<sitemapindex>`.
pub fn parse(xml: &str) -> Sitemap {
    let mut locs = Vec::new();
    let mut rest = xml;
    while let Some(open) = rest.find("<loc") {
        let after = &rest[open + 4..];
        // `<loc>` or `<loc attr…>`, not `<locale>`.
        if !after.starts_with('>') && !after.starts_with(char::is_whitespace) {
            rest = after;
            continue;
        }
        let Some(body_start) = after.find('>') else {
            break;
        };
        let body = &after[body_start + 1..];
        let Some(close) = body.find("</loc>") else {
            break;
        };
        let value = unescape(body[..close].trim());
        let value = value
            .strip_prefix("<![CDATA[")
            .and_then(|v| v.strip_suffix("]]>"))
            .map(str::to_string)
            .unwrap_or(value);
        if !value.is_empty() {
            locs.push(value.trim().to_string());
        }
        rest = &body[close + 6..];
    }
    if xml.contains("<sitemapindex") {
        Sitemap::Index(locs)
    } else {
        Sitemap::Pages(locs)
    }
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_and_indexes() {
        let pages = r#"<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>https://x.dev/docs/a.html</loc><lastmod>2026-01-01</lastmod></url>
  <url><loc>
     https://x.dev/docs/b?x=1&amp;y=2
  </loc></url>
  <url><loc><![CDATA[https://x.dev/docs/c.html]]></loc><xhtml:link hreflang="de"/></url>
</urlset>"#;
        assert_eq!(
            parse(pages),
            Sitemap::Pages(vec![
                "https://x.dev/docs/a.html".into(),
                "https://x.dev/docs/b?x=1&y=2".into(),
                "https://x.dev/docs/c.html".into(),
            ])
        );
        let index = "<sitemapindex><sitemap><loc>https://x.dev/s1.xml</loc></sitemap>\
                     <sitemap><loc>https://x.dev/s2.xml</loc></sitemap></sitemapindex>";
        assert_eq!(
            parse(index),
            Sitemap::Index(vec![
                "https://x.dev/s1.xml".into(),
                "https://x.dev/s2.xml".into()
            ])
        );
        assert_eq!(parse("not xml at all"), Sitemap::Pages(vec![]));
        assert_eq!(
            parse("<locale>en</locale><loc>u</loc>"),
            Sitemap::Pages(vec!["u".into()])
        );
    }
}
