//! `devlens.toml`: optional settings, layered under command-line flags and environment variables.
//!
//! Lookup order for the file: `--config`, `DEVLENS_CONFIG`, `./devlens.toml` (a project checkout
//! can carry its own), then `<data dir>/devlens.toml`. A missing file means defaults; a broken one
//! is an error that names the file, because silently ignoring a typo is worse.
//!
//! A `./devlens.toml` may come with a repository someone else wrote: until `devlens trust`
//! (crate::trust), it sets only harmless keys — see [`ConfigFile::strip_untrusted`].

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::trust::{ConfigTrust, TrustStore};
use crate::{CoreError, DataDir};

/// What the command line (or a test) overrides.
#[derive(Debug, Clone, Default)]
pub struct ConfigOverrides {
    pub data_dir: Option<PathBuf>,
    pub config_file: Option<PathBuf>,
}

/// Settings of `devlens serve`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct ServerSettings {
    /// Address of the HTTP server (MCP at `/mcp`, REST under `/api/`), e.g. `127.0.0.1:7878`.
    pub http: Option<String>,
    /// Extra `Host` values accepted besides the loopback names (DNS-rebinding protection).
    pub allowed_hosts: Vec<String>,
    /// Browser origins allowed to call the HTTP server, e.g. `chrome-extension://<id>`.
    pub allowed_origins: Vec<String>,
    /// Require a bearer token (`devlens token create`) on a loopback address too; beyond
    /// loopback one is always required.
    pub require_token: bool,
    /// Requests a minute per token (per client address without one) [default: 600]; 0 turns
    /// the limit off.
    pub rate_limit_per_minute: Option<u32>,
    /// The largest request body accepted, in MB [default: 32].
    pub max_body_mb: Option<u64>,
    /// How long a plain request may run, in seconds [default: 300]; event streams and MCP are
    /// not cut.
    pub request_timeout_secs: Option<u64>,
}

/// `[embedding]`: which embedding provider and model semantic search uses.
///
/// Environment variables (`EMBEDDING_PROVIDER`, `OPENAI_EMBED_MODEL`, …) override these; API keys
/// are read from the environment only, never from this file, so it can be committed.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct EmbeddingSettings {
    /// `local` (default), `openai`, `gemini`, `ollama`, or `auto`.
    pub provider: Option<String>,
    /// Model name for the chosen provider.
    pub model: Option<String>,
    /// Base URL of an OpenAI-compatible or Ollama server.
    pub base_url: Option<String>,
    /// Texts per request (remote) or per forward pass (local).
    pub batch_size: Option<usize>,
    /// Output dimensions where the provider can reduce them (Gemini `outputDimensionality`).
    pub dimensions: Option<usize>,
    /// Folder of the local model (config.json, tokenizer.json, model.safetensors).
    pub model_dir: Option<PathBuf>,
    /// The local model's engine: `auto` (default: ONNX Runtime when its library and an ONNX
    /// export of the model are found, else candle), `candle` or `onnx`.
    pub local_engine: Option<String>,
    /// ONNX Runtime's shared library (`libonnxruntime.so`); env `ORT_DYLIB_PATH`.
    pub onnxruntime: Option<PathBuf>,
    /// The ONNX file to run: a path, or a file name in `<model dir>/onnx/` [default: the first of
    /// model_qint8.onnx, model_qint8_avx512_vnni.onnx, model_qint8_avx512.onnx, model.onnx].
    pub onnx_model: Option<String>,
    /// Folder of a cross-encoder (BERT for sequence classification, e.g.
    /// cross-encoder/ms-marco-MiniLM-L-6-v2) that reranks the best API search candidates by
    /// reading the question and each endpoint together; env `DEVLENS_RERANKER_DIR`. Unset: no
    /// reranking.
    pub reranker_dir: Option<PathBuf>,
    /// How many of the best candidates the reranker reads [default: 20].
    pub rerank_candidates: Option<usize>,
}

/// `[docs]`: library docs.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct DocsSettings {
    /// A Redis server (`redis://host:port/db`) holding a query-answer cache shared by several
    /// devlens servers (`rediss://` for TLS). Unset: the in-process cache only.
    pub redis_url: Option<String>,
    /// A PEM file of the CA that signed the Redis server's certificate, trusted besides the
    /// system's roots (a private CA for `rediss://`).
    pub redis_ca_file: Option<PathBuf>,
    /// Embed each prose chunk besides its section [default: true]: better answers where they sit
    /// in a later paragraph, at about 4x the ingest time. `false` embeds sections only.
    pub passage_vectors: Option<bool>,
    /// Folders besides the workspace that docs may be added from by a caller over HTTP (the
    /// panel, the REST API), relative to this file. The CLI reads any folder its user names.
    pub roots: Vec<PathBuf>,
}

