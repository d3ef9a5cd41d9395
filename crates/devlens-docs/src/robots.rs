//! `robots.txt` as RFC 9309 reads it, for the docs crawler.
//!
//! The rules of the groups naming the crawler (`devlens`) apply, else those of `*`; the longest
//! matching `Allow`/`Disallow` pattern decides (`*` matches any run of characters, `$` anchors the
//! end), and on a tie `Allow` wins. `Crawl-delay` (not in the RFC, widely honoured) is read too.
//!
//! Kept hand-written after a side-by-side check against `texting_robots` 0.2.2 (the maintained
//! crate; building it and its 2 new dependencies costs about 4 CPU-seconds of rustc here,
//! scripts/dependency-cost, so cost was not the reason): on 29 checks (21 paths over 8 files —
//! this module's tests, percent-encoded paths, case — and their crawl delays) both answered
//! alike but once: `User-agent: devlens/1.0` names this crawler for Google's parser and for this
//! module (the product token before the version), not for texting_robots. Its API also takes
//! whole URLs where the crawler holds paths already checked for scope.

use std::time::Duration;

/// The product token the crawler's groups are picked by.
pub const AGENT: &str = "devlens";

/// Files larger than this are read up to here (RFC 9309 asks for at least 500 KiB).
pub const MAX_BYTES: usize = 512 * 1024;

/// The rules of one site for this crawler.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Robots {
    /// `(allow, pattern)`, in file order.
    rules: Vec<(bool, String)>,
    /// Seconds between requests the site asks for.
    pub crawl_delay: Option<Duration>,
    /// `Sitemap:` URLs (they belong to no group).
    pub sitemaps: Vec<String>,
}

impl Robots {
    /// Everything allowed (no robots.txt, or one that does not apply).
    pub fn allow_all() -> Self {
        Self::default()
    }

    /// The groups of `text` that apply to [`AGENT`].
    pub fn parse(text: &str) -> Self {
        // Groups: a run of user-agent lines, then their rules.
        struct Group {
            agents: Vec<String>,
            rules: Vec<(bool, String)>,
            delay: Option<Duration>,
        }
        let mut groups: Vec<Group> = Vec::new();
        let mut sitemaps = Vec::new();
        let mut in_agents = false;
        for line in text.lines() {
            let line = line.split('#').next().unwrap_or("").trim();
            let Some((key, value)) = line.split_once(':') else {
                continue;
            };
            let key = key.trim().to_ascii_lowercase();
            let value = value.trim();
            match key.as_str() {
                "user-agent" => {
                    if !in_agents {
                        groups.push(Group {
                            agents: Vec::new(),
                            rules: Vec::new(),
                            delay: None,
                        });
                        in_agents = true;
                    }
                    if let Some(g) = groups.last_mut() {
                        g.agents.push(value.to_ascii_lowercase());
                    }
                }
                "allow" | "disallow" => {
                    in_agents = false;
                    // An empty Disallow allows everything: no rule.
                    if let (Some(g), false) = (groups.last_mut(), value.is_empty()) {
                        g.rules.push((key == "allow", value.to_string()));
                    }
                }
                "crawl-delay" => {
                    in_agents = false;
                    if let (Some(g), Ok(secs)) = (groups.last_mut(), value.parse::<f64>())
                        && secs.is_finite()
                        && secs >= 0.0
                    {
                        g.delay = Some(Duration::from_secs_f64(secs));
                    }
                }
                "sitemap" => {
                    // The value is a URL: rejoin what the split at ':' took apart.
                    let url = line.split_once(':').map(|(_, v)| v.trim()).unwrap_or("");
                    if !url.is_empty() {
                        sitemaps.push(url.to_string());
                    }
                }
                // Unknown lines do not end a group's agent list (RFC 9309 2.2.4).
                _ => {}
            }
        }
        // `devlens` or `devlens/1.0`: the product token, case-insensitively (lower-cased above).
        let named = |g: &&Group| {
            g.agents
                .iter()
                .any(|a| a.split(['/', ' ']).next() == Some(AGENT))
        };
        let mut chosen: Vec<&Group> = groups.iter().filter(named).collect();
        if chosen.is_empty() {
            chosen = groups
                .iter()
                .filter(|g| g.agents.iter().any(|a| a == "*"))
                .collect();
        }
        Self {
            rules: chosen.iter().flat_map(|g| g.rules.clone()).collect(),
            crawl_delay: chosen.iter().find_map(|g| g.delay),
            sitemaps,
        }
    }

