//! A whole stack per workspace: every workspace has a slot, each repository's named ports a
//! port of their own in the workspace's block, and every command run for the workspace is
//! told all of them (`GROVE_SLOT`, `GROVE_PORT_<REPO>_<NAME>`, `PORT`), so two workspaces
//! run the same stack side by side, each front end calling its own API.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use e2e::{TestEnv, repo_result, s};
use serde_json::Value;

/// The fixture's test server: listens on `$PORT` on the loopback address and answers
/// every request with what it was given (its name, its environment), and — for a server
/// told `upstream=VAR` — what the server on port `$VAR` answered. Only loopback is used.
const SERVER: &str = r#"
import http.server, json, os, sys, urllib.request
name = sys.argv[1]
upstream = sys.argv[2] if len(sys.argv) > 2 else None
given = {k: v for k, v in os.environ.items() if k == "PORT" or k.startswith("GROVE_")}
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = {"name": name, "env": given}
        if upstream:
            url = "http://127.0.0.1:%s/" % os.environ[upstream]
            body["upstream"] = json.load(urllib.request.urlopen(url, timeout=10))
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", int(os.environ["PORT"])), Handler)
print(name, "listening on", os.environ["PORT"], flush=True)
server.serve_forever()
"#;

/// `repos/<repo>/.grove.toml` (in the main checkout, where grove reads it).
fn grove_toml(env: &TestEnv, repo: &str, text: &str) {
    std::fs::write(env.repos.join(repo).join(".grove.toml"), text).unwrap();
    // Approved as the user would (`gw trust`), so that the commands it names may run.
    env.trust(repo).success();
}

/// A base for `[ports]` whose next `n` ports are free now: chosen by the system (an unused
/// port it would hand out) so that tests running at the same time do not meet.
fn free_base(n: u16) -> u16 {
    for _ in 0..200 {
        let probe = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let base = probe.local_addr().unwrap().port();
        drop(probe);
        if base.checked_add(n).is_none() {
            continue;
        }
        if (base..base + n).all(|p| TcpListener::bind((Ipv4Addr::LOCALHOST, p)).is_ok()) {
            return base;
        }
    }
    panic!("no {n} free ports in a row");
}

/// Points `[ports]` at a free range with blocks of `block`, room for `slots` workspaces.
fn port_range(env: &TestEnv, block: u16, slots: u16) -> u16 {
    let base = free_base(block * slots);
    env.append_config(&format!("\n[ports]\nbase = {base}\nblock = {block}\n"));
    base
}

/// `GET /` on a loopback port, as a JSON value; `None` while nothing answers.
fn get(port: u16) -> Option<Value> {
    let mut stream = TcpStream::connect((Ipv4Addr::LOCALHOST, port)).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .ok()?;
    stream
        .write_all(b"GET / HTTP/1.0\r\nHost: localhost\r\n\r\n")
        .ok()?;
    let mut text = String::new();
    stream.read_to_string(&mut text).ok()?;
    let (_, body) = text.split_once("\r\n\r\n")?;
    serde_json::from_str(body).ok()
}

