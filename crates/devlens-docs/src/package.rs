//! An installed package's own docs: its README (for many libraries a whole manual), the docs
//! folder it ships, and its type declarations, whose JSDoc is the API reference of exactly the
//! installed version ([`crate::dts`]). Compiled code, bundles, tests and translations are not
//! read; huge files are skipped and counted.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use crate::blocks::Format;
use crate::read::{self, Pages, add_page, relative};
use crate::{DocsError, dts};

/// A README, docs page or declaration file larger than this is generated (an API dump, a bundled
/// declaration of a whole framework), not written to be read.
pub const MAX_FILE_BYTES: u64 = 1024 * 1024;
/// At most this many pages from the package's docs folders.
pub const MAX_DOC_PAGES: usize = 300;
/// At most this many declaration files (date-fns ships ~250 functions, one file each).
pub const MAX_DECLARATION_FILES: usize = 800;

/// Folders a package keeps its written docs in.
const DOC_FOLDERS: [&str; 4] = ["docs", "doc", "documentation", "guide"];
/// Folders that hold no API a user calls: tests, fixtures, translations, examples' own modules.
const PASSED_OVER: [&str; 11] = [
    "node_modules",
    "test",
    "tests",
    "__tests__",
    "__mocks__",
    "fixtures",
    "locale",
    "locales",
    "i18n",
    "benchmark",
    "benchmarks",
];

/// Python modules of a package read for their docstrings, at most.
pub const MAX_PYTHON_MODULES: usize = 120;

/// Reads the package installed at `dir` (`name` titles its declaration pages): an npm package's
/// folder, or a Python distribution's `*.dist-info` folder ([`read_python_package`]).
pub fn read_package(dir: &Path, name: &str) -> Result<Pages, DocsError> {
    if dir
        .file_name()
        .is_some_and(|n| n.to_string_lossy().ends_with(".dist-info"))
    {
        return read_python_package(dir, name);
    }
    if dir.join("Cargo.toml").is_file() && !dir.join("package.json").is_file() {
        return read_crate(dir, name);
    }
    let meta = std::fs::metadata(dir).map_err(|e| DocsError::Read {
        path: dir.to_path_buf(),
        reason: e.to_string(),
    })?;
    if !meta.is_dir() {
        return Err(DocsError::Read {
            path: dir.to_path_buf(),
            reason: "not a folder".into(),
        });
    }
    let mut pages = Pages::default();
    let mut seen = HashSet::new();

    for readme in readmes(dir) {
        let source = relative(dir, &readme);
        match read_small(&readme) {
            Some(text) => {
                let format = Format::of_path(&readme).unwrap_or(Format::Markdown);
                add_page(&mut pages, &mut seen, &source, &source, format, &text);
            }
            None => pages.skipped.push(source),
        }
    }

    add_doc_folders(&mut pages, &mut seen, dir, dir);

    let declarations: Vec<(String, PathBuf)> = declaration_files(dir)
        .into_iter()
        .map(|file| (module_name(name, &relative(dir, &file)), file))
        .collect();
    add_reference_pages(
        &mut pages,
        &mut seen,
        dir,
        &declarations,
        MAX_DECLARATION_FILES,
        dts::to_markdown,
    );

    if pages.chunks.is_empty() {
        return Err(DocsError::InvalidInput(format!(
            "the package in {} has no README, docs folder or documented type declarations to \
             read; add its docs with `devlens docs add ID --path DIR` or `--url URL`",
            dir.display()
        )));
    }
    Ok(pages)
}

