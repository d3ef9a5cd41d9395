//! A real PostgreSQL with pgvector for the server-store tests, started by the test itself:
//! `initdb` and `pg_ctl` from the `pgserver` wheel that scripts/fetch-testdata unpacks into
//! `.testdata/postgres/pgserver/pginstall/bin` (or `DEVLENS_PG_BIN`), a fresh cluster in a temporary folder on a free
//! port, stopped when dropped. PostgreSQL refuses to run as root, so under root the cluster
//! belongs to `nobody`.
//!
//! Without the binaries a test prints a skip notice and passes, unless
//! `DEVLENS_REQUIRE_POSTGRES=1` (scripts/test sets it) makes that a failure.
//!
//! Shared by several crates' tests: `#[path = ".../devlens-search/tests/support/postgres.rs"]`.

#![allow(dead_code, unreachable_pub, clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A PostgreSQL cluster of this test.
pub struct TestPostgres {
    dir: tempfile::TempDir,
    bin: PathBuf,
    port: u16,
    as_nobody: bool,
}

fn bin_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("DEVLENS_PG_BIN").filter(|v| !v.is_empty()) {
        return PathBuf::from(dir);
    }
    let testdata = std::env::var_os("DEVLENS_TESTDATA")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.testdata"));
    testdata.join("postgres/pgserver/pginstall/bin")
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl TestPostgres {
    /// Starts a cluster, or returns `None` (with a notice) when the binaries are missing and
    /// the run does not require them.
    pub fn start() -> Option<Self> {
        let bin = bin_dir();
        if !bin.join("initdb").is_file() {
            let setup = format!(
                "PostgreSQL for the server-store tests is missing at {}: run scripts/fetch-testdata",
                bin.display()
            );
            assert!(
                std::env::var("DEVLENS_REQUIRE_POSTGRES").as_deref() != Ok("1"),
                "{setup}"
            );
            eprintln!("SKIPPED: {setup}");
            return None;
        }
        let dir = tempfile::Builder::new()
            .prefix("devlens-pg")
            .tempdir()
            .unwrap();
        let as_nobody = is_root();
        if as_nobody {
            // nobody:nogroup
            std::os::unix::fs::chown(dir.path(), Some(65534), Some(65534)).unwrap();
        }
        let pg = Self {
            dir,
            bin,
            port: free_port(),
            as_nobody,
        };
        let data = pg.data_dir();
        pg.run(
            "initdb",
            &[
                "-D",
                &data.display().to_string(),
                "-U",
                "devlens",
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-sync",
            ],
        );
        let options = format!(
            "-k {} -p {} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off \
             -c full_page_writes=off -c max_connections=200",
            pg.dir.path().display(),
            pg.port
        );
        pg.run(
            "pg_ctl",
            &[
                "-D",
                &data.display().to_string(),
                "-l",
                &pg.dir.path().join("server.log").display().to_string(),
                "-o",
                &options,
                "-w",
                "start",
            ],
        );
        Some(pg)
    }

    fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn command(&self, program: &str) -> Command {
        let path = self.bin.join(program);
        if self.as_nobody {
            let mut c = Command::new("runuser");
            c.args(["-u", "nobody", "--"]).arg(path);
            c
        } else {
            Command::new(path)
        }
    }

    fn run(&self, program: &str, args: &[&str]) {
        let out = self
            .command(program)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("cannot run {program}: {e}"));
        assert!(
            out.status.success(),
            "{program} failed: {}{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default()
        );
    }

    /// A new, empty database of this cluster; its URL.
    pub fn database(&self) -> String {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let name = format!(
            "devlens_test_{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        );
        self.sql("postgres", &format!("CREATE DATABASE {name}"));
        self.url(&name)
    }

    /// The URL of database `name`.
    pub fn url(&self, name: &str) -> String {
        format!("postgres://devlens@127.0.0.1:{}/{name}", self.port)
    }

    /// Runs `sql` in database `name` through psql; its output (unaligned, tuples only).
    pub fn sql(&self, database: &str, sql: &str) -> String {
        let out = Command::new(self.bin.join("psql"))
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                "devlens",
            ])
            .args(["-d", database, "-v", "ON_ERROR_STOP=1", "-At", "-c", sql])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "psql failed on {sql}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// The server's log so far (for failure messages).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default()
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for TestPostgres {
    fn drop(&mut self) {
        let data = self.data_dir().display().to_string();
        let _ = self
            .command("pg_ctl")
            .args(["-D", &data, "-m", "immediate", "stop"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}
