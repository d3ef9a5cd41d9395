//! MCP prompts: the workflows a person picks in their client (a slash command), each a user
//! message that sets the agent on the right tools in the right order. Where devlens can
//! answer part of the question at once it does — the endpoints that match a task, the docs
//! sections that answer a question — so the first turn starts from facts, not from a search.

use std::collections::HashMap;

use rmcp::{
    ErrorData,
    model::{GetPromptResult, Prompt, PromptArgument, PromptMessage, Role},
};

use devlens_app::{
    Report,
    api::{self, SearchArgs, SpecSelector},
    docs::QueryDocsInput,
};

use crate::{DevlensServer, ToolFamily};

/// One prompt: its name, what it does, its arguments (name, description, required) and the
/// family whose tools it uses.
struct PromptDef {
    name: &'static str,
    title: &'static str,
    description: &'static str,
    arguments: &'static [(&'static str, &'static str, bool)],
    family: ToolFamily,
}

const PROMPTS: [PromptDef; 5] = [
    PromptDef {
        name: "debug_page",
        title: "Debug this page",
        description: "Open a page in the browser and find why it misbehaves: console errors, \
                      failed requests, the DOM, then the debugger where the error is thrown.",
        arguments: &[
            (
                "url",
                "The page to debug (http://localhost:5173/cart)",
                true,
            ),
            ("symptom", "What goes wrong, in your words", false),
        ],
        family: ToolFamily::Browser,
    },
    PromptDef {
        name: "find_endpoint",
        title: "Find and call an endpoint",
        description: "Find the API endpoint for a task in the team's OpenAPI specs (the best \
                      matches are included), read its contract and write the call.",
        arguments: &[
            (
                "task",
                "What the call should do (list a user's open orders)",
                true,
            ),
            (
                "project",
                "The API project [default: the active one]",
                false,
            ),
        ],
        family: ToolFamily::Api,
    },
    PromptDef {
        name: "audit_page",
        title: "Audit this page",
        description: "Audit a page for accessibility, performance, CSS or app-state problems \
                      and propose fixes in the code.",
        arguments: &[
            ("url", "The page to audit", true),
            (
                "focus",
                "accessibility, performance, css, state or all [default: all]",
                false,
            ),
        ],
        family: ToolFamily::Browser,
    },
    PromptDef {
        name: "answer_from_docs",
        title: "Answer from a library's docs",
        description: "Answer a question from a library's documentation (the best sections are \
                      included), citing the sections used.",
        arguments: &[
            ("library", "The library id (react, /vuejs/docs)", true),
            ("question", "The question", true),
            (
                "version",
                "A version the docs hold [default: the newest]",
                false,
            ),
        ],
        family: ToolFamily::Docs,
    },
    PromptDef {
        name: "save_fix",
        title: "Save what we just fixed",
        description: "Write up the problem and fix from this conversation as a solution in the \
                      team's knowledge base (updating a similar one rather than duplicating it).",
        arguments: &[
            (
                "title",
                "A title for the solution [default: the agent writes one]",
                false,
            ),
            ("tags", "Comma-separated tags (react, auth)", false),
        ],
        family: ToolFamily::Kb,
    },
];

const FOCUSES: [&str; 5] = ["accessibility", "performance", "css", "state", "all"];

/// The values an argument of a prompt can take, where devlens knows them (for completions).
pub(crate) fn argument_kind(prompt: &str, argument: &str) -> Option<&'static str> {
    let def = PROMPTS.iter().find(|p| p.name == prompt)?;
    def.arguments
        .iter()
        .find(|(name, _, _)| *name == argument)?;
    Some(match argument {
        "project" => "project",
        "library" => "library",
        "version" => "version",
        "tags" => "kbTags",
        "focus" => "focus",
        "url" => "url",
        _ => "free",
    })
}

pub(crate) fn focus_values() -> &'static [&'static str] {
    &FOCUSES
}

impl DevlensServer {
    pub(crate) fn prompt_list(&self) -> Vec<Prompt> {
        PROMPTS
            .iter()
            .filter(|p| self.options.families.contains(p.family))
            .map(|p| {
                let arguments = p
                    .arguments
                    .iter()
                    .map(|(name, description, required)| {
                        PromptArgument::new(*name)
                            .with_description(*description)
                            .with_required(*required)
                    })
                    .collect();
                Prompt::new(p.name, Some(p.description), Some(arguments)).with_title(p.title)
            })
            .collect()
    }

