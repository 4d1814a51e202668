#!/bin/sh
# The orphan watchdog of one pi process (started by ./orphan-watchdog.ts): when pi dies, however it dies (SIGKILL,
# SIGINT, a crash), it ends the local servers pi had running, so none is left behind adopted by pid 1.
#
# pi holds the other end of stdin, a pipe; the kernel closes it when pi's process ends, and nothing else holds it.
# While pi lives this script does nothing but wait in `read` (no polling, no CPU). pi writes one line per change:
#   + g <pgid> <start>   watch a server's process group (<start>: its leader's start time from /proc, or -)
#   + p <pid> <start>    watch one process that left the group (same <start>)
#   - g <pgid>           stop watching (the server was shut down); likewise `- p <pid>`
#   + m <token>          pi's mark: every server runs with MCP_BRIDGE_OWNER=<token>-<n> in its environment, and
#                        what it starts inherits it, however it starts it (a double fork re-parented to pid 1)
#   - m <token>          forget the mark (pi ends the input on purpose, and may start servers under a new watchdog)
#   + q                  pi is quitting and has ended its servers' input: at end of input they get $1 seconds to
#                        exit on their own before SIGTERM, as pi's own close gives them (pi does not wait that long)
#   - q                  pi did not end after all (a new session started in the same process)
#   + f <path>           an empty file or directory made as a sandbox's mount point: removed at the end if still
#                        empty, once no other sandbox mounts on it (pi removes it when its sandboxes idle, which a
#                        killed pi never reaches); - f forgets
#   + t <path>           a sandboxed server's private temp directory: removed with what it holds at the end (pi
#                        removes it when the server ends, which a killed pi never reaches); - t forgets
# At end of input every watched target that is still the one pi meant, and every process of this user that carries
# the mark (Linux), gets SIGTERM; whatever is left after $1 seconds (default 2), or carries the mark by then, gets
# SIGKILL. Then the script exits. A group in which npm is installing a package for npx gets $2 seconds (default 30):
# npm rolls the install back on SIGTERM, and killed before it is done it leaves npx's copy of the package broken for
# every later start. pi ends the input itself, with nothing watched, once its last server is shut down.
#
# It runs in a session of its own (pi spawns it detached), so a terminal's Ctrl+C or hang-up, which reach pi's process
# group, do not reach it.

set -f
trap '' HUP INT
grace=${1:-2}
case $grace in '' | *[!0-9]*) grace=2 ;; esac
rollback=${2:-30}
case $rollback in '' | *[!0-9]*) rollback=30 ;; esac
targets=
mark=
quitting=
nl='
'
# A tab, written as it is (a command substitution would fork a copy of this script at its start).
tab='	'
# The mount points, one per line, newest first: a later sandbox makes its own inside an earlier one's directory.
paths=
# The temp directories, one per line.
trees=

# A pid pi may name: digits, no leading zero, at most 9 of them, above 1 (never `kill -1`, all our processes), not us.
valid_pid() {
  case $1 in '' | 0* | *[!0-9]* | ??????????*) return 1 ;; esac
  [ "$1" -gt 1 ] && [ "$1" != "$$" ]
}

# Sets `now` to the start time of process $1 (field 22 of /proc/<pid>/stat), or to nothing if it is not there.
start_of() {
  now=
  stat=
  { IFS= read -r stat <"/proc/$1/stat"; } 2>/dev/null || return 0
  # The command name, field 2, is in parentheses and may contain anything; the fields after the last ") " are plain.
  set -- ${stat##*) }
  [ $# -ge 20 ] && shift 19 && now=$1
}

# Whether target $1 ($2 = g or p, $3 = the start pi saw) is still the one pi meant, not a reused pid.
still_ours() {
  [ "$3" = - ] && return 0
  start_of "$1"
  if [ -n "$now" ]; then
    [ "$now" = "$3" ]
    return
  fi
  # The leader has exited. Its group may live on (a wrapper's background child), and a group id is not handed out
  # again while the group has members, so a live group is still the server's.
  [ "$2" = g ]
}

# Removes target $1 (<kind>:<pid>) from the list, whatever start it was given.
drop() {
  rest=
  for t in $targets; do
    case $t in "$1":*) ;; *) rest="$rest $t" ;; esac
  done
  targets=$rest
}

