//! Sanitising: the only provider text that leaves the classifier is a short
//! excerpt with secrets and identities removed.
//!
//! Redacted: API keys (`sk-…`, `sk-ant-…`, `sk-proj-…`, `AIza…`, `gh?_…`,
//! `xai-…`, `gsk_…`, AWS access keys), masked key fragments (`****q7x2`),
//! bearer and basic credentials, JWTs, `key=value` secrets, URL query
//! strings, emails, org / user / project / account identifiers, UUIDs, long
//! digit runs (project numbers, account ids), colon-separated hex request
//! ids (`7F3A:2B1C44:20D5E68:…`), any long token that mixes letters and
//! digits (request ids, key tails), and identities by position: the value
//! of an identity field (`project_id: …`, `"account": …`, `User: …`), a
//! name with digits after an identity word (`project my-proj-4821`, `you
//! (devuser4821)`), the segment after a resource collection in a path
//! (`projects/<id>/`, `subscriptions/<id>/`, `resourceGroups/<id>/`,
//! `accounts/<id>/`…) and the account and resource of an ARN. Model names
//! like `claude-3-5-sonnet-20241022` survive because no part of them is a
//! long mixed token.

use std::borrow::Cow;

/// Longest excerpt, in characters.
pub const MAX_EXCERPT_CHARS: usize = 240;

/// Prefixes of org, user, project, account, session and customer ids.
const ID_PREFIXES: &[&[u8]] = &[
    b"org",
    b"user",
    b"proj",
    b"project",
    b"acct",
    b"account",
    b"team",
    b"ws",
    b"workspace",
    b"sess",
    b"session",
    b"cus",
];
/// Names whose value is a secret (`api_key=…`, `Authorization: …`).
const SECRET_NAMES: &[&[u8]] = &[
    b"api_key",
    b"api-key",
    b"apikey",
    b"secret",
    b"password",
    b"passwd",
    b"authorization",
    b"credential",
];

/// Redacts secrets and identifiers in `text`.
///
/// One pass over tokens (runs of bytes between whitespace, quotes, brackets,
/// commas and semicolons). A token is replaced whole when it is, or contains
/// after a `=` / `:` / `/`, a key (`sk-…`, `AIza…`, `gh?_…`, JWTs), a URL
/// query string, an email, a UUID, an org/user/project/account id with a
/// digit, a run of nine or more digits, or a long part mixing letters and
/// digits. The value after a secret name (`api_key=`, `Authorization:`,
/// `Bearer`, `API key provided:`) is replaced too.
pub fn redact(text: &str) -> String {
    match redact_cow(text) {
        Cow::Borrowed(s) => s.to_owned(),
        Cow::Owned(s) => s,
    }
}

/// Byte classes: token delimiters (whitespace, quotes, brackets, `,`, `;`,
/// `|`), ASCII digits, ASCII letters, and everything else. Tokens are
/// scanned once, collecting the classes they hold, so most tokens (plain
/// words) are judged without looking at their bytes again. `:` and `@`
/// are `OTHER` with a bit of their own: a token without them cannot be a
/// URL or an email, which then need no search.
const DELIM: u8 = 1;
const DIGIT: u8 = 2;
const ALPHA: u8 = 4;
const OTHER: u8 = 8;
const COLON: u8 = 16;
const AT: u8 = 32;
const SLASH: u8 = 64;
const STAR: u8 = 128;

static CLASS: [u8; 256] = {
    let mut t = [OTHER; 256];
    let d = b" \t\n\r\x0b\x0c\"'`()[]{}<>,;|";
    let mut i = 0;
    while i < d.len() {
        t[d[i] as usize] = DELIM;
        i += 1;
    }
    let mut c = 0;
    while c < 10 {
        t[(b'0' + c) as usize] = DIGIT;
        c += 1;
    }
    let mut c = 0;
    while c < 26 {
        t[(b'a' + c) as usize] = ALPHA;
        t[(b'A' + c) as usize] = ALPHA;
        c += 1;
    }
    t[b':' as usize] = OTHER | COLON;
    t[b'@' as usize] = OTHER | AT;
    t[b'/' as usize] = OTHER | SLASH;
    t[b'*' as usize] = OTHER | STAR;
    t
};

fn is_delim(c: u8) -> bool {
    CLASS[c as usize] == DELIM
}

/// The classes of the bytes of `t`.
fn classes(t: &[u8]) -> u8 {
    t.iter().fold(0, |k, &c| k | CLASS[c as usize])
}

