//! Decisions several people must agree on: votes through each person's own link, raced by
//! cancels, expiry and readers; each vote counted once, none acknowledged lost, each decision
//! resolved once as its tally says.

use super::*;

const PEOPLE: [&str; 4] = ["p0", "p1", "p2", "p3"];

/// One decision of the votes run: who it asks, and each one's person link token (`/a/…`).
#[derive(Clone)]
struct Poll {
    id: String,
    question: String,
    approvers: Vec<String>,
    links: HashMap<String, String>,
}

/// One call of the votes run.
#[derive(Clone, Debug)]
enum Cast {
    /// A person votes, through the API (JSON) or the page's form (`page`).
    Vote {
        person: String,
        vote: Vote,
        page: bool,
    },
    Cancel,
}

struct Voters {
    service: Service,
    history: VoteHistory,
}

impl Voters {
    async fn cast(&self, p: &Poll, cast: Cast, replica: usize) {
        let service = &self.service;
        let base = &service.bases[replica];
        let req = match &cast {
            Cast::Vote { person, vote, page } => {
                let url = format!("{base}/a/{}", p.links[person]);
                if *page {
                    let pairs: &[(&str, &str)] = match vote {
                        Vote::Yes => &[("value", "yes")],
                        Vote::No => &[("value", "no")],
                        Vote::Decline => &[("action", "decline")],
                    };
                    service.form_post(&url, pairs)
                } else {
                    let body = match vote {
                        Vote::Yes => json!({"value": "yes"}),
                        Vote::No => json!({"value": "no"}),
                        Vote::Decline => json!({"action": "decline"}),
                    };
                    service.http.post(&url).json(&body)
                }
            }
            Cast::Cancel => service.cancel(base, &p.id),
        };
        let form = matches!(cast, Cast::Vote { page: true, .. });
        let (invoked, returned, outcome) = service
            .resolving(req, form, &format!("{cast:?}"), replica)
            .await;
        match cast {
            Cast::Vote { person, vote, page } => self.history.ballot(Ballot {
                decision: p.id.clone(),
                person,
                vote,
                invoked,
                returned,
                reply: match outcome {
                    Outcome::Won(state) => Reply::Ok(state),
                    Outcome::Conflict => Reply::Conflict,
                    Outcome::Gone => Reply::Gone,
                    Outcome::Unknown => Reply::Unknown,
                    Outcome::Other(status, body) => Reply::Other(status, body),
                },
                via: if page { "page vote" } else { "api vote" },
            }),
            Cast::Cancel => self.history.cancel(Write {
                decision: p.id.clone(),
                intent: Intent::Cancel,
                invoked,
                returned,
                outcome,
                via: "cancel",
            }),
        }
        // Read your write, on the other replica.
        self.look(p, replica + 1, None).await;
    }

    /// A get (`await_s` None) or an await on one replica, with the answers it shows.
    async fn look(&self, p: &Poll, replica: usize, await_s: Option<u64>) {
        let (invoked, returned, via, seen) = self.service.read(&p.id, replica, await_s).await;
        if let Some(seen) = seen {
            self.history.look(Look {
                decision: p.id.clone(),
                invoked,
                returned,
                seen: State::of(&seen),
                answers: Answer::list(&seen),
                via,
            });
        }
    }
}

