//! Helpers shared by the integration tests. Each test binary uses only a part of them.
#![allow(dead_code)]

pub mod browser;
pub mod cluster;
pub mod db;
pub mod faulty_proxy;
pub mod first_run;
pub mod mcp_py;
pub mod npm;
pub mod process;
pub mod python;
pub mod receiver;
pub mod server;
pub mod smtp;