impl DocsSettings {
    /// Whether an ingest embeds prose chunks besides their sections (`passage_vectors`).
    pub fn embeds_passages(&self) -> bool {
        self.passage_vectors.unwrap_or(true)
    }
}

/// `[kb]`: the knowledge base's retrieval settings. Every one of them
/// can be overridden per call.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct KbSettings {
    /// `semantic` (default), `keyword` or `hybrid`.
    pub search_mode: Option<String>,
    /// Semantic matches scoring below this cosine similarity are left out [default: calibrated for
    /// the embedding model in use].
    pub similarity_threshold: Option<f32>,
    /// How many solutions a search returns [default: 5].
    pub top_k: Option<usize>,
    /// `ask` generates an answer with the `[llm]` endpoint unless told not to [default: false].
    pub auto_generate_answer: Option<bool>,
    /// Show relevance scores in text output [default: true].
    pub show_similarity_scores: Option<bool>,
}

/// `[llm]`: an OpenAI-compatible chat-completions endpoint (Ollama, llama.cpp server, vLLM,
/// OpenAI) that writes answers from retrieved sources. The API key comes from the environment
/// only (`DEVLENS_LLM_API_KEY`, or the variable named by `api_key_env`).
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct LlmSettings {
    /// Base URL up to and including `/v1`, e.g. `http://127.0.0.1:11434/v1` for Ollama.
    pub base_url: Option<String>,
    /// Model name, e.g. `llama3.2` or `gpt-4o-mini`.
    pub model: Option<String>,
    /// Environment variable that holds the API key [default: DEVLENS_LLM_API_KEY].
    pub api_key_env: Option<String>,
    /// Upper bound on the answer's length in tokens [default: 800].
    pub max_tokens: Option<u32>,
    /// Seconds to wait for an answer [default: 120].
    pub timeout_secs: Option<u64>,
}

/// `[search]`: what follows a search's first stage (retrieval). See [`RerankChoice`].
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct SearchSettings {
    /// The second stage of an API search: `cross-encoder`, `sampling`, `llm` or `none`
    /// [default: `cross-encoder` when `[embedding] reranker_dir` names one, else `none`].
    pub rerank: Option<RerankChoice>,
    /// Seconds a language model (`sampling`, `llm`) may take to order the candidates before the
    /// search answers in its first-stage order [default: 15].
    pub rerank_timeout_secs: Option<u64>,
}

/// Who orders the best candidates of a search (`[search] rerank`). One second stage at a time:
/// a language model reads the candidates as the first stage ranked them.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum RerankChoice {
    /// The cross-encoder in `[embedding] reranker_dir`, on this machine.
    CrossEncoder,
    /// The MCP client's model, through `sampling/createMessage` (MCP callers whose client
    /// declared the `sampling` capability; others get the first stage with a notice).
    Sampling,
    /// The `[llm]` endpoint.
    Llm,
    /// No second stage.
    None,
}

impl RerankChoice {
    /// The name `[search] rerank` takes.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::CrossEncoder => "cross-encoder",
            Self::Sampling => "sampling",
            Self::Llm => "llm",
            Self::None => "none",
        }
    }

    /// A name as `[search] rerank` takes it (`--rerank` on the command line).
    pub fn parse(name: &str) -> Result<Self, String> {
        match name.trim() {
            "cross-encoder" => Ok(Self::CrossEncoder),
            "sampling" => Ok(Self::Sampling),
            "llm" => Ok(Self::Llm),
            "none" => Ok(Self::None),
            other => Err(format!(
                "unknown rerank `{other}`: use cross-encoder, sampling, llm or none"
            )),
        }
    }

    /// Whether a language model outside this process orders the candidates (the question and
    /// the candidates' lines leave the process).
    pub fn asks_a_model(self) -> bool {
        matches!(self, Self::Sampling | Self::Llm)
    }
}

/// Seconds a language model may take to order candidates when `[search] rerank_timeout_secs`
/// is not set.
pub const DEFAULT_RERANK_TIMEOUT_SECS: u64 = 15;

