//! `sayso person passkeys NAME [--remove ID]`: the operator's view of a person's passkeys,
//! and the way to take away one the person did not add.

use clap::Args;

#[derive(Debug, Clone, Args)]
pub struct PersonPasskeysArgs {
    /// The person.
    pub name: String,
    #[arg(long, default_value = "default")]
    pub inbox: String,
    /// Remove the passkey whose id starts with this (the id as listed, or the start of it).
    #[arg(long, value_name = "ID")]
    pub remove: Option<String>,
}