/// A Python distribution installed in a virtualenv, from its `*.dist-info` folder: the long
/// description of its METADATA (its README, in the format it declares), a docs folder shipped
/// inside its package, and the docstrings of its public modules ([`crate::pydoc`]): each
/// top-level package's `__init__.py` and the modules beside it whose names do not start with `_`.
pub fn read_python_package(dist_info: &Path, name: &str) -> Result<Pages, DocsError> {
    let metadata = crate::pymeta::read_metadata(&dist_info.join("METADATA")).ok_or_else(|| {
        DocsError::Read {
            path: dist_info.join("METADATA"),
            reason: "no readable core metadata (Name and Version)".into(),
        }
    })?;
    let site_packages = dist_info.parent().unwrap_or(dist_info);
    let mut pages = Pages::default();
    let mut seen = HashSet::new();
    if !metadata.description.is_empty() {
        let format = if metadata.content_type.contains("markdown") {
            Format::Markdown
        } else if metadata.content_type.contains("plain") {
            Format::Text
        } else if metadata.content_type.contains("rst")
            || !metadata
                .description
                .lines()
                .any(|l| l.starts_with("# ") || l.starts_with("```"))
        {
            Format::Rst
        } else {
            Format::Markdown
        };
        let source = format!("{}/METADATA", relative(site_packages, dist_info));
        add_page(
            &mut pages,
            &mut seen,
            &source,
            &source,
            format,
            &metadata.description,
        );
    }
    let mut modules: Vec<(String, PathBuf)> = Vec::new();
    for top in top_level_names(dist_info) {
        let package = site_packages.join(&top);
        let single = site_packages.join(format!("{top}.py"));
        if package.join("__init__.py").is_file() {
            // Docs a package ships inside itself (rare, but whole manuals when there).
            add_doc_folders(&mut pages, &mut seen, site_packages, &package);
            modules.push((top.clone(), package.join("__init__.py")));
            let mut files: Vec<PathBuf> = std::fs::read_dir(&package)
                .map(|entries| entries.flatten().map(|e| e.path()).collect())
                .unwrap_or_default();
            files.sort();
            for file in files {
                let stem = file.file_stem().map(|s| s.to_string_lossy().to_string());
                if let Some(stem) = stem
                    && file.extension().is_some_and(|e| e == "py")
                    && !stem.starts_with('_')
                {
                    modules.push((format!("{top}.{stem}"), file));
                }
            }
        } else if single.is_file() {
            modules.push((top.clone(), single));
        }
    }
    add_reference_pages(
        &mut pages,
        &mut seen,
        site_packages,
        &modules,
        MAX_PYTHON_MODULES,
        crate::pydoc::to_markdown,
    );
    if pages.chunks.is_empty() {
        return Err(DocsError::InvalidInput(format!(
            "{name} has no long description or documented modules to read; add its docs with \
             `devlens docs add ID --path DIR` or `--url URL`"
        )));
    }
    Ok(pages)
}

/// Source files of a crate read for their doc comments, at most.
pub const MAX_RUST_FILES: usize = 200;

/// A crate's sources as Cargo unpacked them: its README (the manifest's `readme`, else the
/// usual names) and the doc comments of its `src/` files ([`crate::rustdoc`]): each file's `//!`
/// docs and its public items' `///` docs, `src/lib.rs` first.
pub fn read_crate(dir: &Path, name: &str) -> Result<Pages, DocsError> {
    let mut pages = Pages::default();
    let mut seen = HashSet::new();
    let readme = std::fs::read_to_string(dir.join("Cargo.toml"))
        .ok()
        .and_then(|t| toml::from_str::<toml::Table>(&t).ok())
        .and_then(|t| {
            t.get("package")?
                .get("readme")?
                .as_str()
                .map(str::to_string)
        })
        .map(|r| dir.join(r))
        .filter(|p| {
            p.is_file()
                && std::fs::canonicalize(p)
                    .ok()
                    .zip(std::fs::canonicalize(dir).ok())
                    .is_some_and(|(p, d)| p.starts_with(d))
        });
    for file in readme.into_iter().chain(readmes(dir)).take(1) {
        let source = relative(dir, &file);
        match read_small(&file) {
            Some(text) => {
                let format = Format::of_path(&file).unwrap_or(Format::Markdown);
                add_page(&mut pages, &mut seen, &source, &source, format, &text);
            }
            None => pages.skipped.push(source),
        }
    }
    let crate_name = name.replace('-', "_");
    let mut files = Vec::new();
    let mut stack = vec![(dir.join("src"), 0usize)];
    while let Some((folder, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let file_name = entry.file_name().to_string_lossy().into_owned();
            if kind.is_dir() && depth < 6 && !PASSED_OVER.contains(&file_name.as_str()) {
                stack.push((entry.path(), depth + 1));
            } else if kind.is_file() && file_name.ends_with(".rs") {
                files.push(entry.path());
            }
        }
    }
    files.sort_by_key(|p| {
        (
            !p.ends_with("src/lib.rs"),
            p.components().count(),
            p.clone(),
        )
    });
    let files: Vec<(String, PathBuf)> = files
        .into_iter()
        .map(|file| (rust_module(&crate_name, &relative(dir, &file)), file))
        .collect();
    add_reference_pages(
        &mut pages,
        &mut seen,
        dir,
        &files,
        MAX_RUST_FILES,
        crate::rustdoc::to_markdown,
    );
    if pages.chunks.is_empty() {
        return Err(DocsError::InvalidInput(format!(
            "{name} has no README or doc comments to read; add its docs with `devlens docs add \
             ID --path DIR` or `--url URL`"
        )));
    }
    Ok(pages)
}

