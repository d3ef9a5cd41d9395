//! The workspace as a tool uses it: paths that try to leave it are refused with nothing
//! written, and edits either apply whole or change nothing.

#![allow(clippy::unwrap_used)] // test code: a panic is a failed assertion

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use devlens_workspace::{Edit, SearchQuery, Workspace, WorkspaceError, content_version};

struct Fixture {
    dir: tempfile::TempDir,
    ws: Workspace,
}

impl Fixture {
    fn new(read_only: bool) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("project");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        std::fs::create_dir_all(dir.path().join("outside")).unwrap();
        std::fs::write(
            root.join("src/App.jsx"),
            "export function App() {\n  return <h1>Hello</h1>;\n}\n",
        )
        .unwrap();
        let ws = Workspace::open(&root, &dir.path().join("data"), read_only).unwrap();
        Self { dir, ws }
    }

    fn outside(&self) -> std::path::PathBuf {
        self.dir.path().join("outside")
    }

    fn files_outside(&self) -> usize {
        std::fs::read_dir(self.outside()).unwrap().count()
    }
}

fn replace(old: &str, new: &str) -> Edit {
    Edit::Replace {
        old: old.into(),
        new: new.into(),
        all: false,
    }
}

#[test]
fn escapes_are_refused_and_nothing_is_written_outside() {
    let f = Fixture::new(false);
    let root = f.ws.root().to_path_buf();
    std::os::unix::fs::symlink(f.outside(), root.join("out-link")).unwrap();
    // Dangling links: to a file and a folder that do not exist yet, absolute and relative.
    std::os::unix::fs::symlink(f.outside().join("target.txt"), root.join("file-link")).unwrap();
    std::os::unix::fs::symlink(f.outside().join("new-dir"), root.join("dir-link")).unwrap();
    std::os::unix::fs::symlink("../outside/rel-dir", root.join("rel-link")).unwrap();
    std::fs::create_dir_all(root.join("nested")).unwrap();
    std::os::unix::fs::symlink(f.dir.path(), root.join("nested/up")).unwrap();
    let absolute = f.outside().join("abs.txt").display().to_string();
    let long = format!("{}x.txt", "deep/".repeat(1000));
    for path in [
        "../outside/dotdot.txt",
        "src/../../outside/dotdot2.txt",
        absolute.as_str(),
        "out-link/via-link.txt",
        "file-link",
        "dir-link/x.txt",
        "rel-link/deeper/x.txt",
        "nested/up/outside/parent-link.txt",
        "missing/../../outside/x.txt",
        "a\0b.txt",
        "..\\outside\\win.txt",
        long.as_str(),
    ] {
        let err = f.ws.write_file(path, "pwned").unwrap_err();
        assert!(
            matches!(err, WorkspaceError::Refused { .. }),
            "{path:?}: {err}"
        );
        let message = err.to_string();
        assert!(
            message.contains("may be read in the workspace"),
            "{message}"
        );
        assert!(
            f.ws.edit_file(path, &replace("a", "b"), None).is_err(),
            "{path:?}"
        );
    }
    assert_eq!(f.files_outside(), 0, "nothing was written outside");
    assert!(!f.dir.path().join("outside/target.txt").exists());
    assert!(
        !f.outside().join("new-dir").exists(),
        "no folder was created outside"
    );
    // Reading out is refused too.
    assert!(f.ws.read_file("../outside", None, None).is_err());
    assert!(f.ws.read_file("/etc/passwd", None, None).is_err());
    // .git is readable but never written.
    let hook =
        f.ws.write_file(".git/hooks/pre-commit", "#!/bin/sh\nrm -rf ~\n");
    assert!(hook.unwrap_err().to_string().contains(".git/"));
    assert!(!root.join(".git/hooks/pre-commit").exists());
}

#[test]
fn a_read_only_workspace_reads_but_never_writes() {
    let f = Fixture::new(true);
    assert!(f.ws.read_file("src/App.jsx", None, None).is_ok());
    for err in [
        f.ws.write_file("src/new.js", "x").unwrap_err(),
        f.ws.edit_file("src/App.jsx", &replace("Hello", "Bye"), None)
            .unwrap_err(),
    ] {
        assert!(err.to_string().contains("--read-only-workspace"), "{err}");
    }
    assert!(!f.ws.root().join("src/new.js").exists());
    // The artifacts folder stays writable (screenshots); the rest of the data dir never is.
    let shot = f
        .dir
        .path()
        .join("data/artifacts/shot.txt")
        .display()
        .to_string();
    assert!(f.ws.write_file(&shot, "x").is_ok());
    let config = f.dir.path().join("data/config.toml").display().to_string();
    assert!(f.ws.write_file(&config, "x").is_err());
}