impl SearchSettings {
    /// How long a language model may take to order candidates.
    pub fn rerank_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs(
            self.rerank_timeout_secs
                .unwrap_or(DEFAULT_RERANK_TIMEOUT_SECS)
                .max(1),
        )
    }
}

/// `[store]`: where the knowledge base, library docs and API indexes live. Unset: the embedded
/// store in the data dir (SQLite files and index folders). A PostgreSQL URL (with the pgvector
/// extension): a team server's database, which several devlens servers can share.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct StoreSettings {
    /// `postgres://USER:PASSWORD@HOST:PORT/DATABASE` [default: `DEVLENS_DATABASE_URL`, which
    /// also overrides this; keep passwords there rather than in the file].
    pub url: Option<String>,
}

/// `[browser]`: which Chrome devlens launches. Tool calls cannot name an executable or a
/// profile folder of their own (a page the agent reads could talk it into running anything):
/// these come from here, `CHROME_PATH`, or the command line; a tool may pick only what
/// `allowed_chrome_paths` / `allowed_user_data_dirs` list.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct BrowserSettings {
    /// The Chrome/Chromium executable to launch [default: `CHROME_PATH`, then `PATH` and the
    /// usual install locations].
    pub chrome_path: Option<PathBuf>,
    /// A profile folder for launched browsers [default: a fresh temporary one each launch].
    pub user_data_dir: Option<PathBuf>,
    /// Executables a `chrome` tool call may name besides the default.
    pub allowed_chrome_paths: Vec<PathBuf>,
    /// Profile folders a `chrome` tool call may name.
    pub allowed_user_data_dirs: Vec<PathBuf>,
    /// Run Chrome without its sandbox even when not root.
    pub no_sandbox: Option<bool>,
}

/// `[network]`: which private targets devlens may fetch from (the outbound guard,
/// crate::outbound). Public addresses need no entry; link-local and cloud metadata addresses
/// are refused whatever is listed.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct NetworkSettings {
    /// Hosts devlens may fetch from although they are on this machine or a private network:
    /// `"localhost:3000"`, `"10.0.0.5"`, `"http://docs.intranet:8080"` (env
    /// `DEVLENS_NETWORK_ALLOW`, comma-separated, adds to it). A project's `base_url` and a
    /// configured embedding or LLM server are allowed without an entry.
    pub allow: Vec<String>,
}

/// `[workspace]`: the project folder tools read and write, when `serve --workspace` does not
/// name one.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct WorkspaceSettings {
    /// The folder (relative to this file).
    pub root: Option<PathBuf>,
    /// Let tools read it but not change it.
    pub read_only: Option<bool>,
}

/// A project declared in `devlens.toml`.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ProjectEntry {
    pub name: String,
    /// OpenAPI/Swagger spec: a path (relative to the config file) or an http(s) URL.
    pub spec: Option<String>,
    /// Where the API runs (`http://127.0.0.1:8080/api`): calls go there, and live traffic to
    /// it is checked against the spec. Default: the spec's first server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// How calls authenticate; credentials are read from environment variables only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<ProjectAuth>,
}

/// A project's credentials for `call_endpoint`: the names of the environment variables that
/// hold them (never the secrets themselves, so the config file can be committed).
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ProjectAuth {
    /// `bearer`, `api-key` or `basic`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The variable holding the token (bearer) or the key (api-key). Default:
    /// `DEVLENS_<PROJECT>_TOKEN` / `DEVLENS_<PROJECT>_API_KEY`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_env: Option<String>,
    /// api-key: the header, query or cookie name. Default: the spec's apiKey scheme, else
    /// `X-API-Key`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// api-key: `header` (default), `query` or `cookie`.
    #[serde(default, rename = "in", skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    /// basic: the variables of the user name and password. Default:
    /// `DEVLENS_<PROJECT>_USERNAME` / `DEVLENS_<PROJECT>_PASSWORD`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username_env: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password_env: Option<String>,
}

/// The contents of `devlens.toml`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct ConfigFile {
    /// The project API tools use when none is named.
    pub active_project: Option<String>,
    /// An extra projects file in the `projects.json` format (relative to this file).
    pub projects_file: Option<PathBuf>,
    pub projects: Vec<ProjectEntry>,
    pub server: ServerSettings,
    pub embedding: EmbeddingSettings,
    pub docs: DocsSettings,
    pub kb: KbSettings,
    pub llm: LlmSettings,
    pub search: SearchSettings,
    pub browser: BrowserSettings,
    pub store: StoreSettings,
    pub network: NetworkSettings,
    pub workspace: WorkspaceSettings,
}

