//! `gw shell-init`: a shell function named `gw` that changes directory after `gw go` and
//! `gw create`, which a child process cannot do for its parent shell.

use serde::Serialize;

use crate::error::{Error, Result};

/// The shells grove can integrate with.
pub const SHELLS: &[&str] = &["bash", "zsh", "fish", "nu"];

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ShellInitReport {
    pub shell: String,
    pub script: String,
}

/// The wrapper for `shell` (`bash`, `zsh`, `fish` or `nu`; `nushell` is accepted too).
pub fn shell_init(shell: &str) -> Result<ShellInitReport> {
    let (name, script) = match shell {
        "bash" => ("bash", POSIX),
        "zsh" => ("zsh", POSIX),
        "fish" => ("fish", FISH),
        "nu" | "nushell" => {
            let completer = NU_COMPLETER
                .replace("VAR", "COMPLETE")
                .replace("NAME", "gw")
                .replace("COMPLETER", "\"gw\"");
            return Ok(ShellInitReport {
                shell: "nu".to_string(),
                script: NU.replace("NU_COMPLETER", &completer),
            });
        }
        other => {
            return Err(Error::usage(format!("unsupported shell `{other}`"))
                .with_fix(format!("Name one of: {}", SHELLS.join(", "))));
        }
    };
    Ok(ShellInitReport {
        shell: name.to_string(),
        script: script.to_string(),
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
  case "$1" in
    go)
      local __gw_out __gw_rc
      __gw_out="$(command gw "$@")"
      __gw_rc=$?
      if [ "$__gw_rc" -eq 0 ] && [ -d "$__gw_out" ]; then
        cd "$__gw_out" || return
      elif [ -n "$__gw_out" ]; then
        printf '%s\n' "$__gw_out"
      fi
      return "$__gw_rc"
      ;;
    create)
      local __gw_cd __gw_rc __gw_dest
      __gw_cd="$(mktemp "${TMPDIR:-/tmp}/.grove_cd.XXXXXX")" || { command gw "$@"; return; }
      GROVE_CD_FILE="$__gw_cd" command gw "$@"
      __gw_rc=$?
      if [ "$__gw_rc" -eq 0 ] && [ -s "$__gw_cd" ]; then
        __gw_dest="$(cat "$__gw_cd")"
        [ -d "$__gw_dest" ] && cd "$__gw_dest"
      fi
      rm -f "$__gw_cd"
      return "$__gw_rc"
      ;;
    *)
      command gw "$@"
      ;;
  esac
}
"#;

const FISH: &str = r#"# grove shell integration: gw shell-init fish | source
function gw --wraps gw --description 'grove workspaces'
    switch "$argv[1]"
        case go
            set -l out (command gw $argv | string collect)
            set -l rc $pipestatus[1]
            if test $rc -eq 0; and test -d "$out"
                cd "$out"
            else if test -n "$out"
                printf '%s\n' "$out"
            end
            return $rc
        case create
            set -l tmp (set -q TMPDIR; and echo $TMPDIR; or echo /tmp)
            set -l cdfile (mktemp "$tmp/.grove_cd.XXXXXX")
            GROVE_CD_FILE=$cdfile command gw $argv
            set -l rc $status
            if test $rc -eq 0; and test -s "$cdfile"
                set -l dest (cat "$cdfile")
                test -d "$dest"; and cd "$dest"
            end
            rm -f "$cdfile"
            return $rc
        case '*'
            command gw $argv
    end
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
    if ($args | is-not-empty) and ($args | first) == "go" {
        let out = (^gw ...$args | str trim)
        if ($out | is-not-empty) and ($out | path exists) and (($out | path type) == "dir") {
            cd $out
        } else if ($out | is-not-empty) {
            print $out
        }
    } else if ($args | is-not-empty) and ($args | first) == "create" {
        let cdfile = (^mktemp ($env.TMPDIR? | default "/tmp" | path join ".grove_cd.XXXXXX") | str trim)
        try {
            with-env { GROVE_CD_FILE: $cdfile } { ^gw ...$args }
        } catch { |err|
            rm -f $cdfile
            error make { msg: $err.msg }
        }
        let dest = (open --raw $cdfile | str trim)
        rm -f $cdfile
        if ($dest | is-not-empty) and ($dest | path exists) { cd $dest }
    } else {
        ^gw ...$args
    }
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
