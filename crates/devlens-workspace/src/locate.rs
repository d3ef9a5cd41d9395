//! From a location a page shows to the workspace file it names: the live-coding loop turns
//! console locations, stack frames and dev-server overlay paths into `path:line` for read_file.

use std::path::Path;

use crate::{Access, Workspace};

impl Workspace {
    /// Where a location the page shows — `/src/main.js:3:5`, a URL, `fn (/src/a.js:3:5)`,
    /// `webpack://app/./src/a.js:3`, Vite's `/@fs/…` or an absolute path — is in the workspace:
    /// `src/main.js:3`, when that file exists there.
    pub fn locate(&self, location: &str) -> Option<String> {
        let location = location.trim();
        // A stack frame: `fn (location)`.
        let location = match (location.rfind('('), location.strip_suffix(')')) {
            (Some(open), Some(inner)) => &inner[open + 1..],
            _ => location,
        };
        let mut path = location;
        let mut line = None;
        // Up to two trailing `:number`s: line and column.
        for _ in 0..2 {
            match path.rsplit_once(':') {
                Some((rest, n)) if !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()) => {
                    line = Some(n);
                    path = rest;
                }
                _ => break,
            }
        }
        let path = path.split(['?', '#']).next().unwrap_or(path);
        let path = if let Some((scheme, rest)) = path.split_once("://") {
            match scheme {
                "file" => rest,
                // A bundler's virtual root (`webpack://app/`): the path follows the project name.
                _ => &rest[rest.find('/')?..],
            }
        } else {
            path
        };
        let path = path.strip_prefix("/@fs").unwrap_or(path);
        // An absolute path inside the workspace, else a path the page serves from its root.
        let relative = match Path::new(path).strip_prefix(self.root()) {
            Ok(inside) => inside.to_str()?.to_string(),
            Err(_) => path
                .trim_start_matches('/')
                .trim_start_matches("./")
                .to_string(),
        };
        if relative.is_empty() {
            return None;
        }
        let resolved = self.resolve(&relative, Access::Read).ok()?;
        if !resolved.path.is_file() || !resolved.path.starts_with(self.root()) {
            return None;
        }
        Some(match line {
            Some(line) => format!("{}:{line}", resolved.display),
            None => resolved.display,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_locations_name_workspace_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("app");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/main.js"), "x\n").unwrap();
        let ws = Workspace::open(&root, &dir.path().join("data"), false).unwrap();
        let abs = ws.root().join("src/main.js").display().to_string();
        for (shown, expected) in [
            ("/src/main.js:3:5", Some("src/main.js:3")),
            (
                "http://127.0.0.1:5173/src/main.js?t=12:7:1",
                Some("src/main.js:7"),
            ),
            ("onClick (/src/main.js:9:2)", Some("src/main.js:9")),
            ("webpack://app/./src/main.js:4", Some("src/main.js:4")),
            (&format!("/@fs{abs}:2:1"), Some("src/main.js:2")),
            (&format!("{abs}:11:3"), Some("src/main.js:11")),
            ("/src/other.js:1:1", None),
            ("/etc/passwd:1", None),
            ("https://cdn.example.com/lib.js:1:1", None),
        ] {
            assert_eq!(ws.locate(shown).as_deref(), expected, "{shown}");
        }
    }
}