    /// Whether `path` (the URL's path and query) may be fetched.
    pub fn allows(&self, path: &str) -> bool {
        if path == "/robots.txt" {
            return true;
        }
        let mut best: Option<(usize, bool)> = None;
        for (allow, pattern) in &self.rules {
            if matches(pattern, path) {
                let len = pattern.len();
                best = match best {
                    Some((l, a)) if l > len || (l == len && a) => Some((l, a)),
                    _ => Some((len, *allow)),
                };
            }
        }
        best.is_none_or(|(_, allow)| allow)
    }
}

/// A robots.txt pattern against a path: a prefix match with `*` for any run of characters and
/// a final `$` for the end of the path.
fn matches(pattern: &str, path: &str) -> bool {
    let (pattern, anchored) = match pattern.strip_suffix('$') {
        Some(p) => (p, true),
        None => (pattern, false),
    };
    let parts: Vec<&str> = pattern.split('*').collect();
    let Some(first) = parts.first() else {
        return true;
    };
    if !path.starts_with(first) {
        return false;
    }
    let mut rest = &path[first.len()..];
    if parts.len() == 1 {
        return !anchored || rest.is_empty();
    }
    for (i, part) in parts.iter().enumerate().skip(1) {
        let last = i == parts.len() - 1;
        if last && anchored {
            return rest.ends_with(part);
        }
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_match_decides_and_allow_wins_a_tie() {
        let r = Robots::parse(
            "User-agent: *\nDisallow: /docs/\nAllow: /docs/guide/\nDisallow: /docs/guide/old\n\
             Allow: /same\nDisallow: /same\n",
        );
        assert!(r.allows("/"));
        assert!(!r.allows("/docs/api.html"));
        assert!(r.allows("/docs/guide/intro.html"));
        assert!(!r.allows("/docs/guide/old/intro.html"));
        assert!(r.allows("/same/page"));
        assert!(r.allows("/robots.txt"));
    }

    #[test]
    fn wildcards_and_end_anchors() {
        let r = Robots::parse("User-agent: *\nDisallow: /*.pdf$\nDisallow: /search*q=\n");
        assert!(!r.allows("/files/manual.pdf"));
        assert!(r.allows("/files/manual.pdf.html"));
        assert!(!r.allows("/search?page=2&q=x"));
        assert!(r.allows("/search?page=2"));
    }

    #[test]
    fn a_group_naming_devlens_replaces_the_star_group() {
        let text = "User-agent: *\nDisallow: /\n\n# us\nUser-agent: DevLens\nUser-agent: other\n\
                    Disallow: /private\nCrawl-delay: 1.5\n\nUser-agent: devlens\nDisallow: /tmp\n";
        let r = Robots::parse(text);
        assert!(r.allows("/docs/"));
        assert!(!r.allows("/private/x"));
        assert!(
            !r.allows("/tmp/x"),
            "groups naming the crawler are combined"
        );
        assert_eq!(r.crawl_delay, Some(Duration::from_millis(1500)));

        let star_only = Robots::parse(
            "User-agent: googlebot\nDisallow: /\n\nUser-agent: *\nDisallow: /admin\n",
        );
        assert!(star_only.allows("/docs/"));
        assert!(!star_only.allows("/admin/"));
        assert_eq!(
            Robots::parse("User-agent: googlebot\nDisallow: /\n"),
            Robots::allow_all()
        );
    }

    #[test]
    fn empty_disallow_and_junk_lines_allow_everything() {
        let r = Robots::parse("User-agent: *\nDisallow:\nnonsense\nSitemap: https://x/s.xml\n");
        assert!(r.allows("/anything"));
        assert_eq!(r.sitemaps, ["https://x/s.xml"]);
        assert!(Robots::parse("").allows("/x"));
    }
}