# Adds every process of this user whose environment has MCP_BRIDGE_OWNER=<mark>-<n> as a `p` target (Linux /proc). Its
# start time is read before and after its environment, so a pid reused meanwhile is not taken.
add_marked() {
  [ -n "$mark" ] || return 0
  pattern="MCP_BRIDGE_OWNER=$mark-[0-9]*"
  set +f
  # GNU and busybox grep read NUL-separated records (-z): one process scans the whole table. Otherwise every process of
  # this user is looked at one by one below.
  if printf 'a\0' | grep -qzx a 2>/dev/null; then
    found=$(grep -lzx -- "$pattern" /proc/[0-9]*/environ 2>/dev/null)
  else
    found=$(echo /proc/[0-9]*/environ)
  fi
  set -f
  for f in $found; do
    p=${f#/proc/}
    p=${p%/environ}
    valid_pid "$p" && [ -O "/proc/$p" ] || continue
    start_of "$p"
    s=$now
    [ -n "$s" ] && tr '\0' '\n' <"$f" 2>/dev/null | grep -qx -- "$pattern" || continue
    start_of "$p"
    [ "$now" = "$s" ] || continue
    drop "p:$p"
    targets="$targets p:$p:$s"
  done
}

while read -r op kind rest; do
  set -- $rest
  id=${1-}
  start=${2-}
  case $kind in
    g | p) ;;
    f | t)
      kept=
      IFS=$nl
      if [ "$kind" = f ]; then set -- $paths; else set -- $trees; fi
      for q; do [ "$q" = "$rest" ] || kept="$kept$q$nl"; done
      unset IFS
      # A temp directory is never the root nor a directory right below it.
      case $op:$kind:$rest in +:f:/?* | +:t:/?*/?*) kept="$rest$nl$kept" ;; esac
      if [ "$kind" = f ]; then paths=$kept; else trees=$kept; fi
      continue
      ;;
    q)
      if [ "$op" = + ]; then quitting=1; else quitting=; fi
      continue
      ;;
    m)
      # 32 hex digits, as pi makes it, so it is safe inside a grep pattern.
      case $op:$id in
        -:*) mark= ;;
        +:*[!0-9a-f]*) ;;
        +:*) [ ${#id} -eq 32 ] && mark=$id ;;
      esac
      continue
      ;;
    *) continue ;;
  esac
  valid_pid "$id" || continue
  case $op in
    -) drop "$kind:$id" ;;
    +)
      case $start in -) ;; '' | *[!0-9]*) continue ;; esac
      drop "$kind:$id"
      targets="$targets $kind:$id:$start"
      ;;
  esac
done

# Sets `victims` to what is still ours and alive: a group as -<pgid>, a process as <pid>.
collect() {
  victims=
  for t in $targets; do
    kind=${t%%:*}
    rest=${t#*:}
    id=${rest%%:*}
    start=${rest#*:}
    still_ours "$id" "$kind" "$start" || continue
    if [ "$kind" = g ]; then victim=-$id; else victim=$id; fi
    kill -0 "$victim" 2>/dev/null && victims="$victims $victim"
  done
}

# Sets `installing` if a watched group holds npm installing for npx, as ./process-tree.ts tells it (Linux, with a grep
# that reads NUL-separated records): a process titled `npm exec …`, and none in its group yet with
# npm_lifecycle_event=npx in its environment, which npm gives the package's program.
npm_installing() {
  installing=
  printf 'a\0' | grep -qzx a 2>/dev/null || return 0
  set +f
  npms=$(grep -las '^npm exec' /proc/[0-9]*/cmdline)
  programs=$(grep -lzx 'npm_lifecycle_event=npx' /proc/[0-9]*/environ 2>/dev/null)
  set -f
  for f in $npms; do
    group_of "${f%/cmdline}"
    case " $victims " in *" -$group "*) ;; *) continue ;; esac
    npm_group=$group
    for e in $programs; do
      group_of "${e%/environ}"
      [ "$group" = "$npm_group" ] && continue 2
    done
    installing=1
    return 0
  done
}

