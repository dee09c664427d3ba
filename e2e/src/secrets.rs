//! A corpus of secret shapes, for the tests that prove grove never writes one: to
//! `grove.log`, to `gw bug-report`, in an error or warning, or in `--verbose` output.
//! Written from the formats the services publish, not from grove's list, so that a format
//! grove does not know fails a test.

/// One secret written somewhere: the text as grove might meet it, and the part of it that
/// must never be written.
pub struct Shape {
    pub text: String,
    pub secret: String,
}

fn shape(text: impl Into<String>, secret: impl Into<String>) -> Shape {
    Shape {
        text: text.into(),
        secret: secret.into(),
    }
}

/// A token body of `n` characters that looks random (letters and digits).
fn body(n: usize, seed: usize) -> String {
    const ALPHABET: &[u8] = b"aZ3kQ9mX2pL7vB4nR8tY1cW6hJ5sD0fG";
    (0..n)
        .map(|i| ALPHABET[(i * 7 + seed * 13 + i * i) % ALPHABET.len()] as char)
        .collect()
}

/// Tokens by prefix, with the length of the random part after it.
const TOKENS: &[(&str, usize)] = &[
    // GitHub: classic personal, OAuth, user-to-server, server-to-server, refresh,
    // fine-grained personal.
    ("ghp_", 36),
    ("gho_", 36),
    ("ghu_", 36),
    ("ghs_", 36),
    ("ghr_", 36),
    ("github_pat_", 82),
    // GitLab: personal, deploy, runner, pipeline trigger, CI job, feed, OAuth secret.
    ("glpat-", 20),
    ("gldt-", 20),
    ("glrt-", 20),
    ("glptt-", 40),
    ("glcbt-", 20),
    ("glft-", 20),
    ("gloas-", 64),
    // Anthropic, OpenAI.
    ("sk-ant-api03-", 93),
    ("sk-ant-admin01-", 93),
    ("sk-proj-", 120),
    ("sk-svcacct-", 120),
    ("sk-admin-", 100),
    ("sk-", 48),
    // npm, PyPI, RubyGems, Hugging Face.
    ("npm_", 36),
    ("pypi-AgEIcHlwaS5vcmc", 150),
    ("rubygems_", 48),
    ("hf_", 34),
    // Slack.
    ("xoxb-", 50),
    ("xoxp-", 70),
    ("xoxa-2-", 50),
    ("xoxr-", 50),
    ("xoxs-", 50),
    ("xoxe.xoxp-1-", 100),
    ("xoxe-1-", 100),
    ("xapp-1-", 60),
    // AWS access key ids (permanent and temporary): 16 upper-case letters and digits.
    ("AKIA", 16),
    ("ASIA", 16),
    // Google API key, OAuth access token.
    ("AIza", 35),
    ("ya29.", 100),
    // Stripe.
    ("sk_live_", 99),
    ("sk_test_", 99),
    ("rk_live_", 99),
    ("rk_test_", 99),
    ("whsec_", 32),
    // DigitalOcean, Shopify, Linear, Postman, Doppler, Vault, Grafana, Databricks,
    // Atlassian, Heroku, SendGrid, age.
    ("dop_v1_", 64),
    ("doo_v1_", 64),
    ("dor_v1_", 64),
    ("shpat_", 32),
    ("shpss_", 32),
    ("shpca_", 32),
    ("shppa_", 32),
    ("lin_api_", 40),
    ("PMAK-", 59),
    ("dp.pt.", 43),
    ("dp.st.", 43),
    ("hvs.", 90),
    ("hvb.", 90),
    ("glc_", 80),
    ("glsa_", 40),
    ("dapi", 32),
    ("ATATT3xFfGF0", 180),
    ("HRKU-", 36),
    ("AGE-SECRET-KEY-1", 58),
];