/// Waits until `port` answers (at most a minute), or panics with what `child` said.
fn wait_for(port: u16, what: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(v) = get(port) {
            return v;
        }
        assert!(Instant::now() < deadline, "{what} never answered on {port}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `gw run NAME --format json` started in the background.
fn start_run(env: &TestEnv, name: &str) -> Child {
    env.gw_cmd(&["run", name, "--format", "json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("gw run starts")
}

/// SIGTERM to a `gw run`, then its envelope.
fn stop_run(child: Child) -> (Value, String) {
    let pid = child.id().to_string();
    let status = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let v: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("one envelope ({e}):\n{stdout}\n{stderr}"));
    (v, stderr)
}

fn env_of(env: &TestEnv, args: &[&str]) -> Value {
    let mut full = vec!["env"];
    full.extend(args);
    full.extend(["--format", "json"]);
    env.gw(&full).success().envelope("env")["result"].clone()
}

fn port_of(envelope_result: &Value, repo: &str, name: &str) -> u16 {
    envelope_result["ports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["repo"] == repo && p["name"] == name)
        .unwrap_or_else(|| panic!("{repo}.{name} in {envelope_result:#}"))["port"]
        .as_u64()
        .unwrap() as u16
}

/// Two repositories, `api` and `web`, each with one named port and a `run` that starts the
/// fixture's server on it; `web`'s server calls the `api` of its own workspace through
/// `GROVE_PORT_API_HTTP`.
fn stack(env: &TestEnv) {
    let server = env.root.join("server.py");
    std::fs::write(&server, SERVER).unwrap();
    grove_toml(
        env,
        "api",
        &format!(
            "run = \"exec python3 '{}' api\"\n\n[ports]\nhttp = 8080\n",
            s(&server)
        ),
    );
    grove_toml(
        env,
        "web",
        &format!(
            "run = \"exec python3 '{}' web GROVE_PORT_API_HTTP\"\n\n[ports]\nhttp = 5173\n",
            s(&server)
        ),
    );
}

/// The acceptance scenario: two workspaces of the same two repositories run `gw run` at
/// once; each process listens on its own port and each `web` reaches its own `api`.
#[test]
fn two_workspaces_run_the_same_stack_side_by_side() {
    if !e2e::require("python3") {
        return;
    }
    let env = TestEnv::with_repos(&["api", "web"]);
    port_range(&env, 10, 2);
    stack(&env);
    env.gw(&["create", "one", "-b", "feat/one", "-r", "api,web"])
        .success();
    env.gw(&["create", "two", "-b", "feat/two", "-r", "api,web"])
        .success();
    let one = env_of(&env, &["one"]);
    let two = env_of(&env, &["two"]);
    assert_eq!(
        (one["slot"].as_u64(), two["slot"].as_u64()),
        (Some(0), Some(1))
    );
    let ports = [
        port_of(&one, "api", "http"),
        port_of(&one, "web", "http"),
        port_of(&two, "api", "http"),
        port_of(&two, "web", "http"),
    ];
    let mut distinct = ports.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), 4, "four ports, all different: {ports:?}");

    let runs = [start_run(&env, "one"), start_run(&env, "two")];
    let mut answers = Vec::new();
    for (ws, [api, web]) in [("one", [ports[0], ports[1]]), ("two", [ports[2], ports[3]])] {
        let api_says = wait_for(api, &format!("{ws}'s api"));
        let web_says = wait_for(web, &format!("{ws}'s web"));
        answers.push((ws, api, web, api_says, web_says));
    }
    let mut envelopes = Vec::new();
    for run in runs {
        envelopes.push(stop_run(run));
    }
    for (ws, api, web, api_says, web_says) in answers {
        // Each process was told its workspace and its own port.
        assert_eq!(api_says["name"], "api");
        assert_eq!(api_says["env"]["GROVE_WORKSPACE"], ws);
        assert_eq!(api_says["env"]["PORT"], api.to_string());
        assert_eq!(web_says["env"]["PORT"], web.to_string());
        assert_eq!(web_says["env"]["GROVE_WORKSPACE"], ws);
        // Every process knows every port of its stack …
        for said in [&api_says, &web_says] {
            assert_eq!(said["env"]["GROVE_PORT_API_HTTP"], api.to_string());
            assert_eq!(said["env"]["GROVE_PORT_WEB_HTTP"], web.to_string());
        }
        // … and web called the api of its own workspace.
        let upstream = &web_says["upstream"];
        assert_eq!(upstream["name"], "api", "{web_says:#}");
        assert_eq!(upstream["env"]["GROVE_WORKSPACE"], ws, "{web_says:#}");
        assert_eq!(upstream["env"]["PORT"], api.to_string());
    }
    for ((v, stderr), ws) in envelopes.iter().zip(["one", "two"]) {
        e2e::schema::validate("run", &v["result"]);
        // Stopped by SIGTERM: cancelled, with the result of each repository.
        assert_eq!(v["ok"], false, "{v:#}\n{stderr}");
        assert_eq!(v["error"]["code"], "CANCELLED", "{v:#}");
        assert_eq!(v["result"]["workspace"], ws);
        assert_eq!(v["result"]["stopped_by"], "signal");
        for repo in ["api", "web"] {
            assert_eq!(
                repo_result(&v["result"], repo)["outcome"],
                "stopped",
                "{v:#}"
            );
        }
        assert_eq!(v["result"]["port_count"], 2);
        assert!(stderr.contains("listening on"), "{stderr}");
    }
    // Nothing listens any more.
    for p in ports {
        assert!(
            TcpListener::bind((Ipv4Addr::LOCALHOST, p)).is_ok(),
            "port {p} still held after gw run"
        );
    }
}

/// Sixteen creates at once get sixteen different slots; a delete frees its slot and the
/// next create takes the smallest free one; a rename keeps the slot.
#[test]
fn slots_are_distinct_reused_smallest_first_and_kept_by_rename() {
    let env = TestEnv::with_repos(&["api"]);
    // All at once, each retried as an agent would while a lock is busy (TRANSIENT).
    std::thread::scope(|scope| {
        for i in 0..16 {
            let env = &env;
            scope.spawn(move || {
                let name = format!("ws-{i:02}");
                env.gw_retrying(&[
                    "create", &name, "-b", &name, "-r", "api", "--format", "json",
                ])
                .success();
            });
        }
    });
    let slots = |env: &TestEnv| -> Vec<(String, u64)> {
        env.state()
            .as_array()
            .unwrap()
            .iter()
            .map(|w| {
                let slot = w["slot"]
                    .as_u64()
                    .unwrap_or_else(|| panic!("a slot in {w:#}"));
                (w["name"].as_str().unwrap().to_string(), slot)
            })
            .collect()
    };
    let mut taken: Vec<u64> = slots(&env).into_iter().map(|(_, s)| s).collect();
    taken.sort_unstable();
    assert_eq!(taken, (0..16).collect::<Vec<u64>>(), "{:?}", slots(&env));
    env.assert_git_agrees_with_state();

    let slot_of = |env: &TestEnv, name: &str| {
        slots(env)
            .into_iter()
            .find(|(n, _)| n == name)
            .map(|(_, s)| s)
    };
    // Free 3 and 7: the next two creates take 3, then 7.
    let (a, b) = (
        slots(&env).into_iter().find(|(_, s)| *s == 3).unwrap().0,
        slots(&env).into_iter().find(|(_, s)| *s == 7).unwrap().0,
    );
    env.gw(&["delete", &b]).success();
    env.gw(&["delete", &a]).success();
    assert_eq!(slot_of(&env, &a), None);
    env.gw(&["create", "new-1", "-b", "new-1", "-r", "api"])
        .success();
    assert_eq!(slot_of(&env, "new-1"), Some(3));
    env.gw(&["create", "new-2", "-b", "new-2", "-r", "api"])
        .success();
    assert_eq!(slot_of(&env, "new-2"), Some(7));
    env.gw(&["create", "new-3", "-b", "new-3", "-r", "api"])
        .success();
    assert_eq!(slot_of(&env, "new-3"), Some(16));

    // A rename keeps the slot, and so the ports.
    grove_toml(&env, "api", "[ports]\nhttp = 8080\n");
    let before = env_of(&env, &["new-1"]);
    env.gw(&["rename", "new-1", "--to", "renamed"]).success();
    assert_eq!(slot_of(&env, "renamed"), Some(3));
    let after = env_of(&env, &["renamed"]);
    assert_eq!(after["ports"], before["ports"]);
    assert_eq!(after["env"]["GROVE_WORKSPACE"], "renamed");
    env.assert_git_agrees_with_state();
}

/// A port of the stack held by another process: `gw run` refuses with `PORT_IN_USE`,
/// names the holder, and starts nothing (not even `pre_run`).
#[test]
fn a_taken_port_refuses_gw_run_and_names_the_holder() {
    if !e2e::require("python3") {
        return;
    }
    let env = TestEnv::with_repos(&["api", "web"]);
    port_range(&env, 4, 1);
    let marks = env.root.join("started");
    grove_toml(
        &env,
        "api",
        &format!(
            "pre_run = \"echo pre >> '{m}'\"\nrun = \"echo api >> '{m}'\"\n\n[ports]\nhttp = 8080\nadmin = 8081\n",
            m = s(&marks)
        ),
    );
    grove_toml(
        &env,
        "web",
        &format!("run = \"echo web >> '{}'\"\n", s(&marks)),
    );
    env.gw(&["create", "w", "-b", "feat/w", "-r", "api,web"])
        .success();
    let admin = port_of(&env_of(&env, &["w"]), "api", "admin");

    // Someone else's server on api's admin port.
    let mut holder = std::process::Command::new("python3")
        .args([
            "-m",
            "http.server",
            "--bind",
            "127.0.0.1",
            &admin.to_string(),
        ])
        .current_dir(&env.root)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect((Ipv4Addr::LOCALHOST, admin)).is_err() {
        assert!(Instant::now() < deadline, "the holder never listened");
        std::thread::sleep(Duration::from_millis(50));
    }
    let before = env.snapshot();
    let run = env.gw(&["run", "w", "--format", "json"]);
    let refused = run.envelope("envelope");
    let listed = env.gw(&["list", "--ports", "--format", "json"]);
    let status = env.gw(&["status", "w", "--format", "json"]);
    holder.kill().unwrap();
    holder.wait().unwrap();

    assert_eq!(run.status, 4, "{run}");
    assert_eq!(refused["error"]["code"], "PORT_IN_USE", "{run}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("port {admin} (api's `admin`)"))
            && message.contains("nothing was started"),
        "{message}"
    );
    let taken = &refused["error"]["details"]["ports"][0];
    assert_eq!(taken["port"], admin);
    assert_eq!(taken["var"], "GROVE_PORT_API_ADMIN");
    if cfg!(target_os = "linux") {
        let who = &taken["holders"][0];
        assert_eq!(who["pid"], holder.id(), "{run}");
        assert!(
            who["command"].as_str().unwrap().contains("http.server"),
            "{run}"
        );
        assert!(
            message.contains(&format!("pid {}", holder.id())),
            "{message}"
        );
        assert!(refused["fix"].as_str().unwrap().contains("kill"), "{run}");
    }
    assert!(
        !marks.exists(),
        "something started: {:?}",
        std::fs::read_to_string(&marks)
    );
    env.assert_unchanged(&before);

    // list --ports and status saw it listening, and who.
    let listed = listed.success().envelope("list-ports");
    let w = &listed["result"]["workspaces"][0];
    assert_eq!(w["slot"], 0);
    let admin_row = w["ports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "admin")
        .unwrap();
    assert_eq!(admin_row["listening"], true);
    assert!(
        w["ports"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["name"] == "http" && p["listening"] == false)
    );
    let status = status.success().envelope("status");
    assert_eq!(status["result"]["port_count"], 2);
    assert_eq!(status["result"]["ports"][1]["listening"], true);

    // Once it is gone, the same run starts everything.
    let run = env
        .gw(&["run", "w", "--format", "json"])
        .success()
        .envelope("run");
    assert_eq!(repo_result(&run["result"], "api")["outcome"], "exited");
    let started = std::fs::read_to_string(&marks).unwrap();
    assert!(
        started.contains("pre") && started.contains("web"),
        "{started}"
    );
}

/// `gw env` in each format, parsed back the way its users read it: bash `eval`, a dotenv
/// parser, the JSON Schema. All three say the same, and the same as a hook is told.
#[test]
fn env_output_parses_back_in_every_format() {
    let env = TestEnv::with_repos(&["api", "web-ui"]);
    let base = port_range(&env, 10, 2);
    grove_toml(&env, "api", "[ports]\nhttp = 8080\ngrpc = 9090\n");
    grove_toml(&env, "web-ui", "[ports]\nhttp = 5173\n");
    let told = env.root.join("told");
    env.append_config(&format!(
        "\n[hooks]\npost_create = \"env | grep -E '^(GROVE_|PORT=)' | sort > '{}'\"\n",
        s(&told)
    ));
    // A name that needs quoting in every format; and a gw that inherited another
    // repository's variables (a shell that ran `eval "$(gw env)"` elsewhere): its hook
    // gets none of them.
    env.gw_env(
        &env.root,
        &["create", "it's $x", "-b", "feat/q", "-r", "api,web-ui"],
        &[
            ("GROVE_WORKSPACE", "elsewhere"),
            ("PORT", "1"),
            ("GROVE_PORT_STALE_HTTP", "9"),
            ("GROVE_REPO", "stale"),
            ("GROVE_WORKTREE", "/stale"),
        ],
    )
    .success();
    let ws = env.workspace_dir().join("it's $x");
    let web = ws.join("web-ui");

    let json = env_of(&env, &["it's $x", "-r", "web-ui"]);
    let vars: Vec<(String, String)> = json["env"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
        .collect();
    let get = |k: &str| -> String {
        vars.iter()
            .find(|(n, _)| n == k)
            .unwrap_or_else(|| panic!("{k} in {vars:?}"))
            .1
            .clone()
    };
    assert_eq!(get("GROVE_WORKSPACE"), "it's $x");
    assert_eq!(get("GROVE_SLOT"), "0");
    assert_eq!(get("GROVE_PORT_API_HTTP"), base.to_string());
    assert_eq!(get("GROVE_PORT_API_GRPC"), (base + 1).to_string());
    assert_eq!(get("GROVE_PORT_WEB_UI_HTTP"), (base + 2).to_string());
    assert_eq!(get("PORT"), (base + 2).to_string());
    assert_eq!(get("GROVE_REPO"), "web-ui");
    assert_eq!(get("GROVE_WORKTREE"), s(&web));

    // bash: eval the default (shell) output, from inside the worktree, where it picks
    // web-ui by itself.
    if e2e::require("bash") {
        let names: Vec<&str> = vars.iter().map(|(k, _)| k.as_str()).collect();
        let script = format!(
            "set -eu; eval \"$(gw env)\"; for v in {}; do printf '%s=%s\\0' \"$v\" \"${{!v}}\"; done",
            names.join(" ")
        );
        let run = env.shell("bash", &web, &script);
        assert_eq!(run.status, 0, "{run}");
        let got: Vec<(String, String)> = run
            .stdout
            .split('\0')
            .filter(|l| !l.is_empty())
            .map(|l| {
                let (k, v) = l.split_once('=').unwrap();
                (k.to_string(), v.to_string())
            })
            .collect();
        assert_eq!(got, vars, "{run}");
    }

    // dotenv: a dotenv parser reads the same variables back.
    let dotenv = env
        .gw(&["env", "it's $x", "-r", "web-ui", "--format", "dotenv"])
        .success();
    let parsed: Vec<(String, String)> = dotenvy::from_read_iter(dotenv.stdout.as_bytes())
        .map(|item| item.unwrap_or_else(|e| panic!("{e}:\n{}", dotenv.stdout)))
        .collect();
    assert_eq!(parsed, vars, "{}", dotenv.stdout);

    // A hook was told exactly these (the workspace as a whole: no repository, no PORT).
    let whole = env_of(&env, &["it's $x"]);
    let mut hook_saw: Vec<String> = std::fs::read_to_string(&told)
        .unwrap()
        .lines()
        // The grove directory's variables (GROVE_DIR, …) are not the workspace's.
        .filter(|l| {
            !["GROVE_DIR=", "GROVE_CONFIG=", "GROVE_STATE="]
                .iter()
                .any(|p| l.starts_with(p))
        })
        .map(str::to_string)
        .collect();
    hook_saw.sort();
    let mut expected: Vec<String> = whole["env"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap()))
        .collect();
    expected.sort();
    assert_eq!(hook_saw, expected);
    assert_eq!(whole["repo"], Value::Null);

    // A PORT of the user's own (no workspace exported beside it) is theirs: the hook of
    // the next workspace gets it as before.
    env.gw_env(
        &env.root,
        &["create", "own-port", "-b", "feat/own", "-r", "api"],
        &[("PORT", "4242")],
    )
    .success();
    let saw = std::fs::read_to_string(&told).unwrap();
    assert!(saw.lines().any(|l| l == "PORT=4242"), "{saw}");

    // `--format shell` is gw env's; other commands refuse it.
    let run = env.gw(&["list", "--format", "shell"]);
    assert_eq!(run.status, 2, "{run}");
    assert!(run.stderr.contains("only for `gw env`"), "{run}");
}

/// `{port.<repo>.<name>}`, `{slot}` and `{workspace}` in a `.grove.toml` command: setup
/// writes the front end's `.env.local` without a script; `gw run -- CMD` runs one command
/// in each repository with its own `PORT`.
#[test]
fn placeholders_in_setup_and_one_command_in_every_repository() {
    let env = TestEnv::with_repos(&["api", "web"]);
    let base = port_range(&env, 5, 1);
    grove_toml(&env, "api", "[ports]\nhttp = 8080\n");
    grove_toml(
        &env,
        "web",
        "setup = \"echo API_URL=http://localhost:{port.api.http} SLOT={slot} WS={workspace} > .env.local\"\n\n[ports]\nhttp = 5173\n",
    );
    env.gw(&["create", "w", "-b", "feat/w", "-r", "api,web"])
        .success();
    let written = std::fs::read_to_string(env.workspace_dir().join("w/web/.env.local")).unwrap();
    assert_eq!(
        written,
        format!("API_URL=http://localhost:{base} SLOT=0 WS=w\n")
    );

    let run = env
        .gw(&[
            "run",
            "w",
            "--format",
            "json",
            "--",
            "echo \"$GROVE_REPO:$PORT\"",
        ])
        .success();
    let v = run.envelope("run");
    assert_eq!(v["result"]["command"], "echo \"$GROVE_REPO:$PORT\"");
    for (repo, port) in [("api", base), ("web", base + 1)] {
        assert_eq!(repo_result(&v["result"], repo)["outcome"], "exited");
        assert!(run.stderr.contains(&format!("{repo}:{port}")), "{run}");
    }
    // Several arguments are a program and its arguments, passed as they are: no shell,
    // no placeholders (the user's own command line; its environment has the values).
    let run = env
        .gw(&[
            "run", "w", "-r", "web", "--", "printf", "<%s>", "a b", "$PORT", "{slot}",
        ])
        .success();
    assert!(run.stderr.contains("<a b><$PORT><{slot}>"), "{run}");

    // A placeholder naming no port fails the command that uses it, saying which exist.
    grove_toml(
        &env,
        "web",
        "run = \"echo {port.api.nope}\"\n[ports]\nhttp = 1\n",
    );
    let run = env.gw(&["run", "w", "--format", "json"]);
    assert_eq!(run.error_code(), "HOOK_FAILED", "{run}");
    let detail = repo_result(&run.json()["result"], "web")["detail"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        detail.contains("{port.api.nope}") && detail.contains("{port.api.http}"),
        "{detail}"
    );
}

/// Too many ports for `ports.block`: the commands that need the ports say so and how to
/// fix it; nothing else breaks.
#[test]
fn a_block_too_small_is_a_clear_error() {
    let env = TestEnv::with_repos(&["api"]);
    env.append_config("\n[ports]\nblock = 1\n");
    grove_toml(
        &env,
        "api",
        "run = \"true\"\n[ports]\nhttp = 1\nadmin = 2\n",
    );
    env.gw(&["create", "w", "-b", "feat/w", "-r", "api"])
        .success();
    for args in [&["env", "w"][..], &["run", "w"][..]] {
        let mut full = args.to_vec();
        full.extend(["--format", "json"]);
        let run = env.gw(&full);
        assert_eq!(run.error_code(), "CORRUPT_STATE", "{run}");
        let v = run.json();
        assert!(
            v["error"]["message"]
                .as_str()
                .unwrap()
                .contains("declares 2 ports (api: 2), more than `ports.block` = 1"),
            "{run}"
        );
        assert!(
            v["fix"].as_str().unwrap().contains("`ports.block` to 2"),
            "{run}"
        );
    }
    let status = env.gw(&["status", "w", "--format", "json"]).success();
    assert!(
        status.result()["unknown"]["ports"]
            .as_str()
            .unwrap()
            .contains("ports.block"),
        "{status}"
    );
}
