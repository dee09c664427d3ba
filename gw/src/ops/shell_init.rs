//! `gw shell-init`: a shell function named `gw` that changes the shell's directory, which a
//! child process cannot do for its parent shell: into the workspace after `gw go` and
//! `gw create`, and out of a directory a command removed or moved (`delete`, `rename`,
//! `remove-repo`, `prune`, …) to one that exists.
//!
//! The function runs the commands of [`MOVES_SHELL`] (the first word after gw's global
//! options) with `GROVE_CD_FILE` (a temporary file, where gw writes the directory the shell
//! should go to), `GROVE_RETURN_DIR` (where the shell was before `gw go` or `gw create` took
//! it into a workspace) and, in bash and zsh, `GROVE_SUBSHELL` (the function runs in a
//! subshell, whose cd is lost: gw says where to go instead); every other command runs as
//! it is. No process gw starts inherits them (`env::SHELL_INTEGRATION`). To wrap another
//! command, add it to [`MOVES_SHELL`]: each shell's script is made from that list.

use serde::Serialize;

use crate::error::{Error, Result};

/// The shells grove can integrate with.
pub const SHELLS: &[&str] = &["bash", "zsh", "fish", "nu"];

/// The commands that may change the shell's directory: they take it into a workspace
/// (`go`, `create`), or remove or move the directory it may stand in (the others; `ws` for
/// `gw ws delete`, `apply` for a plan of any of them, `restore` and `undo` for what they
/// put back where a workspace was, `trash` for `gw trash empty`). One line per command.
pub const MOVES_SHELL: &[&str] = &[
    "go",
    "create",
    "delete",
    "rm",
    "ws",
    "rename",
    "remove-repo",
    "prune",
    "apply",
    "restore",
    "undo",
    "trash",
];

/// gw's global options that take a value as the next word (`--format json`; the
/// `--format=json` form is one word): the wrapper skips them, and the other words that start
/// with `-`, to find the command (`gw -v --color never delete X` is a `delete`). The CLI's
/// tests check this list against the grammar.
pub const GLOBAL_VALUED: &[&str] = &["--format", "--color"];

/// The commands that take the shell into a workspace: where it was is remembered, to
/// return to when that workspace is deleted.
const ENTERS: &[&str] = &["go", "create"];

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ShellInitReport {
    pub shell: String,
    pub script: String,
}