# Sets `group` to the process group of /proc/<pid> directory $1 (field 5 of its stat), or to nothing.
group_of() {
  group=
  stat=
  { IFS= read -r stat <"$1/stat"; } 2>/dev/null || return 0
  set -- ${stat##*) }
  group=$3
}

# Waits until none of $victims is alive, at most $1 seconds, in steps of 0.1 s (or of 1 s where `sleep` takes whole
# seconds only); `victims` keeps those still alive.
wait_victims() {
  step=0.1
  steps=$(($1 * 10))
  while [ "$steps" -gt 0 ]; do
    if ! sleep "$step" 2>/dev/null; then
      step=1
      steps=$((steps / 10))
      sleep 1
    fi
    steps=$((steps - 1))
    left=
    for v in $victims; do
      kill -0 "$v" 2>/dev/null && left="$left $v"
    done
    victims=$left
    [ -n "$victims" ] || break
  done
}

# The mount points (field 5 of /proc/<pid>/mountinfo, escaped as there) of every mount namespace but this one's, one a
# line: those of sandboxes still running, another pi's among them. Every process of another namespace is read: two of
# one may see it from different roots, and only one of them writes a mount as this one names it.
mounts_elsewhere() {
  own=$(stat -L -c %i /proc/self/ns/mnt 2>/dev/null) || return 0
  set +f
  set -- /proc/[0-9]*/ns/mnt
  set -f
  stat -L -c '%i %n' "$@" 2>/dev/null |
    awk -v own="$own" '$1 != own { sub(/ns\/mnt$/, "mountinfo", $2); print $2 }' |
    xargs cat 2>/dev/null | awk '{ print $5 }'
}

# Removes the mount points still empty (never through a symlink), once nothing of pi's sandboxes runs, and exits. One
# that another sandbox still mounts on is waited for: removed from outside that sandbox's mount namespace, it would stop
# being a mount point there (the kernel detaches the mount), and that server could then write the path it is denied.
# A sandbox of pi's own that is still ending goes within moments (bubblewrap's command a moment after bubblewrap);
# another pi's, in the same project, may run for hours, and is looked at every 5 s (for at most 12 hours).
leave() {
  IFS=$nl
  # Nothing else mounts on a server's own temp directory, and nothing of pi's runs in it any more.
  for q in $trees; do [ -L "$q" ] || rm -rf -- "$q"; done
  escaped=
  for q in $paths; do
    # mountinfo writes a backslash, a space and a tab in a path as octal escapes.
    escaped="$escaped$(printf '%s' "$q" | sed -e 's/\\/\\134/g' -e 's/ /\\040/g' -e "s/$tab/\\\\011/g")$nl"
  done
  tries=0
  while [ -n "$paths" ]; do
    elsewhere=$nl$(mounts_elsewhere)$nl
    set -- $escaped
    waiting=
    escaped=
    for q in $paths; do
      case $elsewhere in
        *"$nl$1$nl"*)
          waiting="$waiting$q$nl"
          escaped="$escaped$1$nl"
          ;;
        *) remove "$q" ;;
      esac
      shift
    done
    paths=$waiting
    [ -n "$paths" ] || break
    tries=$((tries + 1))
    if [ "$tries" -le 50 ]; then
      sleep 0.1 2>/dev/null || sleep 1
    elif [ "$tries" -le 8690 ]; then
      sleep 5
    else
      break
    fi
  done
  exit 0
}

# Removes $1 if it is still an empty file or directory; never through a symlink.
remove() {
  if [ -L "$1" ]; then
    :
  elif [ -f "$1" ]; then
    [ -s "$1" ] || rm -f -- "$1"
  elif [ -d "$1" ]; then
    rmdir -- "$1" 2>/dev/null
  fi
}

# pi is gone.
add_marked
collect
[ -n "$victims" ] || leave
npm_installing
if [ -n "$quitting" ] && [ -z "$installing" ]; then
  wait_victims "$grace"
  [ -n "$victims" ] || leave
fi
[ -n "$installing" ] && [ "$rollback" -gt "$grace" ] && grace=$rollback
for v in $victims; do kill -TERM "$v" 2>/dev/null; done
wait_victims "$grace"

# Twice: what is left, and what a marked process started in the meantime (say, to answer SIGTERM).
for round in 1 2; do
  add_marked
  collect
  for v in $victims; do kill -KILL "$v" 2>/dev/null; done
done
leave