/// The module a source file holds: `src/lib.rs` → `base64`, `src/engine/mod.rs` →
/// `base64::engine`, `src/read.rs` → `base64::read`.
fn rust_module(crate_name: &str, source: &str) -> String {
    let path = source.trim_start_matches("src/").trim_end_matches(".rs");
    let mut segments: Vec<&str> = path.split('/').collect();
    if matches!(segments.last(), Some(&"lib") | Some(&"mod") | Some(&"main")) {
        segments.pop();
    }
    std::iter::once(crate_name)
        .chain(segments)
        .collect::<Vec<_>>()
        .join("::")
}

/// The importable top-level names of a distribution: its `top_level.txt`, else the first folder
/// (or module) of the Python files its RECORD lists.
fn top_level_names(dist_info: &Path) -> Vec<String> {
    let valid = |n: &str| {
        !n.is_empty()
            && !n.starts_with(['_', '.'])
            && n.chars().all(|c| c.is_alphanumeric() || c == '_')
    };
    if let Ok(text) = std::fs::read_to_string(dist_info.join("top_level.txt")) {
        let names: Vec<String> = text
            .lines()
            .map(str::trim)
            .filter(|n| valid(n))
            .map(str::to_string)
            .collect();
        if !names.is_empty() {
            return names;
        }
    }
    let mut names: Vec<String> = std::fs::read_to_string(dist_info.join("RECORD"))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| line.split(',').next())
        .filter(|path| path.ends_with(".py"))
        .filter_map(|path| path.split('/').next())
        .map(|first| first.trim_end_matches(".py").to_string())
        .filter(|n| valid(n))
        .collect();
    names.sort();
    names.dedup();
    names
}

/// Adds the pages of the docs folders (`docs/`, `doc/`, …) inside `package`, at most
/// [`MAX_DOC_PAGES`]; sources are relative to `base`. Files past the cap, too large or not a docs
/// format are skipped and counted.
fn add_doc_folders(pages: &mut Pages, seen: &mut HashSet<String>, base: &Path, package: &Path) {
    let mut read_pages = 0;
    for folder in DOC_FOLDERS
        .iter()
        .map(|f| package.join(f))
        .filter(|f| f.is_dir())
    {
        let Ok((files, _)) = read::doc_files(&folder) else {
            continue;
        };
        for file in files {
            let source = relative(base, &file);
            match (read_pages < MAX_DOC_PAGES)
                .then(|| read_small(&file).zip(Format::of_path(&file)))
                .flatten()
            {
                Some((text, format)) => {
                    add_page(pages, seen, &source, &source, format, &text);
                    read_pages += 1;
                }
                None => pages.skipped.push(source),
            }
        }
    }
}

/// Adds the API reference page `render` makes of each `(module, file)` (d.ts, Python or Rust
/// sources), at most `cap` files; sources are relative to `base`. Files past the cap or too large
/// are skipped and counted; a file that documents nothing adds nothing.
fn add_reference_pages(
    pages: &mut Pages,
    seen: &mut HashSet<String>,
    base: &Path,
    files: &[(String, PathBuf)],
    cap: usize,
    render: fn(&str, &str) -> Option<String>,
) {
    for (i, (module, file)) in files.iter().enumerate() {
        let source = relative(base, file);
        let Some(text) = (i < cap).then(|| read_small(file)).flatten() else {
            pages.skipped.push(source);
            continue;
        };
        if let Some(markdown) = render(module, &text) {
            add_page(pages, seen, &source, &source, Format::Markdown, &markdown);
        }
    }
}

/// The package's README files (`README.md`, `readme.markdown`, `README`), best first.
fn readmes(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .filter(|p| {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().to_lowercase())
                .unwrap_or_default();
            let (stem, ext) = name.split_once('.').unwrap_or((name.as_str(), ""));
            stem == "readme" && matches!(ext, "" | "md" | "markdown" | "mdx" | "txt" | "rst")
        })
        .collect();
    found.sort();
    // One README: a package with README.md and README (a copy) reads the Markdown one.
    found.sort_by_key(|p| p.extension().is_none());
    found.truncate(1);
    found
}