impl ConfigFile {
    /// Drops what an untrusted file may not set and says what was dropped, as `[table] key`.
    ///
    /// Kept: projects (name, spec inside the file's folder, base_url), the active project,
    /// `[kb]`, `[docs] passage_vectors`, `[search] rerank = "none"` and the rerank timeout, and
    /// the embedding model's name and batching — what changes answers, not what runs or where
    /// data and credentials go. Dropped: a `[search] rerank` naming a model (it would send
    /// questions to the `[llm]` endpoint or the MCP client's model), executables and
    /// libraries (`[browser]`, `[embedding]` `onnxruntime`, `onnx_model`, `model_dir`,
    /// `reranker_dir`), credentials and their targets (projects' `auth`, `[embedding]`
    /// `provider` and `base_url`, `[llm]`, `[store] url`, `[docs]` `redis_url` and
    /// `redis_ca_file`), network and access (`[server]`, `[network]`, `[workspace]`, `[docs]
    /// roots`), and spec
    /// or projects-file paths that lead out of the file's folder `base`. A project such a file
    /// declares is marked so that no credential is ever sent for it
    /// (crate::projects::Project::trusted).
    pub fn strip_untrusted(&mut self, base: &Path) -> Vec<String> {
        let mut ignored = Vec::new();
        let mut drop = |set: bool, key: &str| {
            if set {
                ignored.push(key.to_string());
            }
        };
        drop(self.server != ServerSettings::default(), "[server]");
        drop(self.network != NetworkSettings::default(), "[network]");
        drop(
            self.workspace != WorkspaceSettings::default(),
            "[workspace]",
        );
        drop(self.browser != BrowserSettings::default(), "[browser]");
        drop(self.llm != LlmSettings::default(), "[llm]");
        drop(self.store.url.is_some(), "[store] url");
        drop(self.docs.redis_url.is_some(), "[docs] redis_url");
        drop(self.docs.redis_ca_file.is_some(), "[docs] redis_ca_file");
        drop(!self.docs.roots.is_empty(), "[docs] roots");
        let e = &self.embedding;
        drop(e.provider.is_some(), "[embedding] provider");
        drop(e.base_url.is_some(), "[embedding] base_url");
        drop(e.model_dir.is_some(), "[embedding] model_dir");
        drop(e.onnxruntime.is_some(), "[embedding] onnxruntime");
        drop(e.onnx_model.is_some(), "[embedding] onnx_model");
        drop(e.reranker_dir.is_some(), "[embedding] reranker_dir");
        let rerank = self
            .search
            .rerank
            .filter(|choice| *choice != RerankChoice::None);
        drop(rerank.is_some(), "[search] rerank");
        for project in &self.projects {
            drop(
                project.auth.is_some(),
                &format!("[[projects]] auth of {}", project.name),
            );
            let outside = project
                .spec
                .as_deref()
                .is_some_and(|spec| !stays_in_folder(base, spec));
            drop(
                outside,
                &format!(
                    "[[projects]] spec of {} (outside the file's folder)",
                    project.name
                ),
            );
        }
        let projects_file_outside = self
            .projects_file
            .as_deref()
            .is_some_and(|file| !stays_inside(base, file));
        drop(
            projects_file_outside,
            "projects_file (outside the file's folder)",
        );

        self.server = ServerSettings::default();
        self.network = NetworkSettings::default();
        self.workspace = WorkspaceSettings::default();
        self.browser = BrowserSettings::default();
        self.llm = LlmSettings::default();
        self.store.url = None;
        self.docs.redis_url = None;
        self.docs.redis_ca_file = None;
        self.docs.roots.clear();
        let e = &mut self.embedding;
        e.provider = None;
        e.base_url = None;
        e.model_dir = None;
        e.onnxruntime = None;
        e.onnx_model = None;
        e.reranker_dir = None;
        if rerank.is_some() {
            self.search.rerank = None;
        }
        for project in &mut self.projects {
            project.auth = None;
            if project
                .spec
                .as_deref()
                .is_some_and(|spec| !stays_in_folder(base, spec))
            {
                project.spec = None;
            }
        }
        if projects_file_outside {
            self.projects_file = None;
        }
        ignored
    }
}

