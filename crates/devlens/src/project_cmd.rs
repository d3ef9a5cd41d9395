//! `devlens project …`: named specs and the active project.

use serde_json::json;

use devlens_core::{Config, ProjectRegistry};

use crate::cli::ProjectCommand;

pub(crate) fn run(config: Config, command: ProjectCommand) -> anyhow::Result<()> {
    let mut registry = ProjectRegistry::load(&config)?;
    match command {
        ProjectCommand::List { json } => {
            let active = registry.active_name();
            if json {
                let value = json!({ "projects": registry.projects(), "active": active });
                crate::output::line(&serde_json::to_string_pretty(&value)?)?;
            } else if registry.projects().is_empty() {
                crate::output::line("no projects: add one with `devlens project add NAME SPEC`")?;
            } else {
                for project in registry.projects() {
                    let marker = if Some(&project.name) == active.as_ref() {
                        "*"
                    } else {
                        " "
                    };
                    let spec = project.spec.as_deref().unwrap_or("(no spec)");
                    crate::output::line(&format!("{marker} {}  {spec}", project.name))?;
                }
            }
        }
        ProjectCommand::Add { name, spec } => {
            let project = registry.add(&name, &spec)?;
            eprintln!(
                "added project '{}' ({})",
                project.name,
                project.spec.as_deref().unwrap_or_default()
            );
        }
        ProjectCommand::Use { name } => {
            registry.set_active(&name)?;
            eprintln!("active project: {name}");
        }
        ProjectCommand::Remove { name } => {
            registry.remove(&name)?;
            eprintln!("removed project '{name}'");
        }
    }
    Ok(())
}
