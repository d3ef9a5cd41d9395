//! robots.txt as the docs crawler reads it: the rules for devlens's user agent, then the
//! allow/deny decision for paths (the input's own lines too, so patterns meet paths they match).

use devlens_docs::robots::Robots;

/// One input, as libFuzzer hands it over.
pub fn run(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let robots = Robots::parse(&text);
    for path in ["/", "/docs/", "/docs/api.html?x=1", "/a%2Fb", "/*", "/$"] {
        let _ = robots.allows(path);
    }
    for line in text.lines().take(32) {
        let path = line.split_once(':').map_or(line, |(_, v)| v).trim();
        let _ = robots.allows(path);
    }
}