/// The wrapper for `shell` (`bash`, `zsh`, `fish` or `nu`; `nushell` is accepted too).
pub fn shell_init(shell: &str) -> Result<ShellInitReport> {
    let (name, script) = match shell {
        "bash" | "zsh" => (shell, POSIX.replace("COMMANDS", &MOVES_SHELL.join("|"))),
        "fish" => (shell, FISH.replace("COMMANDS", &MOVES_SHELL.join(" "))),
        "nu" | "nushell" => {
            let completer = NU_COMPLETER
                .replace("VAR", "COMPLETE")
                .replace("NAME", "gw")
                .replace("COMPLETER", "\"gw\"");
            let quoted = |list: &[&str]| {
                list.iter()
                    .map(|c| format!("\"{c}\""))
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            let script = NU
                .replace("NU_COMPLETER", &completer)
                .replace("COMMANDS", &quoted(MOVES_SHELL))
                .replace("ENTERS", &quoted(ENTERS))
                .replace("VALUED", &quoted(GLOBAL_VALUED));
            ("nu", script)
        }
        other => {
            return Err(Error::usage(format!("unsupported shell `{other}`"))
                .with_fix(format!("Name one of: {}", SHELLS.join(", "))));
        }
    };
    let script = script
        .replace("VALUED_POSIX", &GLOBAL_VALUED.join("|"))
        .replace("VALUED_FISH", &GLOBAL_VALUED.join(" "));
    let script = script.replace("ENTERS_POSIX", &ENTERS.join("|"));
    let script = script.replace("ENTERS_FISH", &ENTERS.join(" "));
    Ok(ShellInitReport {
        shell: name.to_string(),
        script,
    })
}

/// The shell to use when none is given: the program that ran `gw` when it is a shell grove
/// knows (fish started from bash has `SHELL=/bin/bash`, but runs `gw shell-init | source`
/// itself), else the basename of `$SHELL`, else bash.
pub fn detect(parent: Option<&str>, shell_env: Option<&str>) -> String {
    let known = |name: &str| {
        let name = name.trim_start_matches('-');
        match name {
            "nushell" => Some("nu"),
            _ => SHELLS.iter().copied().find(|s| *s == name),
        }
    };
    parent
        .and_then(known)
        .or_else(|| shell_env.and_then(|s| s.rsplit('/').next()).and_then(known))
        .unwrap_or("bash")
        .to_string()
}

const POSIX: &str = r#"# grove shell integration: eval "$(gw shell-init)"
gw() {
  local __gw_cmd="" __gw_arg __gw_value="" __gw_cd __gw_rc __gw_dest __gw_sub
  # The command: the first word that is not a global option or its value.
  for __gw_arg in "$@"; do
    if [ -n "$__gw_value" ]; then __gw_value=""; continue; fi
    case "$__gw_arg" in
      VALUED_POSIX) __gw_value=1 ;;
      -*) ;;
      *) __gw_cmd="$__gw_arg"; break ;;
    esac
  done
  case "$__gw_cmd" in
    COMMANDS) ;;
    *) command gw "$@"; return ;;
  esac
  __gw_cd="$(mktemp "${TMPDIR:-/tmp}/.grove_cd.XXXXXX")" || { command gw "$@"; return; }
  # In a subshell (a bash pipeline, `$(...)`) the cd below is lost: gw then says where to go.
  __gw_sub=""
  if [ -n "${BASHPID:-}" ] && [ "$BASHPID" != "$$" ]; then __gw_sub=1; fi
  [ "${ZSH_SUBSHELL:-0}" = 0 ] || __gw_sub=1
  GROVE_CD_FILE="$__gw_cd" GROVE_RETURN_DIR="${__gw_return:-}" GROVE_SUBSHELL="$__gw_sub" \
    command gw "$@"
  __gw_rc=$?
  if [ -s "$__gw_cd" ]; then
    __gw_dest="$(cat "$__gw_cd")"
    if [ -d "$__gw_dest" ]; then
      case "$__gw_cmd" in ENTERS_POSIX) [ -d "$PWD" ] && __gw_return="$PWD" ;; esac
      cd "$__gw_dest" || :
    fi
  fi
  rm -f "$__gw_cd"
  return "$__gw_rc"
}
"#;

const FISH: &str = r#"# grove shell integration: gw shell-init fish | source
function gw --wraps gw --description 'grove workspaces'
    # The command: the first word that is not a global option or its value.
    set -l cmd ''
    set -l value 0
    for arg in $argv
        if test $value = 1
            set value 0
            continue
        end
        switch $arg
            case VALUED_FISH
                set value 1
            case '-*'
            case '*'
                set cmd $arg
                break
        end
    end
    if not contains -- "$cmd" COMMANDS
        command gw $argv
        return
    end
    set -l tmp (set -q TMPDIR; and echo $TMPDIR; or echo /tmp)
    set -l cdfile (mktemp "$tmp/.grove_cd.XXXXXX")
    or begin
        command gw $argv
        return
    end
    set -q __gw_return; or set -g __gw_return ''
    GROVE_CD_FILE=$cdfile GROVE_RETURN_DIR=$__gw_return command gw $argv
    set -l rc $status
    if test -s "$cdfile"
        set -l dest (cat "$cdfile")
        if test -d "$dest"
            if contains -- "$cmd" ENTERS_FISH; and test -d "$PWD"
                set -g __gw_return $PWD
            end
            cd "$dest"
        end
    end
    rm -f "$cdfile"
    return $rc