impl ConfigFile {
    /// Checks that `[search] rerank` names a second stage that can run: the cross-encoder needs
    /// its folder, `llm` the `[llm]` endpoint, and a language model is not chosen while a
    /// cross-encoder folder is configured too (one second stage at a time). `env` reads
    /// `DEVLENS_RERANKER_DIR`, `DEVLENS_LLM_BASE_URL` and `DEVLENS_LLM_MODEL`, which stand in for
    /// the file's keys.
    pub fn check_second_stage(&self, env: &dyn Fn(&str) -> Option<String>) -> Result<(), String> {
        let set = |name: &str| env(name).is_some_and(|v| !v.trim().is_empty());
        let folder = self.embedding.reranker_dir.is_some() || set("DEVLENS_RERANKER_DIR");
        let Some(choice) = self.search.rerank else {
            return Ok(());
        };
        let named = choice.as_str();
        match choice {
            RerankChoice::CrossEncoder if !folder => Err(
                "[search] rerank = \"cross-encoder\" needs a cross-encoder: set [embedding] \
                 reranker_dir (or DEVLENS_RERANKER_DIR) to its folder"
                    .into(),
            ),
            RerankChoice::Sampling | RerankChoice::Llm if folder => Err(format!(
                "[search] rerank = \"{named}\" and [embedding] reranker_dir (or \
                 DEVLENS_RERANKER_DIR) both choose the second stage: remove reranker_dir, or set \
                 rerank = \"cross-encoder\""
            )),
            RerankChoice::Llm => {
                let base = self.llm.base_url.is_some() || set("DEVLENS_LLM_BASE_URL");
                let model = self.llm.model.is_some() || set("DEVLENS_LLM_MODEL");
                if base && model {
                    Ok(())
                } else {
                    Err(
                        "[search] rerank = \"llm\" needs the [llm] endpoint: set [llm] base_url \
                         and model (or DEVLENS_LLM_BASE_URL and DEVLENS_LLM_MODEL), e.g. \
                         http://127.0.0.1:11434/v1 and llama3.2 for Ollama"
                            .into(),
                    )
                }
            }
            _ => Ok(()),
        }
    }
}

/// Whether a spec location is a URL or a path that stays inside `base`.
pub(crate) fn stays_in_folder(base: &Path, spec: &str) -> bool {
    let lower = spec.to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") {
        return true;
    }
    let path = spec.strip_prefix("file://").unwrap_or(spec);
    stays_inside(base, Path::new(path))
}

/// Whether `path` (relative to `base`) stays inside `base`, links followed where it exists.
fn stays_inside(base: &Path, path: &Path) -> bool {
    use std::path::Component;
    if path.is_absolute()
        || path
            .components()
            .any(|c| matches!(c, Component::ParentDir | Component::Prefix(_)))
    {
        return false;
    }
    match (
        std::fs::canonicalize(base),
        std::fs::canonicalize(base.join(path)),
    ) {
        (Ok(base), Ok(full)) => full.starts_with(base),
        // Not there (yet): the plain names checked above cannot lead out.
        _ => true,
    }
}

/// The resolved configuration: where data lives and what the config file said.
#[derive(Debug, Clone)]
pub struct Config {
    pub data_dir: DataDir,
    /// The config file that was read, if any.
    pub config_path: Option<PathBuf>,
    pub file: ConfigFile,
    /// Whether the file may set every key (a `./devlens.toml` not trusted with `devlens trust`
    /// may not: what it tried to set was dropped).
    pub trust: ConfigTrust,
}

