//! Which local files a page may load: `file:` URLs, read back through the page (a snapshot, a
//! screenshot, `evaluate`), would let an agent read any file of the machine — `~/.ssh`,
//! `/etc/passwd`. The sessions of a server are confined
//! ([`crate::BrowserSessions::confine_files`]):
//! their pages load `file:` URLs only inside the allowed places (the workspace and devlens'
//! artifacts folder), whoever asks — a `navigate`, a link the agent clicks, a page script
//! (`location = 'file:///…'`), an iframe or an image of a workspace page.
//!
//! How: each connection enables the Fetch domain on the browser's own session with one pattern,
//! `file:*`, so Chrome pauses every `file:` request of every tab, frame and popup before reading
//! the file; devlens checks the path and continues the request or fails it (`AccessDenied`, which
//! Chrome shows as "Access to the file was denied"). Other schemes are never paused. Web pages
//! cannot load `file:` URLs at all (Chrome blocks http(s) → file navigations and subresources), so
//! only `file:` pages themselves reach this check.
//!
//! The path checked is the one Chrome asks for, decoded as Chrome decodes it, and resolved with
//! every symlink followed ([`Places::resolve`]), so a symlink in the workspace that points out
//! is refused like its target.

use devlens_workspace::{Access, Places};

/// The local path a URL names when it is a `file:` URL (`Ok(None)` when it is not one), or why
/// it names no path that can be checked.
///
/// The URL is read as Chrome reads it: surrounding spaces and control characters dropped, tabs
/// and newlines inside removed, the scheme case-insensitive, `\` taken as `/`, `%XX` decoded and
/// `.`/`..` segments resolved. A host other than `localhost` is refused (another machine's file).
pub fn file_url_path(url: &str) -> std::result::Result<Option<String>, String> {
    let cleaned: String = url
        .trim_matches(|c: char| c <= ' ')
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .collect();
    let Some((scheme, rest)) = cleaned.split_once(':') else {
        return Ok(None);
    };
    if !scheme.eq_ignore_ascii_case("file") {
        return Ok(None);
    }
    let rest = rest.replace('\\', "/");
    let rest = rest.split('#').next().unwrap_or("");
    let rest = rest.split('?').next().unwrap_or("");
    let path = match rest.strip_prefix("//") {
        Some(after) => {
            let (host, path) = match after.find('/') {
                Some(i) => after.split_at(i),
                None => (after, "/"),
            };
            if !host.is_empty() && !host.eq_ignore_ascii_case("localhost") {
                return Err(format!(
                    "it names a file on another machine (`{host}`); only local files can be \
                     checked"
                ));
            }
            path.to_string()
        }
        None if rest.starts_with('/') => rest.to_string(),
        // `file:notes.txt` is `file:///notes.txt` to Chrome.
        None => format!("/{rest}"),
    };
    let decoded = percent_decode(&path);
    let decoded = String::from_utf8(decoded)
        .map_err(|_| "its path is not UTF-8 once decoded, which cannot be checked".to_string())?;
    if decoded.contains('\0') {
        return Err("its path holds a NUL byte".into());
    }
    Ok(Some(without_dot_segments(&decoded)))
}

/// `%XX` decoded; a `%` not followed by two hex digits stays as it is.
fn percent_decode(s: &str) -> Vec<u8> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    out
}

/// An absolute path with `.` and `..` segments resolved by name, as a URL's are (never above
/// the root).
fn without_dot_segments(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    let mut out = format!("/{}", parts.join("/"));
    if path.ends_with('/') && out.len() > 1 {
        out.push('/');
    }
    out
}

/// Whether a page may load `url`: anything that is not a `file:` URL, and a `file:` URL whose
/// path resolves inside `places`. The error says why not.
pub fn file_allowed(places: &Places, url: &str) -> std::result::Result<(), String> {
    match file_url_path(url)? {
        None => Ok(()),
        Some(path) => places
            .resolve(&path, Access::Read)
            .map(drop)
            .map_err(|e| e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(url: &str) -> Option<String> {
        file_url_path(url).unwrap()
    }

    #[test]
    fn file_urls_are_read_as_chrome_reads_them() {
        assert_eq!(path("file:///etc/passwd").as_deref(), Some("/etc/passwd"));
        assert_eq!(path("FILE:///etc/passwd").as_deref(), Some("/etc/passwd"));
        assert_eq!(
            path("  file:///etc/passwd\n").as_deref(),
            Some("/etc/passwd")
        );
        assert_eq!(
            path("fi\tle:///etc/pa\nsswd").as_deref(),
            Some("/etc/passwd")
        );
        assert_eq!(
            path("file://localhost/etc/passwd").as_deref(),
            Some("/etc/passwd")
        );
        assert_eq!(path("file:/etc/passwd").as_deref(), Some("/etc/passwd"));
        assert_eq!(path("file:etc/passwd").as_deref(), Some("/etc/passwd"));
        assert_eq!(path("file:///etc/%70asswd").as_deref(), Some("/etc/passwd"));
        assert_eq!(
            path("file:///ws/a/../../etc/passwd?x#y").as_deref(),
            Some("/etc/passwd")
        );
        assert_eq!(
            path("file:///ws/%2e%2e/%2E%2E/etc/passwd").as_deref(),
            Some("/etc/passwd")
        );
        assert_eq!(
            path("file:///ws\\..\\etc\\passwd").as_deref(),
            Some("/etc/passwd")
        );
        assert_eq!(path("file:///ws/dir/").as_deref(), Some("/ws/dir/"));
        assert_eq!(path("file:///a%20b.html").as_deref(), Some("/a b.html"));
        assert_eq!(path("file:///100%").as_deref(), Some("/100%"));
        for other in [
            "http://example.com/file:///etc/passwd",
            "about:blank",
            "data:text/html,x",
            "localhost:3000",
            "no scheme",
        ] {
            assert_eq!(path(other), None, "{other}");
        }
        assert!(file_url_path("file://fileserver/share/x").is_err());
        assert!(file_url_path("file:///etc/%00passwd").is_err());
        assert!(file_url_path("file:///etc/%ff").is_err());
    }

    #[test]
    fn only_files_in_the_allowed_places_may_load() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::write(ws.join("page.html"), "<p>hi</p>").unwrap();
        std::fs::write(dir.path().join("secret.txt"), "s").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(dir.path().join("secret.txt"), ws.join("link.txt")).unwrap();
        let places = Places::new(&ws, &dir.path().join("data"), true).unwrap();
        let url = |p: &std::path::Path| format!("file://{}", p.display());
        let root = places.workspace().to_path_buf();
        assert!(file_allowed(&places, &url(&root.join("page.html"))).is_ok());
        assert!(
            file_allowed(&places, &url(&root)).is_ok(),
            "a folder listing"
        );
        assert!(file_allowed(&places, &url(&places.artifacts().join("s.png"))).is_ok());
        assert!(file_allowed(&places, "https://example.com").is_ok());
        let secret = dir.path().join("secret.txt");
        for bad in [
            "file:///etc/passwd".to_string(),
            url(&secret),
            url(&root.join("../secret.txt")),
            url(&root.join("link.txt")),
            url(&dir.path().join("data/config.toml")),
        ] {
            let err = file_allowed(&places, &bad).unwrap_err();
            assert!(err.contains("outside the workspace"), "{bad}: {err}");
        }
    }
}