    pub(crate) async fn prompt(
        &self,
        name: &str,
        arguments: Option<serde_json::Map<String, serde_json::Value>>,
    ) -> Result<GetPromptResult, ErrorData> {
        let Some(def) = PROMPTS
            .iter()
            .find(|p| p.name == name && self.options.families.contains(p.family))
        else {
            let offered: Vec<String> = self.prompt_list().into_iter().map(|p| p.name).collect();
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown prompt `{name}`: devlens offers {}",
                    if offered.is_empty() {
                        "none with the tool families this server was started with".into()
                    } else {
                        offered.join(", ")
                    }
                ),
                None,
            ));
        };
        let args = Arguments::new(def, arguments.unwrap_or_default())?;
        let text = match def.name {
            "debug_page" => debug_page(&args),
            "find_endpoint" => self.find_endpoint(&args).await,
            "audit_page" => audit_page(&args)?,
            "answer_from_docs" => self.answer_from_docs(&args).await?,
            _ => save_fix(&args),
        };
        Ok(
            GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
                .with_description(def.description),
        )
    }

    async fn find_endpoint(&self, args: &Arguments) -> String {
        let task = args.get("task");
        let project = args.opt("project");
        let selector = SpecSelector::project(project.map(str::to_string));
        let in_project = project.map_or(String::new(), |p| format!(" (projectName: {p})"));
        let mut text = format!(
            "Find the API endpoint for this task and write the call: {task}\n\n\
             1. Check the candidates below (or search_api_documentation{in_project} with other \
             words).\n\
             2. Read the chosen endpoint with get_endpoint_details: parameters, request body, \
             responses and errors.\n\
             3. Write the request in the project's code (its HTTP client, types for the body and \
             the response), handling the documented error statuses.\n"
        );
        let search = SearchArgs {
            query: Some(task.to_string()),
            limit: Some(5),
            ..SearchArgs::default()
        };
        let found = match search.request() {
            Ok(request) => api::search(self.app(), &selector, &request)
                .await
                .map(|r| r.to_text())
                .map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        match found {
            Ok(hits) => text.push_str(&format!("\nCandidates from devlens:\n{hits}\n")),
            Err(why) => text.push_str(&format!("\n(devlens could not search yet: {why})\n")),
        }
        text
    }

    async fn answer_from_docs(&self, args: &Arguments) -> Result<String, ErrorData> {
        let library = args.get("library");
        let question = args.get("question");
        let input = QueryDocsInput {
            library_id: library.to_string(),
            query: question.to_string(),
            version: args.opt("version").map(str::to_string),
            max_results: None,
            include_code: None,
            context_limit: None,
        };
        // Opened apart from the query: docs that cannot open are devlens' failure, a query
        // that fails is the caller's to fix.
        let docs = self
            .app()
            .docs()
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let context = match docs.query(&input).await {
            Ok(answer) => answer.to_text(),
            // A library that is not there is the caller's to fix: say which ids exist.
            Err(e) => return Err(ErrorData::invalid_params(e.to_string(), None)),
        };
        Ok(format!(
            "Answer this question from the {library} documentation: {question}\n\n\
             Use the sections below; cite each one you rely on by its title. If they do not \
             answer it, say so and call query_docs (library_id {library}) with a narrower \
             question rather than answering from memory.\n\n{context}"
        ))
    }
}

fn debug_page(args: &Arguments) -> String {
    let url = args.get("url");
    let symptom = args
        .opt("symptom")
        .map_or(String::new(), |s| format!("\nThe symptom: {s}\n"));
    format!(
        "Debug the page at {url}.{symptom}\n\
         1. Open it: chrome (action launch) if no browser is connected, then navigate to {url}.\n\
         2. Look before acting: get_console_logs (errors first), list_network_requests (failed \
         and 4xx/5xx), and snapshot for what is on screen.\n\
         3. Reproduce the symptom with click_element / fill_element / type_text, checking the \
         console and network after each step.\n\
         4. For a JavaScript error, set a breakpoint where it is thrown (or pause_on_exceptions), \
         trigger it again, and read the call stack and locals; evaluate_in_frame to test a \
         theory.\n\
         5. Find the source in the workspace (search_files / read_file), fix it, and reload to \
         confirm the console is clean and the symptom gone.\n\
         Report the cause, the fix and how you verified it."
    )
}