/// The `.d.ts` (and `.d.mts` / `.d.cts`) files of a package, one per module: where the ESM and
/// CommonJS builds each ship a copy, the `.d.ts` one.
fn declaration_files(dir: &Path) -> Vec<PathBuf> {
    let mut by_module: HashMap<String, PathBuf> = HashMap::new();
    let mut stack = vec![(dir.to_path_buf(), 0usize)];
    while let Some((folder, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                if depth < 6 && !name.starts_with('.') && !PASSED_OVER.contains(&name.as_str()) {
                    stack.push((entry.path(), depth + 1));
                }
                continue;
            }
            let module = ["d.ts", "d.mts", "d.cts"].iter().find_map(|ext| {
                name.strip_suffix(&format!(".{ext}"))
                    .map(|stem| (stem, *ext))
            });
            let Some((stem, ext)) = module else { continue };
            let key = relative(dir, &folder.join(stem));
            let preferred = ext == "d.ts";
            let slot = by_module.entry(key).or_insert_with(|| entry.path());
            if preferred {
                *slot = entry.path();
            }
        }
    }
    let mut files: Vec<PathBuf> = by_module.into_values().collect();
    // The package's entry points first (closest to the root), then by path.
    files.sort_by_key(|p| (p.components().count(), p.clone()));
    files
}

/// The module a declaration file declares: `date-fns/format` for `format.d.ts`, `got` for
/// `dist/source/index.d.ts`.
fn module_name(package: &str, source: &str) -> String {
    let mut path = source;
    for ext in [".d.ts", ".d.mts", ".d.cts"] {
        path = path.strip_suffix(ext).unwrap_or(path);
    }
    let mut segments: Vec<&str> = path.split('/').collect();
    while segments.len() > 1
        && matches!(
            segments[0],
            "dist"
                | "lib"
                | "build"
                | "types"
                | "typings"
                | "out"
                | "esm"
                | "cjs"
                | "source"
                | "src"
        )
    {
        segments.remove(0);
    }
    if segments.last() == Some(&"index") {
        segments.pop();
    }
    segments.retain(|s| !s.is_empty());
    if segments.is_empty() {
        package.to_string()
    } else {
        format!("{package}/{}", segments.join("/"))
    }
}

/// A file's text, unless it is too large or not UTF-8.
fn read_small(path: &Path) -> Option<String> {
    let len = std::fs::metadata(path).ok()?.len();
    if len > MAX_FILE_BYTES {
        return None;
    }
    String::from_utf8(std::fs::read(path).ok()?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, path: &str, text: &str) {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn reads_the_readme_docs_and_documented_declarations_and_skips_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let pkg = dir.path();
        write(
            pkg,
            "package.json",
            r#"{"name": "widgets", "version": "1.2.3"}"#,
        );
        write(
            pkg,
            "README.md",
            "# widgets\n\n## Install\n\n`npm i widgets`\n\n## Refresh\n\nWidgets refresh every second.\n",
        );
        write(pkg, "README", "plain copy");
        write(
            pkg,
            "docs/colours.md",
            "# Colours\n\nWidgets are blue unless `tint` is set.\n",
        );
        write(
            pkg,
            "dist/index.d.ts",
            "/** Paints a widget. @param tint - the colour */\nexport declare function paint(tint: string): void;\n",
        );
        write(
            pkg,
            "dist/index.d.cts",
            "/** Paints a widget. @param tint - the colour */\nexport declare function paint(tint: string): void;\n",
        );
        write(
            pkg,
            "dist/locale/fr.d.ts",
            "/** Le français. */\nexport declare const fr: Locale;\n",
        );
        write(pkg, "dist/index.js", "module.exports = {}");
        write(
            pkg,
            "dist/huge.d.ts",
            &format!(
                "/** big */\nexport declare const big: {{}};\n{}",
                " ".repeat(MAX_FILE_BYTES as usize)
            ),
        );
        let pages = read_package(pkg, "widgets").unwrap();
        let sources: HashSet<&str> = pages.chunks.iter().map(|c| c.source.as_str()).collect();
        assert_eq!(
            sources,
            HashSet::from(["README.md", "docs/colours.md", "dist/index.d.ts"])
        );
        let paint = pages
            .chunks
            .iter()
            .find(|c| c.source == "dist/index.d.ts")
            .unwrap();
        assert_eq!(paint.section, "widgets > paint");
        assert_eq!(pages.skipped, ["dist/huge.d.ts"]);
        assert_eq!(module_name("date-fns", "format.d.ts"), "date-fns/format");
        assert_eq!(module_name("got", "dist/source/index.d.ts"), "got");
        assert_eq!(
            module_name("got", "dist/source/core/options.d.ts"),
            "got/core/options"
        );
    }

    #[test]
    fn a_package_with_nothing_to_read_says_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "index.js", "module.exports = 1");
        let error = read_package(dir.path(), "bare").unwrap_err().to_string();
        assert!(error.contains("devlens docs add"), "{error}");
    }
}