impl Config {
    pub fn load(overrides: &ConfigOverrides) -> Result<Self, CoreError> {
        let data_dir = DataDir::resolve(overrides.data_dir.as_deref())?;
        let explicit = overrides
            .config_file
            .clone()
            .or_else(|| std::env::var_os("DEVLENS_CONFIG").map(PathBuf::from));
        let named = explicit.is_some();
        let config_path = match explicit {
            Some(path) => {
                if !path.is_file() {
                    return Err(CoreError::Read {
                        source: std::io::Error::new(
                            std::io::ErrorKind::NotFound,
                            "config file not found (check --config / DEVLENS_CONFIG)",
                        ),
                        path,
                    });
                }
                Some(path)
            }
            None => [PathBuf::from("devlens.toml"), data_dir.config_file()]
                .into_iter()
                .find(|p| p.is_file()),
        };
        let (mut file, bytes) = match &config_path {
            Some(path) => read_config_file(path)?,
            None => (ConfigFile::default(), Vec::new()),
        };
        // The user named the file, or it is the data dir's own: theirs. Else it came with the
        // folder devlens was started in.
        let trust = match &config_path {
            Some(path) if !named && !same_file(path, &data_dir.config_file()) => {
                if TrustStore::new(&data_dir).is_trusted(path, &bytes)? {
                    ConfigTrust::Trusted
                } else {
                    let base = path
                        .parent()
                        .filter(|p| !p.as_os_str().is_empty())
                        .unwrap_or(Path::new("."));
                    let ignored = file.strip_untrusted(base);
                    if !ignored.is_empty() {
                        tracing::warn!(
                            "{} is not trusted, so these settings in it were ignored: {}. Review \
                            the file, then run `devlens trust` in its folder to use them.",
                            path.display(),
                            ignored.join(", ")
                        );
                    }
                    ConfigTrust::Untrusted { ignored }
                }
            }
            _ => ConfigTrust::Trusted,
        };
        if let Some(path) = &config_path {
            file.check_second_stage(&|name| std::env::var(name).ok())
                .map_err(|message| CoreError::ConfigSetting {
                    path: path.clone(),
                    message,
                })?;
        }
        Ok(Self {
            data_dir,
            config_path,
            file,
            trust,
        })
    }

    /// A configuration with defaults rooted at `data_dir`, ignoring any config file (tests).
    pub fn with_data_dir(data_dir: &Path) -> Self {
        Self {
            data_dir: DataDir::at(data_dir),
            config_path: None,
            file: ConfigFile::default(),
            trust: ConfigTrust::Trusted,
        }
    }

    /// The outbound guard's policy for this configuration: public addresses, plus `[network]
    /// allow` and `DEVLENS_NETWORK_ALLOW`. Each fetch adds its own configured target (a
    /// project's base URL, a provider) with [`crate::outbound::OutboundPolicy::allowing`].
    pub fn outbound(&self) -> crate::outbound::OutboundPolicy {
        crate::outbound::OutboundPolicy::from_config(self)
    }

    /// The team server database's URL, if one is configured: `DEVLENS_DATABASE_URL`, else
    /// `[store] url`. `None`: the embedded store.
    pub fn database_url(&self) -> Option<String> {
        std::env::var("DEVLENS_DATABASE_URL")
            .ok()
            .filter(|url| !url.trim().is_empty())
            .or_else(|| self.file.store.url.clone())
            .filter(|url| !url.trim().is_empty())
    }

    /// The directory relative paths in the config file are resolved against.
    pub fn base_dir(&self) -> PathBuf {
        self.config_path
            .as_deref()
            .and_then(Path::parent)
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."))
    }
}

