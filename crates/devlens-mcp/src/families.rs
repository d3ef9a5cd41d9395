//! Tool families: which groups of tools a server offers. Agents pay for every tool definition on
//! every turn, so a user who only wants the browser can leave the API tools out (`--tools
//! browser`), as the peers let users pick categories.

use std::fmt;

/// A group of tools that belong to one capability.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ToolFamily {
    /// OpenAPI exploration and search.
    Api,
    /// Driving Chrome: connections, tabs, pages, console, network, screenshots, live code.
    Browser,
    /// The JavaScript debugger: breakpoints, stepping, call stack, pause context.
    Debugger,
    /// Library documentation: resolve a library id, query its docs within a token budget.
    Docs,
    /// The knowledge base: save, search and ask saved solutions.
    Kb,
    /// The project's files: read, list, search, write, edit — confined to the workspace.
    Workspace,
}

impl ToolFamily {
    pub const ALL: [ToolFamily; 6] = [
        ToolFamily::Api,
        ToolFamily::Browser,
        ToolFamily::Debugger,
        ToolFamily::Docs,
        ToolFamily::Kb,
        ToolFamily::Workspace,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Self::Api => "api",
            Self::Browser => "browser",
            Self::Debugger => "debugger",
            Self::Docs => "docs",
            Self::Kb => "kb",
            Self::Workspace => "workspace",
        }
    }

    fn parse(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(name))
    }
}

impl fmt::Display for ToolFamily {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The families a server offers; all of them by default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolFamilies(Vec<ToolFamily>);

impl Default for ToolFamilies {
    fn default() -> Self {
        Self(ToolFamily::ALL.to_vec())
    }
}

impl ToolFamilies {
    /// `browser,api` (comma- or space-separated, `all` for every family).
    pub fn parse(list: &str) -> Result<Self, String> {
        let mut families = Vec::new();
        for name in list
            .split([',', ' '])
            .map(str::trim)
            .filter(|n| !n.is_empty())
        {
            if name.eq_ignore_ascii_case("all") {
                return Ok(Self::default());
            }
            let family = ToolFamily::parse(name).ok_or_else(|| {
                format!(
                    "unknown tool family `{name}`: use {} (comma-separated), or all",
                    Self::default().names()
                )
            })?;
            if !families.contains(&family) {
                families.push(family);
            }
        }
        if families.is_empty() {
            return Err(format!(
                "no tool family given: use {} (comma-separated), or all",
                Self::default().names()
            ));
        }
        families.sort();
        Ok(Self(families))
    }

    pub fn contains(&self, family: ToolFamily) -> bool {
        self.0.contains(&family)
    }

    /// `api, browser`
    pub fn names(&self) -> String {
        self.0
            .iter()
            .map(|f| f.name())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_parse_in_any_order_case_and_separator() {
        assert_eq!(
            ToolFamilies::parse("Browser, api,debugger,docs,KB, workspace").unwrap(),
            ToolFamilies::default()
        );
        let browser = ToolFamilies::parse("browser browser").unwrap();
        assert!(browser.contains(ToolFamily::Browser));
        assert!(!browser.contains(ToolFamily::Api));
        assert_eq!(ToolFamilies::parse("all").unwrap(), ToolFamilies::default());
    }

    #[test]
    fn unknown_or_empty_lists_name_the_families() {
        let error = ToolFamilies::parse("browser,dom").unwrap_err();
        assert!(
            error.contains("`dom`") && error.contains("api, browser"),
            "{error}"
        );
        assert!(
            ToolFamilies::parse(" , ")
                .unwrap_err()
                .contains("api, browser")
        );
    }
}
