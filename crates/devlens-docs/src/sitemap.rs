//! Sitemaps (sitemaps.org) for the docs crawler: the pages a site lists, including those no link
//! reaches (a navigation drawn by JavaScript). Only what the crawl needs: the `<loc>` of each
//! `<url>`, and the child sitemaps of a `<sitemapindex>`. Read with quick-xml (a pull parser with
//! no dependency beyond memchr): entities, character references, CDATA, comments and namespace
//! prefixes are XML's business, which a hand-written scan got wrong (`&#38;` kept, a `<loc>` in a
//! comment listed).

use quick_xml::escape::resolve_predefined_entity;
use quick_xml::events::Event;
use quick_xml::reader::Reader;

/// What one sitemap file lists.
#[derive(Debug, PartialEq)]
pub enum Sitemap {
    /// Page URLs, in file order.
    Pages(Vec<String>),
    /// Further sitemaps (a sitemap index).
    Index(Vec<String>),
}

/// The `<loc>` values of `xml`, references and CDATA resolved; an index when the root element is
/// `<sitemapindex>`. A file that stops being well-formed gives what was read before the fault.
pub fn parse(xml: &str) -> Sitemap {
    let mut reader = Reader::from_str(xml);
    let mut locs = Vec::new();
    let mut root: Option<String> = None;
    let mut loc: Option<String> = None;
    loop {
        match reader.read_event() {
            Ok(Event::Start(tag)) => {
                let name = tag.local_name();
                if root.is_none() {
                    root = Some(name.as_ref().to_string());
                }
                if name.as_ref() == "loc" {
                    loc = Some(String::new());
                }
            }
            Ok(Event::Text(text)) => {
                if let Some(loc) = &mut loc {
                    loc.push_str(&text.xml10_content());
                }
            }
            Ok(Event::CData(data)) => {
                if let Some(loc) = &mut loc {
                    loc.push_str(&data.xml10_content());
                }
            }
            Ok(Event::GeneralRef(reference)) => {
                if let Some(loc) = &mut loc {
                    match reference.resolve_char_ref() {
                        Ok(Some(c)) => loc.push(c),
                        _ => {
                            if let Some(text) = resolve_predefined_entity(&reference) {
                                loc.push_str(text);
                            }
                        }
                    }
                }
            }
            Ok(Event::End(tag)) if tag.local_name().as_ref() == "loc" => {
                if let Some(value) = loc.take().map(|v| v.trim().to_string())
                    && !value.is_empty()
                {
                    locs.push(value);
                }
            }
            Ok(Event::Eof) | Err(_) => break,
            Ok(_) => {}
        }
    }
    if root.as_deref() == Some("sitemapindex") {
        Sitemap::Index(locs)
    } else {
        Sitemap::Pages(locs)
    }
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

    #[test]
    fn xml_is_read_as_xml() {
        let pages = r#"<?xml version="1.0"?>
<!-- <loc>https://x.dev/commented-out</loc> -->
<sm:urlset xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9">
  <sm:url><sm:loc>https://x.dev/a?b=1&#38;c=2&#x26;d=&apos;3&apos;</sm:loc></sm:url>
  <sm:url><sm:loc>https://x.dev/sitemapindex.html</sm:loc></sm:url>
</sm:urlset>"#;
        assert_eq!(
            parse(pages),
            Sitemap::Pages(vec![
                "https://x.dev/a?b=1&c=2&d='3'".into(),
                "https://x.dev/sitemapindex.html".into(),
            ])
        );
        // A file cut off mid-way: what came before the fault.
        assert_eq!(
            parse("<urlset><url><loc>https://x.dev/a</loc></url><url><loc>https://x.dev/b</lo"),
            Sitemap::Pages(vec!["https://x.dev/a".into()])
        );
    }
}