fn redact_cow(text: &str) -> Cow<'_, str> {
    let b = text.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut expect_secret = false;
    let mut prev_key = false; // previous token was "key" (for "API key provided:")
                              // The previous token named an identity field (`project_id:`): its value goes.
    let mut expect_id = false;
    // The previous token was an identity word (`user`, `project`, `you`…):
    // a name with digits after it goes; after a resource word (not `you`),
    // a lower-case hyphenated name goes too (`project my-sample-project`:
    // GCP project ids, resource and user names).
    let mut prev_ident = false;
    let mut prev_resource = false;
    let mut i = 0;
    while i < b.len() {
        if is_delim(b[i]) {
            i += 1;
            continue;
        }
        let start = i;
        let mut kinds = 0;
        while i < b.len() {
            let k = CLASS[b[i] as usize];
            if k == DELIM {
                break;
            }
            kinds |= k;
            i += 1;
        }
        let tok = &b[start..i];
        if kinds == ALPHA && tok.len() < 5 && !expect_secret && !expect_id {
            // Most tokens are short words: too short to hide anything, to
            // name a secret or to introduce one (`key` only in `API key
            // provided:`; `user`, `org`, `team`, `you` before a name). The
            // general path below would conclude the same.
            prev_key = tok.eq_ignore_ascii_case(b"key");
            prev_ident = is_identity_word(tok);
            prev_resource = prev_ident && !tok.eq_ignore_ascii_case(b"you");
            continue;
        }
        if tok.len() < 4 && !expect_secret && !expect_id {
            // A token of one to three bytes (`:`, `429`, `v1.`): too short
            // to be replaced in any way or to name a secret or an identity
            // field; the general path below would only ask, past any
            // trailing sentence punctuation, whether it is `key` or an
            // identity word.
            let mut end = i;
            while end > start + 1 && matches!(b[end - 1], b'.' | b':' | b'!' | b'?') {
                end -= 1;
            }
            let core = &b[start..end];
            prev_key = core.eq_ignore_ascii_case(b"key");
            prev_ident = is_identity_word(core);
            prev_resource = prev_ident && !core.eq_ignore_ascii_case(b"you");
            continue;
        }
        if kinds == ALPHA && tok.len() < 32 && !expect_secret && !expect_id {
            // A longer word, letters only: nothing in it goes (it holds no
            // digit, separator or punctuation, and is shorter than an id of
            // letters), so only whether it introduces a value is asked,
            // as the general path below does.
            if tok.eq_ignore_ascii_case(b"bearer") || tok.eq_ignore_ascii_case(b"basic") {
                expect_secret = true;
            } else if next_is_separator(b, i) {
                if is_secret_name(tok) {
                    expect_secret = true;
                } else if is_identity_name(tok) {
                    expect_id = true;
                }
            }
            prev_key = false;
            prev_ident = is_identity_word(tok);
            prev_resource = prev_ident;
            continue;
        }
        // Keep trailing sentence punctuation outside the replaced span.
        let mut end = i;
        while end > start + 1 && matches!(b[end - 1], b'.' | b':' | b'!' | b'?') {
            end -= 1;
        }
        let core = &b[start..end];
        if end < i {
            kinds = classes(core);
        }
        let is_bearer = core.eq_ignore_ascii_case(b"bearer") || core.eq_ignore_ascii_case(b"basic");
        let is_sep = core == b":" || core == b"=";
        let replacement: Option<Cow<'static, str>> = if expect_secret && !is_bearer && !is_sep {
            expect_secret = false;
            Some(Cow::Borrowed("[redacted]"))
        } else if expect_id && !is_sep {
            expect_id = false;
            Some(Cow::Borrowed("[id]"))
        } else if prev_ident
            && (looks_like_name(core, kinds) || (prev_resource && is_hyphenated_name(core)))
        {
            Some(Cow::Borrowed("[id]"))
        } else if let Some(r) = (kinds & OTHER != 0).then(|| inline_secret(core)).flatten() {
            Some(Cow::Owned(r))
        } else if kinds & COLON != 0 && starts_with_ci(core, b"arn:") {
            redact_arn(core)
                .map(Cow::Owned)
                .or_else(|| classify_token(core, kinds).map(Cow::Borrowed))
        } else {
            match classify_token(core, kinds) {
                Some(r) => Some(Cow::Borrowed(r)),
                None => redact_by_position(core, kinds).map(Cow::Owned),
            }
        };
        // Does a secret's value follow? `name:`, `name=`, `"name": …`,
        // `Bearer …`, `API key provided: …`.
        let last = tok[tok.len() - 1];
        if is_bearer {
            expect_secret = true;
        } else if matches!(last, b':' | b'=') && tok.len() > 1 {
            let name = &tok[..tok.len() - 1];
            expect_secret |=
                is_secret_name(name) || (prev_key && tok.eq_ignore_ascii_case(b"provided:"));
            expect_id |= !expect_secret && is_identity_name(name);
        } else if !is_sep && core.len() >= 4 && next_is_separator(b, i) {
            // (`next_is_separator` before the names: it is cheap and rarely
            // true; names are at least four bytes.)
            if is_secret_name(core) {
                expect_secret = true;
            } else if is_identity_name(core) {
                expect_id = true;
            }
        }
        prev_key = core.eq_ignore_ascii_case(b"key");
        prev_ident = is_identity_word(core);
        prev_resource = prev_ident && !core.eq_ignore_ascii_case(b"you");
        if let Some(r) = replacement {
            let o = out.get_or_insert_with(|| String::with_capacity(text.len()));
            o.push_str(&text[copied..start]);
            o.push_str(&r);
            copied = end;
        }
    }
    match out {
        Some(mut o) => {
            o.push_str(&text[copied..]);
            Cow::Owned(o)
        }
        None => Cow::Borrowed(text),
    }
}

