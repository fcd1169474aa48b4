//! A project as the pages and notifications name it. The hook files a coding agent's call
//! under its project root's absolute path (so allowances of two folders of the same name
//! stay apart); a person reads the folder's name, with the whole path beside it.

use std::fmt;

/// A project's shown name, and its whole path when the name is a path's last part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectName {
    /// What is shown: the last part of a path, or the project as given.
    pub name: String,
    /// The whole path (a page's hover text); `None` when the project is no path.
    pub path: Option<String>,
}

impl fmt::Display for ProjectName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

/// The name of `project`: a path (it begins with `/`) by its last part, anything else as it
/// is.
pub fn project_name(project: &str) -> ProjectName {
    if !project.starts_with('/') {
        return ProjectName {
            name: project.to_string(),
            path: None,
        };
    }
    let last = project.rsplit('/').find(|part| !part.is_empty());
    ProjectName {
        name: last.unwrap_or("/").to_string(),
        path: Some(project.to_string()),
    }
}

/// The name of `project` as a page shows it: each part visible (`super::visible`), so a
/// hidden character in a folder's name is marked, not hidden.
pub fn visible_project(project: &str) -> ProjectName {
    let lines = super::visible::Lines::Marked;
    let p = project_name(project);
    ProjectName {
        name: super::visible::visible(&p.name, lines),
        path: p.path.map(|path| super::visible::visible(&path, lines)),
    }
}

/// The shown name alone, as a notification's title takes it.
pub fn short_project(project: &str) -> String {
    project_name(project).name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_named_by_its_last_part() {
        let p = project_name("/home/me/shop");
        assert_eq!(p.name, "shop");
        assert_eq!(p.path.as_deref(), Some("/home/me/shop"));
        assert_eq!(project_name("/srv/shop/").name, "shop");
        assert_eq!(project_name("/").name, "/");
        let long = project_name("/…0123456789abcdef…deep/down/shop");
        assert_eq!(long.name, "shop");
    }

    #[test]
    fn a_plain_project_is_shown_as_it_is() {
        let p = project_name("ops");
        assert_eq!(p.to_string(), "ops");
        assert_eq!(p.path, None);
        assert_eq!(short_project("billing v2"), "billing v2");
    }
}