#[test]
fn edits_apply_once_or_change_nothing() {
    let f = Fixture::new(false);
    let path = "src/App.jsx";
    let original = std::fs::read_to_string(f.ws.root().join(path)).unwrap();
    let read = f.ws.read_file(path, None, None).unwrap();

    let none =
        f.ws.edit_file(path, &replace("Goodbye", "Hi"), None)
            .unwrap_err();
    assert!(none.to_string().contains("was not found"), "{none}");
    std::fs::write(f.ws.root().join("src/twice.js"), "let a = 1;\nlet b = 1;\n").unwrap();
    let twice =
        f.ws.edit_file("src/twice.js", &replace("= 1", "= 2"), None)
            .unwrap_err();
    assert!(twice.to_string().contains("occurs 2 times"), "{twice}");
    assert_eq!(
        std::fs::read_to_string(f.ws.root().join(path)).unwrap(),
        original
    );

    let changed =
        f.ws.edit_file(
            path,
            &replace("Hello", "Hello, devlens"),
            Some(&read.version),
        )
        .unwrap();
    assert!(
        changed.diff.contains("+  return <h1>Hello, devlens</h1>;"),
        "{}",
        changed.diff
    );
    assert_eq!((changed.lines_added, changed.lines_removed), (1, 1));

    // Someone else changes the file: an edit based on what devlens read is refused.
    std::fs::write(f.ws.root().join(path), "export const App = () => null;\n").unwrap();
    let stale =
        f.ws.edit_file(path, &replace("devlens", "world"), None)
            .unwrap_err();
    assert!(matches!(stale, WorkspaceError::Changed { .. }), "{stale}");
    assert!(f.ws.write_file(path, "overwrite").is_err());
    // Reading it again makes it editable again.
    f.ws.read_file(path, None, None).unwrap();
    f.ws.edit_file(path, &replace("null", "<main />"), None)
        .unwrap();
}