/// Words after which a name is an identity (`user dev-4821`, `project
/// my-proj-4821`, `you (devuser4821) have…`).
const IDENTITY_WORDS: &[&[u8]] = &[
    b"you",
    b"user",
    b"username",
    b"org",
    b"organization",
    b"organisation",
    b"team",
    b"project",
    b"account",
    b"tenant",
    b"workspace",
    b"folder",
    b"customer",
    b"subscription",
];

/// Per length, which of [`IDENTITY_WORDS`] have it (bit `k` for word `k`).
static IDENTITY_WORDS_BY_LEN: [u16; 16] = {
    let mut t = [0u16; 16];
    let mut k = 0;
    while k < IDENTITY_WORDS.len() {
        t[IDENTITY_WORDS[k].len()] |= 1 << k;
        k += 1;
    }
    t
};

fn is_identity_word(t: &[u8]) -> bool {
    // Called on most tokens: only the words of the token's length (three
    // at most) are compared.
    let Some(&(mut of_len)) = IDENTITY_WORDS_BY_LEN.get(t.len()) else {
        return false;
    };
    while of_len != 0 {
        if t.eq_ignore_ascii_case(IDENTITY_WORDS[of_len.trailing_zeros() as usize]) {
            return true;
        }
        of_len &= of_len - 1;
    }
    false
}

/// Field names whose value is an identity (`project_id`, `"account":`,
/// `tenantId=`, `User:`), compared without `_`, `-` and case.
const IDENTITY_NAMES: &[&[u8]] = &[
    b"project",
    b"projectid",
    b"projectnumber",
    b"projectname",
    b"account",
    b"accountid",
    b"accountname",
    b"tenant",
    b"tenantid",
    b"subscriptionid",
    b"user",
    b"userid",
    b"username",
    b"login",
    b"orgid",
    b"organization",
    b"organizationid",
    b"teamid",
    b"workspaceid",
    b"customerid",
    b"consumer",
    b"ownerid",
    b"principalid",
    b"email",
];

fn is_identity_name(t: &[u8]) -> bool {
    if t.len() < 4 || t.len() > 24 {
        return false;
    }
    let mut n = [0u8; 24];
    let mut k = 0;
    for &c in t {
        if c.is_ascii_alphanumeric() {
            n[k] = c.to_ascii_lowercase();
            k += 1;
        } else if c != b'_' && c != b'-' {
            return false;
        }
    }
    IDENTITY_NAMES.iter().any(|w| *w == &n[..k])
}

/// A name after an identity word: letters and digits together, or a run
/// of six or more digits and separators (`dev-user-4821`, `devuser4821`).
fn looks_like_name(t: &[u8], kinds: u8) -> bool {
    t.len() >= 4 && kinds & DIGIT != 0 && (kinds & ALPHA != 0 || t.len() >= 6)
}