fn audit_page(args: &Arguments) -> Result<String, ErrorData> {
    let url = args.get("url");
    let focus = args.opt("focus").unwrap_or("all");
    if !FOCUSES.contains(&focus) {
        return Err(ErrorData::invalid_params(
            format!("focus must be one of {}, got `{focus}`", FOCUSES.join(", ")),
            None,
        ));
    }
    let steps: Vec<&str> = [
        (
            "accessibility",
            "audit_accessibility: fix critical and serious violations first; each names the \
             element (ref/selector) and the failure.",
        ),
        (
            "performance",
            "audit_performance measure vitals (LCP, CLS, INP/TBT), then measure trace of a \
             reload for render-blocking requests and long tasks with their functions.",
        ),
        (
            "css",
            "inspect_css on elements that look wrong: which declaration won each property and \
             why the others lost.",
        ),
        (
            "state",
            "inspect_app_state: the framework, the component tree around a broken element, its \
             props and state, and the stores.",
        ),
    ]
    .into_iter()
    .filter(|(name, _)| focus == "all" || focus == *name)
    .map(|(_, step)| step)
    .collect();
    let mut text = format!(
        "Audit the page at {url} ({focus}). Open it first (chrome launch if needed, then \
         navigate).\n"
    );
    for (i, step) in steps.iter().enumerate() {
        text.push_str(&format!("{}. {step}\n", i + 1));
    }
    text.push_str(
        "Then find each problem's source in the workspace and propose (or make) the fix; \
         re-run the audit to confirm. Report findings by severity.",
    );
    Ok(text)
}

fn save_fix(args: &Arguments) -> String {
    let title = args
        .opt("title")
        .map_or("a short title naming the problem".to_string(), |t| {
            format!("the title \"{t}\"")
        });
    let tags = args.opt("tags").map_or(
        "tags for the libraries and areas involved".to_string(),
        |t| format!("the tags {t}"),
    );
    format!(
        "Save what we just fixed to the team's knowledge base.\n\n\
         1. search_solutions with the problem's words: if a solution covers it, update that one \
         (save_solution with its id) instead of adding a duplicate.\n\
         2. Otherwise save_solution with {title}, {tags}, and a text with: the symptom as a \
         developer would search for it (error messages verbatim), the cause, the fix (the code \
         that changed), and how it was verified.\n\
         Keep secrets, tokens and personal data out of it."
    )
}

/// A prompt's arguments, checked against its definition.
struct Arguments {
    values: HashMap<String, String>,
}

impl Arguments {
    fn new(
        def: &PromptDef,
        given: serde_json::Map<String, serde_json::Value>,
    ) -> Result<Self, ErrorData> {
        let mut values = HashMap::new();
        for (name, value) in given {
            if !def.arguments.iter().any(|(n, _, _)| *n == name) {
                let known: Vec<&str> = def.arguments.iter().map(|(n, _, _)| *n).collect();
                return Err(ErrorData::invalid_params(
                    format!(
                        "prompt `{}` has no argument `{name}`; its arguments are {}",
                        def.name,
                        known.join(", ")
                    ),
                    None,
                ));
            }
            let text = match value {
                serde_json::Value::String(s) => s,
                serde_json::Value::Null => continue,
                other => other.to_string(),
            };
            if !text.trim().is_empty() {
                values.insert(name, text.trim().to_string());
            }
        }
        let missing: Vec<&str> = def
            .arguments
            .iter()
            .filter(|(name, _, required)| *required && !values.contains_key(*name))
            .map(|(name, _, _)| *name)
            .collect();
        if !missing.is_empty() {
            return Err(ErrorData::invalid_params(
                format!(
                    "prompt `{}` needs {}",
                    def.name,
                    missing
                        .iter()
                        .map(|m| format!("`{m}`"))
                        .collect::<Vec<_>>()
                        .join(" and ")
                ),
                None,
            ));
        }
        Ok(Self { values })
    }

    /// A required argument (checked in `new`).
    fn get(&self, name: &str) -> &str {
        self.values.get(name).map_or("", String::as_str)
    }

    fn opt(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(String::as_str)
    }
}