#[test]
fn concurrent_writers_never_tear_a_file() {
    let f = Arc::new(Fixture::new(false));
    let big = |c: char| format!("{}\n", c.to_string().repeat(200_000));
    let versions: Vec<String> = ['a', 'b', 'c', 'd']
        .into_iter()
        .map(|c| content_version(big(c).as_bytes()))
        .collect();
    let landed = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for c in ['a', 'b', 'c', 'd'] {
            let f = Arc::clone(&f);
            let content = big(c);
            let landed = &landed;
            scope.spawn(move || {
                for _ in 0..5 {
                    // A writer may find the file changed by another since it last wrote: that
                    // refusal is the point, and the only way a write may fail; what lands is
                    // whole.
                    match f.ws.write_file("src/big.txt", &content) {
                        Ok(change) => {
                            assert_eq!(
                                (change.path.as_str(), change.bytes),
                                ("src/big.txt", 200_001)
                            );
                            landed.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(err) => {
                            assert!(matches!(err, WorkspaceError::Changed { .. }), "{err}");
                        }
                    }
                }
            });
        }
        let f = Arc::clone(&f);
        let versions = &versions;
        scope.spawn(move || {
            for _ in 0..50 {
                // Read as a tool reads: before the first write lands the file does not exist;
                // after, every read is one writer's whole content.
                match f.ws.read_file("src/big.txt", None, None) {
                    Ok(read) => {
                        assert!(versions.contains(&read.version), "a torn file");
                        assert_eq!(read.total_lines, 1);
                    }
                    Err(err) => {
                        assert!(matches!(err, WorkspaceError::NotFound { .. }), "{err}");
                    }
                }
                if let Ok(text) = std::fs::read_to_string(f.ws.root().join("src/big.txt")) {
                    assert!(
                        versions.contains(&content_version(text.as_bytes())),
                        "a torn file"
                    );
                }
            }
        });
    });
    assert!(landed.into_inner() >= 1, "no write landed");
    let last = f.ws.read_file("src/big.txt", None, None).unwrap();
    assert!(versions.contains(&last.version), "the file ends whole");
    let leftovers: Vec<_> = std::fs::read_dir(f.ws.root().join("src"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left behind");
}

#[test]
fn reads_through_symlinks_out_of_the_workspace_are_refused() {
    let f = Fixture::new(false);
    let root = f.ws.root().to_path_buf();
    let secret = f.outside().join("secret.txt");
    std::fs::write(&secret, "TOKEN=outside-the-workspace\n").unwrap();
    std::os::unix::fs::symlink(&secret, root.join("secret-link")).unwrap();
    std::os::unix::fs::symlink(f.outside(), root.join("out-link")).unwrap();
    std::fs::create_dir_all(root.join("nested")).unwrap();
    std::os::unix::fs::symlink(f.dir.path(), root.join("nested/up")).unwrap();
    std::os::unix::fs::symlink("../../outside/secret.txt", root.join("src/rel-link")).unwrap();
    for path in [
        "secret-link",
        "out-link/secret.txt",
        "nested/up/outside/secret.txt",
        "src/rel-link",
    ] {
        let err = f.ws.read_file(path, None, None).unwrap_err();
        assert!(
            matches!(err, WorkspaceError::Refused { .. }),
            "{path:?}: {err}"
        );
        assert!(!err.to_string().contains("TOKEN="), "{err}");
    }
    // Listing and searching do not follow the links out either.
    let found =
        f.ws.search_files(
            None,
            &SearchQuery {
                pattern: "outside-the-workspace".into(),
                literal: true,
                max_matches: 50,
                ..SearchQuery::default()
            },
        )
        .unwrap();
    assert_eq!(found.matches, 0, "{found:?}");
    for dir in ["out-link", "nested/up"] {
        assert!(
            f.ws.list_files(Some(dir), &[], None, None).is_err(),
            "{dir}"
        );
    }
}

#[test]
fn big_and_binary_files() {
    let f = Fixture::new(false);
    let lines: String = (1..=100_000).map(|i| format!("line {i}\n")).collect();
    std::fs::write(f.ws.root().join("big.log"), &lines).unwrap();
    let head = f.ws.read_file("big.log", None, None).unwrap();
    assert_eq!((head.lines, head.next_line), (2000, Some(2001)));
    let tail = f.ws.read_file("big.log", Some(99_999), Some(10)).unwrap();
    assert_eq!(tail.text, "line 99999\nline 100000\n");
    let edited =
        f.ws.edit_file(
            "big.log",
            &replace("line 50000\n", "line fifty thousand\n"),
            None,
        )
        .unwrap();
    assert_eq!(edited.replacements, Some(1));

    std::fs::write(f.ws.root().join("logo.png"), b"\x89PNG\r\n\x1a\n\0\0\0IHDR").unwrap();
    let err =
        f.ws.read_file("logo.png", None, None)
            .unwrap_err()
            .to_string();
    assert!(err.contains("PNG image"), "{err}");
    assert!(
        f.ws.edit_file("logo.png", &replace("IHDR", "XXXX"), None)
            .is_err()
    );
    let too_big = "x".repeat(11 * 1024 * 1024);
    assert!(f.ws.write_file("huge.txt", &too_big).is_err());
    assert!(!f.ws.root().join("huge.txt").exists());
}

#[test]
fn listing_and_searching_stay_inside() {
    let f = Fixture::new(false);
    let listed =
        f.ws.list_files(None, &["*.jsx".into()], None, None)
            .unwrap();
    assert_eq!(listed.files[0].path, "src/App.jsx");
    let found =
        f.ws.search_files(
            Some("src"),
            &SearchQuery {
                pattern: "<h1>".into(),
                literal: true,
                max_matches: 10,
                ..SearchQuery::default()
            },
        )
        .unwrap();
    assert_eq!(found.files[0].lines[0].line, 2);
    assert!(
        f.ws.list_files(Some("../outside"), &[], None, None)
            .is_err()
    );
    assert!(
        f.ws.search_files(Some("/"), &SearchQuery::default())
            .is_err(),
        "the root of the machine is not searched"
    );
    assert!(Path::new(f.ws.root()).is_absolute());
}

/// Artifacts (screenshots, saved bodies, traces) are written by [`write_confined`] and
/// [`AtomicFile`] after their path passed confinement. A symlink swapped in between the check and
/// the write — at the file's name or in place of its folder — must not carry the write outside.
mod swapped_after_the_check {
    use super::*;
    use devlens_workspace::Access;
    use devlens_workspace::write::{AtomicFile, write_confined};
    use std::io::Write as _;

    #[test]
    fn a_symlink_at_the_destination_is_replaced_not_followed() {
        let f = Fixture::new(false);
        let secret = f.outside().join("secret.txt");
        std::fs::write(&secret, "do not touch").unwrap();
        std::fs::create_dir_all(f.ws.root().join("shots")).unwrap();
        for (name, target) in [
            ("a.png", secret.clone()),
            // Dangling: the write must not create the file it points to either.
            ("b.png", f.outside().join("created.txt")),
        ] {
            let resolved =
                f.ws.resolve(&format!("shots/{name}"), Access::Write)
                    .unwrap();
            // The attacker's move, after the check and before the write.
            std::os::unix::fs::symlink(&target, &resolved.path).unwrap();
            write_confined(&resolved.path, Some(f.ws.places()), b"PNG").unwrap();
            let meta = std::fs::symlink_metadata(&resolved.path).unwrap();
            assert!(meta.is_file(), "{name}: the link itself was replaced");
            assert_eq!(std::fs::read(&resolved.path).unwrap(), b"PNG");
        }
        assert_eq!(std::fs::read_to_string(&secret).unwrap(), "do not touch");
        assert!(!f.outside().join("created.txt").exists());
        assert_eq!(f.files_outside(), 1, "only the secret is outside");
        assert_eq!(
            std::fs::read_dir(f.ws.root().join("shots"))
                .unwrap()
                .count(),
            2,
            "no temporary file is left behind"
        );
    }

    #[test]
    fn a_folder_swapped_for_a_symlink_is_refused() {
        let f = Fixture::new(false);
        let shots = f.ws.root().join("shots");
        std::fs::create_dir_all(&shots).unwrap();
        let resolved = f.ws.resolve("shots/a.png", Access::Write).unwrap();
        std::fs::remove_dir(&shots).unwrap();
        std::os::unix::fs::symlink(f.outside(), &shots).unwrap();
        let err = write_confined(&resolved.path, Some(f.ws.places()), b"PNG").unwrap_err();
        assert!(matches!(err, WorkspaceError::Refused { .. }), "{err}");
        let message = err.to_string();
        assert!(message.contains("was not written"), "{message}");
        assert!(
            message.contains("Files may be read in the workspace"),
            "{message}"
        );
        assert_eq!(
            f.files_outside(),
            0,
            "nothing was written outside: {message}"
        );

        // Into the artifacts folder, the same.
        let artifacts = f.ws.places().artifacts().to_path_buf();
        std::fs::create_dir_all(artifacts.join("traces")).unwrap();
        let trace = artifacts.join("traces/t.json");
        let resolved =
            f.ws.resolve(&trace.display().to_string(), Access::Write)
                .unwrap();
        std::fs::remove_dir(artifacts.join("traces")).unwrap();
        std::os::unix::fs::symlink(f.outside(), artifacts.join("traces")).unwrap();
        assert!(write_confined(&resolved.path, Some(f.ws.places()), b"{}").is_err());
        assert_eq!(f.files_outside(), 0);
    }

    /// Linux: the folder is held open from the start, so what happens to its path afterwards
    /// cannot redirect the write; where the folder itself went is checked before the rename.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_streamed_file_stays_in_the_folder_it_opened() {
        let f = Fixture::new(false);
        let shots = f.ws.root().join("shots");
        std::fs::create_dir_all(&shots).unwrap();

        // The folder's path now leads outside; the open folder is still the workspace's.
        let mut file = AtomicFile::create(&shots.join("trace.json"), Some(f.ws.places())).unwrap();
        file.write_all(b"[1,").unwrap();
        std::fs::rename(&shots, f.ws.root().join("shots-moved")).unwrap();
        std::os::unix::fs::symlink(f.outside(), &shots).unwrap();
        file.write_all(b"2]").unwrap();
        file.commit().unwrap();
        assert_eq!(f.files_outside(), 0);
        assert_eq!(
            std::fs::read(f.ws.root().join("shots-moved/trace.json")).unwrap(),
            b"[1,2]"
        );

        // The open folder itself moved outside: refused, and its temporary file removed.
        std::fs::create_dir_all(f.ws.root().join("heap")).unwrap();
        let mut file = AtomicFile::create(
            &f.ws.root().join("heap/h.heapsnapshot"),
            Some(f.ws.places()),
        )
        .unwrap();
        file.write_all(b"{}").unwrap();
        std::fs::rename(f.ws.root().join("heap"), f.outside().join("heap")).unwrap();
        let err = file.commit().unwrap_err().to_string();
        assert!(err.contains("was not written"), "{err}");
        assert_eq!(
            std::fs::read_dir(f.outside().join("heap")).unwrap().count(),
            0,
            "no file was left in the folder that moved outside"
        );
    }

    #[test]
    fn a_file_dropped_before_commit_leaves_the_destination_as_it_was() {
        let f = Fixture::new(false);
        let path = f.ws.root().join("src/App.jsx");
        let before = std::fs::read(&path).unwrap();
        let mut file = AtomicFile::create(&path, Some(f.ws.places())).unwrap();
        file.write_all(b"half").unwrap();
        drop(file);
        assert_eq!(std::fs::read(&path).unwrap(), before);
        assert_eq!(
            std::fs::read_dir(f.ws.root().join("src")).unwrap().count(),
            1,
            "the temporary file is gone"
        );
    }
}