/// `my-sample-project`, `rg-prod-west`: lower-case letters, digits and
/// hyphens with at least one hyphen, the shape of project ids and resource
/// names.
fn is_hyphenated_name(t: &[u8]) -> bool {
    (6..=63).contains(&t.len())
        && t[0].is_ascii_lowercase()
        && t[t.len() - 1] != b'-'
        && t.contains(&b'-')
        && t.iter()
            .all(|&c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
}

/// Resource collections whose next path segment is an identifier.
const COLLECTIONS: &[&[u8]] = &[
    b"projects",
    b"accounts",
    b"subscriptions",
    b"tenants",
    b"organizations",
    b"orgs",
    b"folders",
    b"resourcegroups",
    b"workspaces",
    b"users",
    b"teams",
    b"billingaccounts",
    b"customers",
];

/// Identities a token holds by position: the segment after a resource
/// collection in a path, the account and resource of an ARN, or the whole
/// token when it is a colon-separated hex request id. `None` when nothing
/// needs to go.
fn redact_by_position(t: &[u8], kinds: u8) -> Option<String> {
    if kinds & COLON != 0 && is_hex_request_id(t) {
        return Some("[id]".to_owned());
    }
    if kinds & STAR != 0 && is_masked_fragment(t) {
        return Some("[key]".to_owned());
    }
    if kinds & SLASH == 0 {
        return None;
    }
    let text = std::str::from_utf8(t).ok()?;
    let mut out = String::with_capacity(t.len());
    let mut changed = false;
    let mut after_collection = false;
    for (k, seg) in text.split('/').enumerate() {
        if k > 0 {
            out.push('/');
        }
        if after_collection && !seg.is_empty() {
            out.push_str("[id]");
            changed = true;
            after_collection = false;
            continue;
        }
        after_collection = COLLECTIONS
            .iter()
            .any(|c| seg.as_bytes().eq_ignore_ascii_case(c));
        out.push_str(seg);
    }
    changed.then_some(out)
}

/// `arn:partition:service:region:account:resource`: with an account, the
/// account and the resource go (AWS-owned resources have none and stay).
fn redact_arn(t: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(t).ok()?;
    let fields: Vec<&str> = text.splitn(6, ':').collect();
    if fields.len() < 6 || fields[4].is_empty() {
        return None;
    }
    Some(format!(
        "{}:{}:{}:{}:[id]:[id]",
        fields[0], fields[1], fields[2], fields[3]
    ))
}

/// Four or more `:`-separated groups of 3–12 hex digits (GitHub's request
/// ids: `7F3A:2B1C44:20D5E68:3C9AF10:6A1B2C3D`).
fn is_hex_request_id(t: &[u8]) -> bool {
    let mut groups = 0;
    for g in t.split(|&c| c == b':') {
        if !(3..=12).contains(&g.len()) || !g.iter().all(u8::is_ascii_hexdigit) {
            return false;
        }
        groups += 1;
    }
    groups >= 4
}

/// A masked key (`****q7x2`, `sk-…****…Kp2d`): three or more `*` next to
/// at least two letters or digits. (Markdown's `**bold**` has two.)
fn is_masked_fragment(t: &[u8]) -> bool {
    let stars = t.windows(3).any(|w| w == b"***");
    stars && t.iter().filter(|c| c.is_ascii_alphanumeric()).count() >= 2
}

/// The next non-delimiter byte after `i` (skipping quotes and spaces) is
/// `:` or `=`.
fn next_is_separator(b: &[u8], mut i: usize) -> bool {
    while i < b.len() && is_delim(b[i]) && b[i] != b'\n' {
        i += 1;
    }
    matches!(b.get(i), Some(b':' | b'='))
}

/// `name=value` or `name:value` in one token, where the name is a
/// secret's (`token=…`, `client_secret=…`, `OPENAI_API_KEY=…`): the name
/// stays, the value goes whatever it looks like — letters only too, which
/// no key pattern would catch.
fn inline_secret(t: &[u8]) -> Option<String> {
    let p = t.iter().position(|&c| c == b'=' || c == b':')?;
    if p == 0 || p + 1 >= t.len() || !is_secret_name(&t[..p]) {
        return None;
    }
    Some(format!("{}[redacted]", String::from_utf8_lossy(&t[..=p])))
}

fn is_secret_name(t: &[u8]) -> bool {
    if t.len() < 5 || t.len() > 64 {
        return false;
    }
    let ends_token = t.len() >= 5 && t[t.len() - 5..].eq_ignore_ascii_case(b"token");
    // A name can only start where its (lower-case) first letter stands.
    ends_token
        || t.iter().enumerate().any(|(k, &c)| {
            SECRET_START[c as usize]
                && SECRET_NAMES.iter().any(|n| {
                    n[0] == c.to_ascii_lowercase()
                        && t.len() - k >= n.len()
                        && t[k..k + n.len()].eq_ignore_ascii_case(n)
                })
        })
}

/// First letters of [`SECRET_NAMES`], either case.
static SECRET_START: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < SECRET_NAMES.len() {
        let c = SECRET_NAMES[i][0];
        t[c as usize] = true;
        t[c.to_ascii_uppercase() as usize] = true;
        i += 1;
    }
    t
};

