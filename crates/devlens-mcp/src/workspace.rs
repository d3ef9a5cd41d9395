//! Workspace tools: `read_file`, `list_files`, `search_files`, `write_file`, `edit_file` — the
//! project's files, every path confined to the workspace (or devlens' data dir).
//!
//! The workspace is `devlens serve --workspace DIR` (or `[workspace] root` in a trusted config);
//! without it, over stdio, the first `file://` root the client names (MCP roots), else the
//! directory devlens was started in. Over HTTP a root only narrows the server's workspace. A
//! session asks its client for roots on its first file call and again after
//! `notifications/roots/list_changed`.

use std::sync::Arc;
use std::time::Duration;

use rmcp::{
    RoleServer, handler::server::wrapper::Parameters, model::CallToolResult,
    service::RequestContext, tool, tool_router,
};

use devlens_app::{
    AppError,
    workspace::{self as files, EditFile, ListFiles, ReadFile, SearchFiles, Workspace, WriteFile},
};

use crate::{
    DevlensServer,
    reply::{reply, reply_shown},
};

/// How long a session waits for its client's roots before using the default workspace.
const ROOTS_TIMEOUT: Duration = Duration::from_secs(5);

impl DevlensServer {
    /// The workspace this session works in. Over stdio the client is the user's own agent: its
    /// first file root is the workspace when the server was given none. Over HTTP any local
    /// process can be the client, so a root only narrows the server's workspace — one outside
    /// it (`file:///`, a home folder) is ignored, and the server's workspace is used.
    // Roots are deprecated by the newest protocol revision, but the clients in use still offer
    // them, and they are how an editor says which project is open.
    #[allow(deprecated)]
    pub(crate) async fn workspace(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> Result<Arc<Workspace>, AppError> {
        let over_http = context.extensions.get::<http::request::Parts>().is_some();
        if !over_http && !self.options().workspace_from_roots {
            return self.app().workspace();
        }
        if let Some(ws) = self.session_workspace() {
            return Ok(ws);
        }
        let peer = &context.peer;
        let offers_roots = peer
            .peer_info()
            .is_some_and(|info| info.capabilities.roots.is_some());
        if offers_roots
            && let Ok(Ok(listed)) = tokio::time::timeout(ROOTS_TIMEOUT, peer.list_roots()).await
            && let Some(root) = listed
                .roots
                .iter()
                .find_map(|r| url::Url::parse(&r.uri).ok()?.to_file_path().ok())
        {
            match self.workspace_from_root(&root, over_http) {
                Ok(ws) => {
                    tracing::info!(root = %ws.root().display(), "workspace from the client's roots");
                    self.set_session_workspace(Some(Arc::clone(&ws)));
                    return Ok(ws);
                }
                Err(e) => tracing::warn!(
                    root = %root.display(),
                    "the client's root cannot be the workspace ({e}); using the server's"
                ),
            }
        }
        let ws = self.app().workspace()?;
        self.set_session_workspace(Some(Arc::clone(&ws)));
        Ok(ws)
    }

    /// The workspace at a client's root; over HTTP only inside the server's own.
    fn workspace_from_root(
        &self,
        root: &std::path::Path,
        over_http: bool,
    ) -> Result<Arc<Workspace>, AppError> {
        if over_http {
            let server = self.app().workspace()?;
            let inside = std::fs::canonicalize(root)
                .is_ok_and(|canonical| canonical.starts_with(server.root()));
            if !inside {
                return Err(AppError::new(
                    devlens_app::ErrorKind::Forbidden,
                    format!(
                        "over HTTP a client's root must lie inside the server's workspace ({}); \
                         start the server with --workspace naming the project",
                        server.root().display()
                    ),
                ));
            }
        }
        self.app().workspace_at(root)
    }
}

#[tool_router(router = workspace_tools, vis = "pub(crate)")]
impl DevlensServer {
    /// Read a text file of the workspace: numbered lines, a range (startLine, limit), and its
    /// version for edit_file. Binary files are refused with their type.
    #[tool(
        name = "read_file",
        annotations(
            title = "Read a file",
            read_only_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn read_file(
        &self,
        Parameters(args): Parameters<ReadFile>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let read = async { files::read_file(self.workspace(&context).await?, args).await };
        reply(read.await)
    }

    /// List the workspace's files (respecting .gitignore), filtered by globs, paged.
    #[tool(
        name = "list_files",
        annotations(
            title = "List files",
            read_only_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn list_files(
        &self,
        Parameters(args): Parameters<ListFiles>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let listed = async { files::list_files(self.workspace(&context).await?, args).await };
        reply(listed.await)
    }

    /// Search the workspace's files for a regex (or literal text): matching lines with context,
    /// as path:line:text.
    #[tool(
        name = "search_files",
        annotations(
            title = "Search files",
            read_only_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn search_files(
        &self,
        Parameters(args): Parameters<SearchFiles>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let found = async { files::search_files(self.workspace(&context).await?, args).await };
        reply(found.await)
    }

    /// Create or replace a workspace file (atomically); answers with the diff. When the open page
    /// uses the file, waits for it to take the change (hot update or reload) and reports console
    /// errors, failed requests and the dev server's error overlay.
    #[tool(
        name = "write_file",
        annotations(
            title = "Write a file",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn write_file(
        &self,
        Parameters(args): Parameters<WriteFile>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let written =
            async { files::write_file(self.app(), self.workspace(&context).await?, args).await };
        reply_shown(written.await)
    }

    /// Edit a file: replace oldText (exactly once, unless replaceAll) with newText, or apply a
    /// unified diff. Answers with the diff; refused if the file changed since read. Like
    /// write_file, reports how the open page took the change.
    #[tool(
        name = "edit_file",
        input_schema = crate::schema::input_schema_referring::<EditFile>("page", "As write_file's page."),
        annotations(
            title = "Edit a file",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn edit_file(
        &self,
        Parameters(args): Parameters<EditFile>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let edited =
            async { files::edit_file(self.app(), self.workspace(&context).await?, args).await };
        reply_shown(edited.await)
    }
}