/// Adds `name` to the inbox `default` with `sayso person add`, as an operator would;
/// returns the token of the feed link it prints.
async fn add_person(url: &str, name: &str) -> String {
    let out = tokio::process::Command::new(BIN)
        .args(["person", "add", name, "--inbox", "default"])
        .env("SAYSO_DATABASE_URL", url)
        .env("SAYSO_LOG", "warn")
        .env_remove("SAYSO_PUBLIC_URL")
        .output()
        .await
        .expect("sayso person add runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "sayso person add {name}: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .find_map(|l| l.trim().split_once("/inbox/").map(|(_, t)| t.to_string()))
        .unwrap_or_else(|| panic!("sayso person add {name} printed no feed link: {stdout}"))
}

/// The person links of a feed page (templates/feed.html), each with the question its item
/// shows: `(token, question)`.
fn feed_links(html: &str) -> Vec<(String, String)> {
    const HREF: &str = "href=\"/a/";
    const QUESTION: &str = "<span class=\"item-q\">";
    let mut found = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find(HREF) {
        rest = &rest[i + HREF.len()..];
        let Some(end) = rest.find('"') else { break };
        let token = rest[..end].to_string();
        rest = &rest[end..];
        // The item's question, before the next link.
        let next = rest.find("href=").unwrap_or(rest.len());
        if let Some(q) = rest[..next].find(QUESTION) {
            let q = &rest[q + QUESTION.len()..];
            if let Some(e) = q.find("</span>") {
                found.push((token, q[..e].to_string()));
            }
        }
    }
    found
}

/// Runs the votes workload on `decisions` decisions, each asking three or four of p0..p3
/// and needing two or three of them to say yes, across `replicas` servers of one database,
/// and checks the recorded history.
async fn contended_votes_run(url: &str, backend: &str, replicas: usize, decisions: usize) {
    init_tls();
    let _alone = ONE_AT_A_TIME.lock().await;
    let seed = seed();
    eprintln!("{backend} votes: SAYSO_HISTORY_SEED={seed}");
    let mut rng = StdRng::seed_from_u64(seed);
    let (servers, key) = start_replicas(url, replicas).await;
    let mut feeds = Vec::new();
    for person in PEOPLE {
        feeds.push((person, add_person(url, person).await));
    }
    let voters = Arc::new(Voters {
        service: Service::new(&servers, key),
        history: VoteHistory::default(),
    });

    // The decisions, made through every replica in turn.
    let mut polls = Vec::new();
    for i in 0..decisions {
        let mut approvers: Vec<String> = PEOPLE.map(String::from).to_vec();
        if rng.random_bool(0.5) {
            approvers.remove(rng.random_range(0..approvers.len()));
        }
        let question = format!("Vote {i}?");
        let body = json!({"question": question, "kind": "bool", "approvers": approvers,
                          "required": rng.random_range(2..=3), "notify": "none",
                          "ttl_seconds": 10});
        let v = voters.service.create(i, &body).await;
        let id = v["decision_id"].as_str().unwrap().to_string();
        voters.history.created(&id);
        polls.push(Poll {
            id,
            question,
            approvers,
            links: HashMap::new(),
        });
    }
    // Each person's links, from their own feed: it lists exactly the decisions asking them.
    for (person, token) in &feeds {
        // Every page of it: the feed lists its pending items a page at a time.
        let (status, pages) =
            common::server::feed_pages(&format!("{}/inbox/{token}", voters.service.bases[0])).await;
        assert_eq!(status, StatusCode::OK, "{person}'s feed: {pages:?}");
        let links: HashMap<String, String> = pages
            .iter()
            .flat_map(|html| feed_links(html))
            .map(|(token, question)| (question, token))
            .collect();
        for p in &mut polls {
            let asked = p.approvers.iter().any(|a| a == person);
            match links.get(&p.question) {
                Some(token) if asked => {
                    p.links.insert(person.to_string(), token.clone());
                }
                None if !asked => {}
                found => panic!(
                    "{person}'s feed links {:?} to {found:?}, but approvers are {:?}",
                    p.question, p.approvers
                ),
            }
        }
    }

    // Everything below is timed from `start`; each decision expires 1–3 s after it.
    let ids: Vec<&str> = polls.iter().map(|p| p.id.as_str()).collect();
    let (start, start_wall, expiries) = start_clock(url, &mut rng, &ids).await;

    let mut schedule = Schedule::default();
    let (mut votes, mut cancels) = (0, 0);
    for (p, expiry) in polls.iter().zip(&expiries) {
        let pick = |rng: &mut StdRng| p.approvers[rng.random_range(0..p.approvers.len())].clone();
        let vote = |rng: &mut StdRng| match rng.random_range(0..100) {
            0..70 => Vote::Yes,
            70..85 => Vote::No,
            _ => Vote::Decline,
        };
        // The contenders fire together, within 15 ms of a moment up to 2 s before or
        // 0.3 s after the decision's expiry (it takes several votes to agree, and a loaded
        // machine takes its time with each); some decisions get none and simply expire.
        // Some have had one yes well before.
        let expiry_ms = (*expiry - start_wall).whole_milliseconds() as i64;
        let race = (expiry_ms + rng.random_range(-2000..300)).max(100) as u64;
        let mut plan: Vec<(u64, Cast)> = Vec::new();
        if rng.random_bool(0.5) {
            let person = pick(&mut rng);
            plan.push((
                rng.random_range(0..race),
                Cast::Vote {
                    person,
                    vote: Vote::Yes,
                    page: false,
                },
            ));
        }
        let contenders = match rng.random_range(0..100) {
            0..10 => 0,
            10..35 => 2,
            35..70 => 3,
            _ => 4,
        };
        for _ in 0..contenders {
            let at = race + rng.random_range(0..15);
            if rng.random_range(0..100) < 12 {
                plan.push((at, Cast::Cancel));
                continue;
            }
            let earlier: Vec<&String> = plan
                .iter()
                .filter_map(|(_, c)| match c {
                    Cast::Vote { person, .. } => Some(person),
                    Cast::Cancel => None,
                })
                .collect();
            // Sometimes a person votes again, the same or otherwise.
            let person = if !earlier.is_empty() && rng.random_bool(0.25) {
                earlier[rng.random_range(0..earlier.len())].clone()
            } else {
                pick(&mut rng)
            };
            let vote = vote(&mut rng);
            plan.push((
                at,
                Cast::Vote {
                    person,
                    vote,
                    page: rng.random_bool(0.25),
                },
            ));
        }
        for (at, cast) in plan {
            match cast {
                Cast::Vote { .. } => votes += 1,
                Cast::Cancel => cancels += 1,
            }
            let at = start + Duration::from_millis(at);
            let replica = rng.random_range(0..replicas);
            let (v, p) = (voters.clone(), p.clone());
            schedule.at(at, async move { v.cast(&p, cast, replica).await });
        }
        for _ in 0..2 {
            let r = plan_read(&mut rng, start, replicas);
            let (v, p) = (voters.clone(), p.clone());
            schedule.at(r.at, async move { v.look(&p, r.replica, r.await_s).await });
        }
    }
    schedule.run().await;
    let elapsed = start.elapsed();

    // What the service says now (every decision has expired or resolved by now): its
    // answers and rule, its resolution events, and its trail's votes.
    let events = common::db::resolution_events(url).await;
    let mut facts = HashMap::new();
    for p in &polls {
        let body = voters.service.get(&format!("/v1/decisions/{}", p.id)).await;
        let trail = voters
            .service
            .get(&format!("/v1/decisions/{}/events", p.id))
            .await;
        let names = |v: &Value| -> Vec<String> {
            v.as_array()
                .into_iter()
                .flatten()
                .map(|n| n.as_str().unwrap_or("<none>").to_string())
                .collect()
        };
        facts.insert(
            p.id.clone(),
            Some(VoteFacts {
                expires_at: expires_at(&body),
                state: State::of(&body),
                approvers: names(&body["routing"]["approvers"]),
                required: body["routing"]["required"].as_u64().unwrap_or(0) as usize,
                answers: Answer::list(&body),
                resolution_events: events.get(&p.id).map_or(0, |(_, n)| *n as u64),
                voted: trail["items"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|e| e["kind"] == "voted")
                    .map(|e| e["detail"]["person"].as_str().unwrap_or("<none>").into())
                    .collect(),
            }),
        );
    }
    for s in servers {
        s.kill().await;
    }
    let recorded = voters.history.snapshot();
    let (p50, max) = latency_p50_max(recorded.ballots.iter().map(|b| (b.invoked, b.returned)));
    let run = format!("{backend} votes");
    let summary = passed(history::check_votes(&recorded, &facts), &run, seed);
    eprintln!(
        "{backend} votes, {replicas} replica(s): {decisions} decisions, {votes} votes, \
         {cancels} cancels and {} reads in {elapsed:.1?}; vote latency p50 {p50} ms, \
         max {max} ms; {summary:?}",
        recorded.looks.len(),
    );
    voters.service.assert_no_unexpected();
    // The run had contention of every kind: votes counted and repeated, decisions resolved
    // by a quorum, by a veto, by a cancel and by expiry with votes counted, races lost to a
    // vote and to expiry, and reads that saw both states.
    let s = &summary;
    assert!(s.counted >= 20 && s.repeated >= 10, "{s:?}");
    assert!(s.quorum >= 2 && s.vetoed >= 3 && s.cancelled >= 3, "{s:?}");
    assert!(s.expired >= 5 && s.expired_with_answers >= 3, "{s:?}");
    assert!(s.conflicts >= 10 && s.gone >= 5, "{s:?}");
    assert!(s.reads_resolved >= 50, "{s:?}");
    assert!(s.reads - s.reads_resolved >= 20, "{s:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_postgres_replicas_count_each_vote_once_and_resolve_each_decision_once() {
    let Some(db) = common::db::fresh_pg_url().await else {
        return;
    };
    contended_votes_run(&db.url, "postgres", 2, 100).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_sqlite_server_counts_each_vote_once_and_resolves_each_decision_once() {
    let db = common::db::fresh_sqlite_url();
    contended_votes_run(&db.url, "sqlite", 1, 100).await;
}