/// What one token must become, if anything. `kinds` are its byte classes.
fn classify_token(t: &[u8], kinds: u8) -> Option<&'static str> {
    if t.len() < 4 {
        return None;
    }
    let (digit, alpha, other) = (kinds & DIGIT != 0, kinds & ALPHA != 0, kinds & OTHER != 0);
    // Plain words: nothing to hide unless absurdly long.
    if !digit && !other {
        return (t.len() >= 32).then_some("[id]");
    }
    if digit && t.len() >= 9 && longest_digit_run(t) >= 9 {
        return Some("[id]");
    }
    if other {
        let scheme = if kinds & COLON != 0 {
            memchr::memchr_iter(b':', t).find(|&i| t[i + 1..].starts_with(b"//"))
        } else {
            None
        };
        if let Some(p) = scheme {
            // URL: the query string and any user info go.
            if memchr::memchr(b'?', t).is_some() || memchr::memchr(b'@', &t[p + 3..]).is_some() {
                return Some("[url]");
            }
        } else if let Some(a) = (kinds & AT != 0).then(|| memchr::memchr(b'@', t)).flatten() {
            if a > 0 && memchr::memchr(b'.', &t[a + 1..]).is_some() {
                return Some("[email]");
            }
        }
        if t.len() >= 36 && t.iter().filter(|&&c| c == b'-').count() >= 4 && has_uuid(t) {
            return Some("[id]");
        }
    }
    // Sub-parts after `=`, `:` and `/` (`key=sk-…`, `ANTHROPIC_API_KEY:sk-…`).
    let mut parts = t.split(|&c| c == b'=' || c == b':' || c == b'/');
    // A prefixed id without a digit needs sixteen random letters after the
    // prefix: shorter parts without digits are not looked at again.
    let id_possible = |part: &[u8]| (digit || part.len() >= 18) && is_id_with_prefix(part);
    if parts.any(|part| part.len() >= 4 && (is_key(part) || id_possible(part))) {
        return Some(if is_id_like(t) { "[id]" } else { "[key]" });
    }
    (t.len() >= 16 && digit && alpha || t.len() >= 32)
        .then_some(())
        .filter(|_| has_mixed_part(t))
        .map(|_| "[id]")
}