/// More than a hundred shapes: every token format above (alone, and right after `-`,
/// `=`, a quote, a slash or a parenthesis), credentials in URLs (with the characters that
/// once ended redaction: `, ; ' ( ) < > "`), header-shaped secrets, settings whose name
/// says secret, a JSON Web Token, a SendGrid key and a private key.
pub fn shapes() -> Vec<Shape> {
    let mut v = Vec::new();
    for (n, (prefix, len)) in TOKENS.iter().enumerate() {
        let mut b = body(*len, n);
        if prefix.starts_with("AKIA") || prefix.starts_with("ASIA") {
            b = b.to_uppercase();
        }
        let token = format!("{prefix}{b}");
        v.push(shape(token.clone(), token));
    }
    let ghp = format!("ghp_{}", body(36, 100));
    for (before, after) in [
        ("-", ""),
        ("--token=", ""),
        ("'", "'"),
        ("x/", "/y"),
        ("(", ")"),
        ("_", ""),
    ] {
        v.push(shape(format!("{before}{ghp}{after}"), ghp.clone()));
    }
    let sg = format!("SG.{}.{}", body(22, 101), body(43, 102));
    v.push(shape(sg.clone(), sg));
    // URL userinfo, with the characters that once ended it.
    for (userinfo, secret) in [
        ("bot:tok;en99", "tok;en99"),
        ("bot:s3cr3t,pw", "s3cr3t,pw"),
        ("oauth2:abc;def123", "abc;def123"),
        ("u:p'a(s)s", "p'a(s)s"),
        ("u:pw<1>2", "pw<1>2"),
        ("u:pw\"q", "pw\"q"),
        ("u:p%40ss", "p%40ss"),
        ("u:pa@ss", "pa@ss"),
        ("x-access-token:v1.abcdef0123", "v1.abcdef0123"),
        ("deploy-key-4711", "deploy-key-4711"),
        (":only-a-password", "only-a-password"),
    ] {
        for url in [
            format!("https://{userinfo}@example.com/acme/api.git"),
            format!("ssh://{userinfo}@example.com:2222/acme/api.git"),
            format!("git+https://{userinfo}@example.com"),
        ] {
            v.push(shape(url, secret));
        }
    }
    // Header-shaped.
    let tok = body(32, 103);
    for text in [
        format!("Authorization: token {tok}"),
        format!("Authorization: Bearer {tok}"),
        format!("authorization: basic {tok}"),
        format!("Proxy-Authorization: {tok}"),
        format!("-H 'Authorization: token {tok}'"),
        format!("curl -H \"Authorization: Bearer {tok}\" https://api.example.com"),
        format!("{{\"Authorization\": \"token {tok}\"}}"),
        format!("http.extraHeader=Authorization: Basic {tok}"),
        format!("Bearer {tok}"),
    ] {
        v.push(shape(text, tok.clone()));
    }
    // Settings whose name says secret.
    let val = format!("v4l-{}", body(12, 104));
    for text in [
        format!("GITHUB_TOKEN={val}"),
        format!("NPM_TOKEN: {val}"),
        format!("api_key = \"{val}\""),
        format!("\"password\": \"{val}\""),
        format!("AWS_SECRET_ACCESS_KEY={val}"),
        format!("--password={val}"),
        format!("DB_PASSWORD='{val}'"),
        format!("client_secret={val}"),
        format!("https://example.com/cb?access_token={val}&x=1"),
        format!("export ANTHROPIC_API_KEY={val}"),
        format!("GITLAB_PAT={val}"),
        format!("pass={val}"),
    ] {
        v.push(shape(text, val.clone()));
    }
    // A JSON Web Token and a private key.
    let jwt = format!(
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ{}.{}",
        body(20, 105),
        body(43, 106)
    );
    v.push(shape(jwt.clone(), jwt));
    let key = body(64, 107);
    v.push(shape(
        format!("-----BEGIN OPENSSH PRIVATE KEY-----\n{key}\n-----END OPENSSH PRIVATE KEY-----"),
        key,
    ));
    v
}