end
"#;

/// nushell's completer for `gw` (a template: `VAR`, `NAME`, `COMPLETER`): it hands the line
/// to `COMPLETE=nu gw -- WORDS…` and reads back one `value<TAB>description` per line. Part of
/// the nu integration, and of `gw completions nu`.
pub const NU_COMPLETER: &str = r#"def "nu-complete NAME" [context: string] {
    let words = ($context | str trim --right | split row -r '\s+')
    let words = if ($context | str ends-with " ") { $words | append "" } else { $words }
    with-env { VAR: "nu" } { run-external COMPLETER "--" ...$words }
    | lines
    | each {|line|
        let parts = ($line | split row "\t")
        if ($parts | length) > 1 {
            { value: ($parts | first), description: ($parts | get 1) }
        } else {
            { value: ($parts | first) }
        }
    }
}
"#;

const NU: &str = r#"# grove shell integration: gw shell-init nu | save -f ~/.grove.nu; source ~/.grove.nu
# (it completes workspace names, repositories and presets too)
NU_COMPLETER
def --env --wrapped gw [...args: string@"nu-complete gw"] {
    # The command: the first word that is not a global option or its value.
    mut cmd = ""
    mut value = false
    for arg in $args {
        if $value { $value = false; continue }
        if $arg in [VALUED] { $value = true; continue }
        if ($arg | str starts-with "-") { continue }
        $cmd = $arg
        break
    }
    let cmd = $cmd
    if not ($cmd in [COMMANDS]) {
        ^gw ...$args
        return
    }
    let tmp = ($env.TMPDIR? | default "/tmp")
    let cdfile = (^mktemp ($tmp | path join ".grove_cd.XXXXXX") | str trim)
    let here = $env.PWD
    let back = ($env.__GW_RETURN? | default "")
    let failed = try {
        with-env { GROVE_CD_FILE: $cdfile, GROVE_RETURN_DIR: $back } { ^gw ...$args }
        null
    } catch { |err| $err.msg }
    # nu refuses to run anything while $env.PWD is gone (the command may have removed it):
    # somewhere that exists first.
    cd $tmp
    let dest = (open --raw $cdfile | str trim)
    rm -f $cdfile
    if ($dest | is-not-empty) and ($dest | path exists) {
        if ($cmd in [ENTERS]) and ($here | path exists) {
            $env.__GW_RETURN = $here
        }
        cd $dest
    } else if ($here | path exists) {
        cd $here
    }
    if ($here | path exists) { $env.OLDPWD = $here }
    if $failed != null { error make { msg: $failed } }
}
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shell_defines_gw() {
        for s in SHELLS {
            let r = shell_init(s).unwrap();
            assert!(r.script.contains("GROVE_CD_FILE"), "{s}");
            // Made from the list: every command that moves the shell is in it.
            for c in MOVES_SHELL {
                assert!(r.script.contains(c), "{s}: {c}");
            }
            assert!(
                !r.script.contains("COMMANDS")
                    && !r.script.contains("ENTERS")
                    && !r.script.contains("VALUED"),
                "{s}"
            );
        }
        assert!(shell_init("tcsh").is_err());
        assert_eq!(detect(None, Some("/usr/bin/fish")), "fish");
        assert_eq!(detect(None, Some("/bin/sh")), "bash");
        assert_eq!(detect(None, None), "bash");
        // fish started from bash: the parent process says fish, $SHELL says bash.
        assert_eq!(detect(Some("fish"), Some("/bin/bash")), "fish");
        assert_eq!(detect(Some("-zsh"), Some("/bin/bash")), "zsh");
        assert_eq!(detect(Some("nu"), None), "nu");
        // Run from something that is not a shell (a terminal, a script runner): $SHELL.
        assert_eq!(detect(Some("python3"), Some("/usr/bin/zsh")), "zsh");
    }
}