fn longest_digit_run(t: &[u8]) -> usize {
    let (mut run, mut longest) = (0, 0);
    for c in t {
        run = if c.is_ascii_digit() { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    longest
}

/// Whether a token that matched is an id rather than a key (for the marker).
fn is_id_like(t: &[u8]) -> bool {
    t.split(|&c| c == b'=' || c == b':' || c == b'/')
        .any(is_id_with_prefix)
}

fn is_key(part: &[u8]) -> bool {
    match part[0].to_ascii_lowercase() {
        b'a' => {
            (starts_with_ci(part, b"aiza") && part.len() >= 8)
                || ((part.starts_with(b"AKIA") || part.starts_with(b"ASIA"))
                    && part.len() >= 16
                    && part
                        .iter()
                        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit()))
        }
        b's' | b'p' | b'r' => part.len() >= 8 && part[1..3].eq_ignore_ascii_case(b"k-"),
        b'g' => {
            part.len() >= 8
                && (starts_with_ci(part, b"github_pat_")
                    || starts_with_ci(part, b"gsk_")
                    || (part[1].eq_ignore_ascii_case(&b'h')
                        && b"pousr".contains(&part[2].to_ascii_lowercase())
                        && part[3] == b'_'))
        }
        b'x' => part.len() >= 8 && starts_with_ci(part, b"xai-"),
        b'y' => starts_with_ci(part, b"ya29."),
        b'e' => starts_with_ci(part, b"eyj") && part.contains(&b'.') && part.len() >= 12,
        _ => false,
    }
}

fn starts_with_ci(t: &[u8], p: &[u8]) -> bool {
    t.len() >= p.len() && t[..p.len()].eq_ignore_ascii_case(p)
}

/// `org-Zk4f…`, `user_8rTq…`, `proj_123`, `org-uVqpjtJiKqvVJMVfvpaounIh`: a
/// known prefix, a separator, and an alphanumeric value that is random
/// rather than a word: it has a digit, or it is long and its case changes
/// inside it (generated ids are often letters only; words and names like
/// `user-Agent` or `team-Platform` change case once at most).
fn is_id_with_prefix(part: &[u8]) -> bool {
    // A prefix is letters only, so it ends at the first separator (which the
    // id needs right after it); none is longer than 9 letters.
    let Some(sep) = part[..part.len().min(10)]
        .iter()
        .position(|&c| c == b'-' || c == b'_')
    else {
        return false;
    };
    ID_PREFIXES.iter().any(|p| {
        let value = part.get(p.len() + 1..).unwrap_or_default();
        p.len() == sep
            && starts_with_ci(part, p)
            && !value.is_empty()
            && value.iter().all(|c| c.is_ascii_alphanumeric())
            && (value.iter().any(u8::is_ascii_digit) || is_random_letters(value))
    })
}

/// Sixteen or more letters whose case changes at least four times
/// (`uVqpjtJiKqvVJMVfvpaounIh`): generated, not a word or a CamelCase name.
fn is_random_letters(v: &[u8]) -> bool {
    v.len() >= 16
        && v.windows(2)
            .filter(|w| w[0].is_ascii_lowercase() != w[1].is_ascii_lowercase())
            .count()
            >= 4
}

/// 8-4-4-4-12 hex groups anywhere in the token.
fn has_uuid(t: &[u8]) -> bool {
    let groups = [8usize, 4, 4, 4, 12];
    let mut i = 0;
    while i + 36 <= t.len() {
        let mut p = i;
        let ok = groups.iter().enumerate().all(|(g, &n)| {
            let run = t[p..p + n].iter().all(u8::is_ascii_hexdigit);
            p += n;
            let sep = g == 4 || t.get(p) == Some(&b'-');
            p += usize::from(g < 4);
            run && sep
        });
        if ok {
            return true;
        }
        i += 1;
    }
    false
}

/// A `-`/`_`-separated part of ≥ 16 characters with both a letter and a
/// digit, or of ≥ 32 characters: request ids, key tails, random account ids.
fn has_mixed_part(t: &[u8]) -> bool {
    if t.len() < 16 {
        return false;
    }
    t.split(|&c| !c.is_ascii_alphanumeric() && c != b'*')
        .any(|p| {
            p.len() >= 32
                || (p.len() >= 16
                    && p.iter().any(u8::is_ascii_digit)
                    && p.iter().any(u8::is_ascii_alphabetic))
        })
}

/// A bounded, single-line, redacted excerpt of `text`, centred near `focus`
/// (a byte offset where the decisive words start).
pub fn excerpt(text: &str, focus: usize) -> String {
    excerpt_around(text, || focus)
}

/// [`excerpt`] with the focus computed only when `text` is longer than the
/// excerpt's window (finding it may take a search).
pub fn excerpt_around(text: &str, focus: impl FnOnce() -> usize) -> String {
    let red = redact_cow(window(text, focus));
    // Most excerpts are one line of plain ASCII with nothing to collapse:
    // then the excerpt is the text, cut as the loop below would cut it.
    if super::matcher::scan::is_single_spaced(red.as_bytes()) {
        if red.len() < MAX_EXCERPT_CHARS {
            return red.into_owned();
        }
        return finish_cut(red[..MAX_EXCERPT_CHARS - 1].to_owned());
    }
    // Collapse whitespace and control characters to single spaces; cut at
    // MAX_EXCERPT_CHARS with an ellipsis.
    let b = red.as_bytes();
    let mut out = String::with_capacity(b.len().min(4 * MAX_EXCERPT_CHARS));
    let mut count = 0usize;
    let mut pending_space = false;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c < 0x80 {
            if c <= b' ' || c == 0x7f {
                pending_space = !out.is_empty();
                i += 1;
                continue;
            }
            // A run of visible ASCII: copy as much as fits at once.
            let start = i;
            i = super::matcher::scan::visible_run_end(b, i);
            let run = &red[start..i];
            if !push_bounded(&mut out, &mut count, &mut pending_space, run, run.len()) {
                return finish_cut(out);
            }
            continue;
        }
        let ch = red[i..].chars().next().unwrap_or(' ');
        let len = ch.len_utf8();
        if ch.is_whitespace() || ch.is_control() {
            pending_space = !out.is_empty();
        } else if !push_bounded(
            &mut out,
            &mut count,
            &mut pending_space,
            &red[i..i + len],
            1,
        ) {
            return finish_cut(out);
        }
        i += len;
    }
    out
}

