//! Requests a test builds with a client of its own (another process's server, a key of
//! its own), and what it reads of their answers.

use reqwest::RequestBuilder;
use serde_json::Value;

/// Sends `req` and reads its answer as JSON; fails the test when either fails.
pub async fn json_of(req: RequestBuilder) -> Value {
    req.send()
        .await
        .expect("request sent")
        .json()
        .await
        .expect("a JSON answer")
}