fn read_config_file(path: &Path) -> Result<(ConfigFile, Vec<u8>), CoreError> {
    let bytes = std::fs::read(path).map_err(|source| CoreError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let text = std::str::from_utf8(&bytes).map_err(|e| CoreError::ConfigSyntax {
        path: path.to_path_buf(),
        message: format!("it is not UTF-8 text ({e})"),
    })?;
    let file = toml::from_str(text).map_err(|e| CoreError::ConfigSyntax {
        path: path.to_path_buf(),
        message: e.to_string().trim().replace('\n', " "),
    })?;
    Ok((file, bytes))
}

/// Whether two paths name the same file (`./devlens.toml` started in the data dir is its own).
fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_projects_and_server_settings() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("devlens.toml");
        std::fs::write(
            &path,
            "active_project = \"pets\"\n[server]\nhttp = \"127.0.0.1:9000\"\n\
             [[projects]]\nname = \"pets\"\nspec = \"specs/petstore.yaml\"\n",
        )
        .unwrap();
        let config = Config::load(&ConfigOverrides {
            data_dir: Some(dir.path().join("data")),
            config_file: Some(path),
        })
        .unwrap();
        assert_eq!(config.file.active_project.as_deref(), Some("pets"));
        assert_eq!(config.file.server.http.as_deref(), Some("127.0.0.1:9000"));
        assert_eq!(
            config.file.projects[0].spec.as_deref(),
            Some("specs/petstore.yaml")
        );
        assert_eq!(config.base_dir(), dir.path());
    }

    #[test]
    fn one_second_stage_at_a_time_and_only_one_that_can_run() {
        let none = |_: &str| None;
        let file = |text: &str| toml::from_str::<ConfigFile>(text).unwrap();
        let ok = |text: &str| file(text).check_second_stage(&none);
        assert_eq!(ok(""), Ok(()));
        assert_eq!(ok("[search]\nrerank = \"none\"\n"), Ok(()));
        assert_eq!(ok("[search]\nrerank = \"sampling\"\n"), Ok(()));
        assert_eq!(
            ok("[search]\nrerank = \"llm\"\n[llm]\nbase_url = \"http://h/v1\"\nmodel = \"m\"\n"),
            Ok(())
        );
        let err = ok("[search]\nrerank = \"llm\"\n").unwrap_err();
        assert!(err.contains("needs the [llm] endpoint"), "{err}");
        let env = |name: &str| {
            matches!(name, "DEVLENS_LLM_BASE_URL" | "DEVLENS_LLM_MODEL").then(|| "x".to_string())
        };
        assert_eq!(
            file("[search]\nrerank = \"llm\"\n").check_second_stage(&env),
            Ok(())
        );
        let err = ok("[search]\nrerank = \"cross-encoder\"\n").unwrap_err();
        assert!(err.contains("set [embedding] reranker_dir"), "{err}");
        let err = ok("[search]\nrerank = \"sampling\"\n[embedding]\nreranker_dir = \"ce\"\n")
            .unwrap_err();
        assert!(err.contains("both choose the second stage"), "{err}");
        // An unknown name is the file's syntax error, with the names it takes.
        let err = toml::from_str::<ConfigFile>("[search]\nrerank = \"gpt\"\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("cross-encoder") && err.contains("sampling"),
            "{err}"
        );
        assert_eq!(RerankChoice::parse("llm"), Ok(RerankChoice::Llm));
        assert!(
            RerankChoice::parse("gpt")
                .unwrap_err()
                .contains("sampling, llm or none")
        );
    }

    #[test]
    fn an_invalid_second_stage_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("devlens.toml");
        std::fs::write(&path, "[search]\nrerank = \"cross-encoder\"\n").unwrap();
        let err = Config::load(&ConfigOverrides {
            data_dir: Some(dir.path().join("data")),
            config_file: Some(path),
        })
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("devlens.toml") && err.contains("reranker_dir"),
            "{err}"
        );
    }

    #[test]
    fn a_typo_in_the_config_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("devlens.toml");
        std::fs::write(&path, "activ_project = \"x\"\n").unwrap();
        let err = Config::load(&ConfigOverrides {
            data_dir: Some(dir.path().to_path_buf()),
            config_file: Some(path.clone()),
        })
        .unwrap_err()
        .to_string();
        assert!(err.contains("devlens.toml"), "{err}");
        assert!(err.contains("activ_project"), "{err}");
    }

    /// A `./devlens.toml` as a cloned repository would carry it: found in the current folder,
    /// not named by the user.
    const HOSTILE: &str = "active_project = \"shop\"\n\
        [[projects]]\nname = \"shop\"\nspec = \"specs/shop.yaml\"\n\
        base_url = \"http://127.0.0.1:4010\"\n\
        auth = { type = \"bearer\", token_env = \"HOME\" }\n\
        [[projects]]\nname = \"keys\"\nspec = \"../../.config/gh/hosts.yml\"\n\
        [server]\nallowed_origins = [\"http://evil.example\"]\n\
        [browser]\nchrome_path = \"./x.sh\"\n\
        [embedding]\nonnxruntime = \"./evil.so\"\nmodel = \"all-MiniLM-L6-v2\"\n\
        [llm]\nbase_url = \"http://evil.example/v1\"\n\
        [network]\nallow = [\"10.0.0.1\"]\n\
        [search]\nrerank = \"llm\"\nrerank_timeout_secs = 5\n\
        [kb]\ntop_k = 7\n";

    fn load_from_repository(repo: &Path, data: &Path) -> Config {
        // Config::load looks in the current folder; this test reads the repository's file the
        // same way, without changing the process's folder (tests run in parallel).
        let path = repo.join("devlens.toml");
        let (mut file, bytes) = read_config_file(&path).unwrap();
        let data_dir = DataDir::at(data);
        let trust = if TrustStore::new(&data_dir)
            .is_trusted(&path, &bytes)
            .unwrap()
        {
            ConfigTrust::Trusted
        } else {
            ConfigTrust::Untrusted {
                ignored: file.strip_untrusted(repo),
            }
        };
        Config {
            data_dir,
            config_path: Some(path),
            file,
            trust,
        }
    }

    #[test]
    fn an_untrusted_file_sets_only_harmless_keys_and_says_which_it_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        std::fs::create_dir(&repo).unwrap();
        std::fs::write(repo.join("devlens.toml"), HOSTILE).unwrap();
        let config = load_from_repository(&repo, &dir.path().join("data"));
        let ConfigTrust::Untrusted { ignored } = &config.trust else {
            panic!("trusted without `devlens trust`");
        };
        for key in [
            "[server]",
            "[browser]",
            "[llm]",
            "[network]",
            "[embedding] onnxruntime",
            "[[projects]] auth of shop",
            "[[projects]] spec of keys (outside the file's folder)",
            "[search] rerank",
        ] {
            assert!(ignored.iter().any(|k| k == key), "{key} not in {ignored:?}");
        }
        assert_eq!(ignored.len(), 8, "{ignored:?}");
        assert_eq!(config.file.search.rerank, None);
        assert_eq!(config.file.search.rerank_timeout_secs, Some(5));
        let file = &config.file;
        assert!(file.browser.chrome_path.is_none());
        assert!(file.embedding.onnxruntime.is_none());
        assert!(file.llm.base_url.is_none());
        assert!(file.server.allowed_origins.is_empty());
        assert!(file.network.allow.is_empty());
        assert!(file.projects[0].auth.is_none());
        assert!(file.projects[1].spec.is_none());
        // What changes answers, not what runs or where data goes, stays.
        assert_eq!(file.kb.top_k, Some(7));
        assert_eq!(file.embedding.model.as_deref(), Some("all-MiniLM-L6-v2"));
        assert_eq!(file.projects[0].spec.as_deref(), Some("specs/shop.yaml"));
        assert_eq!(
            file.projects[0].base_url.as_deref(),
            Some("http://127.0.0.1:4010")
        );
        let projects = crate::ProjectRegistry::load(&config).unwrap();
        assert!(
            !projects.get("shop").unwrap().trusted,
            "no credentials for it"
        );
    }

    #[test]
    fn a_trusted_file_sets_everything_until_it_changes() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        std::fs::create_dir(&repo).unwrap();
        let path = repo.join("devlens.toml");
        std::fs::write(&path, HOSTILE).unwrap();
        let data = dir.path().join("data");
        TrustStore::new(&DataDir::at(&data)).trust(&path).unwrap();
        let config = load_from_repository(&repo, &data);
        assert!(config.trust.is_trusted());
        assert_eq!(
            config.file.browser.chrome_path.as_deref(),
            Some(Path::new("./x.sh"))
        );
        let projects = crate::ProjectRegistry::load(&config).unwrap();
        assert!(projects.get("shop").unwrap().trusted);

        std::fs::write(&path, format!("{HOSTILE}# one more line\n")).unwrap();
        let config = load_from_repository(&repo, &data);
        assert!(
            !config.trust.is_trusted(),
            "a changed file needs trust again"
        );
        assert!(config.file.browser.chrome_path.is_none());
    }

    #[test]
    fn a_file_the_user_names_is_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mine.toml");
        std::fs::write(&path, "[browser]\nchrome_path = \"/usr/bin/chromium\"\n").unwrap();
        let config = Config::load(&ConfigOverrides {
            data_dir: Some(dir.path().join("data")),
            config_file: Some(path),
        })
        .unwrap();
        assert!(config.trust.is_trusted());
        assert!(config.file.browser.chrome_path.is_some());
    }

    #[test]
    fn a_file_url_spec_cannot_leave_the_folder_either() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!stays_in_folder(dir.path(), "file:///etc/passwd"));
        assert!(!stays_in_folder(dir.path(), "/etc/passwd"));
        assert!(!stays_in_folder(dir.path(), "specs/../../x.yaml"));
        assert!(stays_in_folder(dir.path(), "specs/api.yaml"));
        assert!(stays_in_folder(
            dir.path(),
            "https://example.com/openapi.json"
        ));
        // A link inside the folder that leads out counts as out.
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("/etc", dir.path().join("etc")).unwrap();
            assert!(!stays_in_folder(dir.path(), "etc/passwd"));
        }
    }
}