/// Appends `s` (`chars` characters, after a pending space) while the excerpt
/// stays within MAX_EXCERPT_CHARS - 1 characters, which leaves room for the
/// ellipsis; false when it had to stop short.
fn push_bounded(
    out: &mut String,
    count: &mut usize,
    pending: &mut bool,
    s: &str,
    chars: usize,
) -> bool {
    let space = usize::from(std::mem::take(pending));
    let room = (MAX_EXCERPT_CHARS - 1).saturating_sub(*count);
    if space + chars <= room {
        if space == 1 {
            out.push(' ');
        }
        out.push_str(s);
        *count += space + chars;
        return true;
    }
    if space == 1 && room >= 1 {
        out.push(' ');
        *count += 1;
    }
    for ch in s.chars() {
        if *count >= MAX_EXCERPT_CHARS - 1 {
            break;
        }
        out.push(ch);
        *count += 1;
    }
    false
}

fn finish_cut(mut out: String) -> String {
    let t = out.trim_end().len();
    out.truncate(t);
    out.push('…');
    out
}

/// Picks at most ~320 bytes of `text` around `focus`, cut at whitespace so no
/// secret is split into an unrecognisable fragment at the edges.
fn window(text: &str, focus: impl FnOnce() -> usize) -> &str {
    const BEFORE: usize = 40;
    const AFTER: usize = 280;
    if text.len() <= BEFORE + AFTER {
        return text;
    }
    let mut focus = focus().min(text.len());
    while focus > 0 && !text.is_char_boundary(focus) {
        focus -= 1;
    }
    let mut start = focus.saturating_sub(BEFORE);
    while start > 0 && !text.is_char_boundary(start) {
        start -= 1;
    }
    if start > 0 {
        // Begin after the nearest whitespace at or before `start` (or at the focus).
        start = match text.as_bytes()[start..focus]
            .iter()
            .position(u8::is_ascii_whitespace)
        {
            Some(off) => start + off + 1,
            None => focus,
        };
    }
    let mut end = (focus + AFTER).min(text.len());
    while end < text.len() && !text.is_char_boundary(end) {
        end += 1;
    }
    if end < text.len() {
        end = match text.as_bytes()[start..end]
            .iter()
            .rposition(u8::is_ascii_whitespace)
        {
            Some(off) if start + off > focus => start + off,
            _ => end,
        };
    }
    &text[start..end]
}

/// Sanitises an identifier echoed in a classification (provider or model id).
pub fn identifier(s: &str) -> String {
    let s = super::evidence::cut(s.trim(), 128).0;
    match redact_cow(s) {
        Cow::Borrowed(b) if !b.chars().any(char::is_control) => b.to_owned(),
        red => red.chars().filter(|c| !c.is_control()).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_and_ids_are_redacted() {
        let cases = [
            "Authorization: Bearer sk-proj-7Hk2Lm9Qx4Rt8Vz1Wb5Nc3Yd6Fg0JpaB2cD4eF6gH8iJ0kL2mN4oP6qR8sT0uV2wX4yZ6T3BlbkFJq",
            "ANTHROPIC_API_KEY: sk-ant-...Qm7TzR2kLw9XbN4cVh8E",
            "organization (3f9c2a71-5b8e-4d0c-9a6f-1e2b7c4d8f05) of 30,000",
            "in organization org-Zk4fQ9wLm2Rt7YxVb3NpHc8D on tokens",
            "organization `org_01kkzx6nksef6bhcgew8gyrq9e` service tier",
            "consumer 'project_number:418273659012'",
            "projects/177838813423",
            "user-8rTq2Lm5Wz9XcV4bN1kH7pJd",
            "mail me: dev.person@example.com",
            "https://x.example/v1?key=AIzaSyD-abcdefghijklmno&alt=sse",
            "token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.sig",
            "key=ghp_abcdefghijklmnopqrstuvwxyz0123",
            "Incorrect API key provided: xa***3f. You can obtain one",
            "the token: zq9",
            "Request ID: 7F3A:2B1C44:20D5E68:3C9AF10:6A1B2C3D",
            "you (devuser4821) have reached your session usage limit",
            "Project `my-proj-4821` is not allowed",
            "//aiplatform.googleapis.com/projects/my-cool-project/locations/us-central1/endpoints/x",
            "/subscriptions/0000/resourceGroups/rg-prod-west/providers/Microsoft.CognitiveServices/accounts/contoso-ai",
            "User: arn:aws:iam::210987654321:role/deploy-bot is not authorized",
            "{\"project_id\": \"acme-research\", \"tenantId\": \"contoso\"}",
            "Your api key: ****q7x2 is invalid",
            "Logged in as user: dev-user-4821",
            "Request too large for gpt-5 in organization org-uVqpjtJiKqvVJMVfvpaounIh on tokens",
            "403 Permission denied on resource project my-sample-project.",
        ];
        let leaks = [
            "7Hk2Lm9Qx4Rt8Vz1Wb5Nc3Yd6Fg0J",
            "Qm7TzR2kLw9XbN4cVh8E",
            "3f9c2a71-5b8e-4d0c-9a6f-1e2b7c4d8f05",
            "Zk4fQ9wLm2Rt7YxVb3NpHc8D",
            "01kkzx6nksef6bhcgew8gyrq9e",
            "418273659012",
            "177838813423",
            "8rTq2Lm5Wz9XcV4bN1kH7pJd",
            "dev.person@example.com",
            "AIzaSyD",
            "eyJhbGciOiJIUzI1NiJ9",
            "ghp_abcdefghijklmnopqrstuvwxyz0123",
            "xa***3f",
            "zq9",
            "2B1C44:20D5E68",
            "devuser4821",
            "my-proj-4821",
            "my-cool-project",
            "rg-prod-west",
            "210987654321",
            "acme-research",
            "q7x2",
            "dev-user-4821",
            "uVqpjtJiKqvVJMVfvpaounIh",
            "my-sample-project",
        ];
        for (c, leak) in cases.iter().zip(leaks) {
            let r = redact(c);
            assert!(!r.contains(leak), "{c} -> {r}");
        }
    }

    #[test]
    fn letters_only_values_of_secret_names_are_redacted() {
        for (text, leak, kept) in [
            (
                "failed: token=abcdefghijklmnop",
                "abcdefghijklmnop",
                "token=[redacted]",
            ),
            (
                "client_secret=hunterhunterhunter rejected",
                "hunterhunterhunter",
                "client_secret=[redacted]",
            ),
            (
                "OPENAI_API_KEY=abcdefghijklmnopqrstuvwxyz unset",
                "abcdefghijklmnopqrstuvwxyz",
                "OPENAI_API_KEY=[redacted]",
            ),
            (
                "refresh_token:QwErTyUiOp is expired",
                "QwErTyUiOp",
                "refresh_token:[redacted]",
            ),
            ("GITHUB_TOKEN=short", "short", "GITHUB_TOKEN=[redacted]"),
        ] {
            let r = redact(text);
            assert!(!r.contains(leak), "{text} -> {r}");
            assert!(r.contains(kept), "{text} -> {r}");
        }
        // Names that are not a secret's keep their value.
        assert_eq!(redact("model=opus retries=3"), "model=opus retries=3");
    }

    #[test]
    fn id_prefixes_are_short_words() {
        // `is_id_with_prefix` finds a prefix's end at the first separator
        // within the first ten bytes.
        assert!(ID_PREFIXES
            .iter()
            .all(|p| (2..=9).contains(&p.len()) && p.iter().all(u8::is_ascii_lowercase)));
    }

    #[test]
    fn identities_by_position() {
        assert_eq!(
            redact("projects/my-cool-project/locations/us-central1"),
            "projects/[id]/locations/us-central1"
        );
        assert_eq!(
            redact("arn:aws:iam::210987654321:role/deploy-bot"),
            "arn:aws:iam::[id]:[id]"
        );
        assert_eq!(
            redact("arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-5-sonnet"),
            "arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-5-sonnet"
        );
        assert_eq!(
            redact("\"tenantId\": \"contoso\""),
            "\"tenantId\": \"[id]\""
        );
        // Plain words after identity words stay; markdown bold stays.
        assert_eq!(
            redact("your account is not active"),
            "your account is not active"
        );
        assert_eq!(
            redact("**You have run out of usage**"),
            "**You have run out of usage**"
        );
        assert_eq!(redact("resets at 11:59:58 UTC"), "resets at 11:59:58 UTC");
        // A prefixed word is not an id; a prefixed random value is.
        assert_eq!(redact("the user-Agent header"), "the user-Agent header");
        assert_eq!(redact("in org-uVqpjtJiKqvVJMVfvpaounIh on"), "in [id] on");
    }

    #[test]
    fn model_names_survive() {
        for m in [
            "claude-3-5-sonnet-20241022",
            "gpt-4o-mini-2024-07-18",
            "gemini-2.5-pro",
            "anthropic.claude-3-5-sonnet-20240620-v1:0",
        ] {
            assert_eq!(redact(m), m);
        }
    }

    #[test]
    fn excerpts_are_bounded_single_line() {
        let long = "word ".repeat(500);
        let e = excerpt(&long, 1000);
        assert!(e.chars().count() <= MAX_EXCERPT_CHARS);
        assert!(!e.contains('\n'));
        let e = excerpt("a\n\n b\tc", 0);
        assert_eq!(e, "a b c");
    }
}
